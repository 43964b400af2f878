package host

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/workloads"
)

// Placement is where a run's measured threads may run (--pin).
type Placement string

const (
	// PinAuto, the default, binds a storm's ranks each to a CPU of its
	// own when they fit on the CPUs the run is allowed, NUMA-local to the
	// device first where its node is known, as MPI launchers bind ranks
	// (Open MPI to a core for 2 ranks or fewer, MVAPICH2 too): a storm
	// lasts too little for the scheduler to move a rank that landed on a
	// busy CPU, so unbound ranks time-slice one CPU by accident. Loop
	// and rounds workloads stay unbound, and so do ranks that outnumber
	// the CPUs (StartWarnings says so).
	PinAuto Placement = "auto"
	// PinCPU binds every thread, of any workload, to one CPU, in the
	// same order, round-robin when threads outnumber CPUs.
	PinCPU Placement = "cpu"
	// PinNone binds nothing: the scheduler places the threads.
	PinNone Placement = "none"
)

// ParsePlacement reads --pin's value. The flag was a boolean before
// placement was a choice, and its spellings still mean what they did:
// --pin (true) binds, --pin=false does not.
func ParsePlacement(s string) (Placement, error) {
	switch strings.ToLower(s) {
	case "", string(PinAuto):
		return PinAuto, nil
	case string(PinCPU), "true", "1":
		return PinCPU, nil
	case string(PinNone), "false", "0":
		return PinNone, nil
	}
	return "", fmt.Errorf("%q: want auto, cpu or none", s)
}

// ThreadCPUs is the CPU each of the run's threads is bound to, by global
// thread index, or nil when they are left unbound; allowed is the CPUs the
// run may use and local those of the device's NUMA node (nil: unknown).
func ThreadCPUs(p Placement, mode workloads.Mode, threads int, allowed, local []int) []int {
	order := cpuOrder(allowed, local)
	switch {
	case len(order) == 0 || threads <= 0:
		return nil
	case p == PinCPU:
	case p == PinNone, mode != workloads.StormMode, threads > len(order):
		return nil
	}
	out := make([]int, threads)
	for g := range out {
		out[g] = order[g%len(order)]
	}
	return out
}

// cpuOrder is the order threads take CPUs in: those on the device's NUMA
// node first, then the rest, and within each the first hardware thread of
// every core before its siblings, so two ranks share no core while there
// are cores to spare.
func cpuOrder(allowed, local []int) []int {
	rank := func(c int) int {
		r := 0
		if local != nil && !slices.Contains(local, c) {
			r += 2
		}
		if sib, err := parseCPUList(readSys(fmt.Sprintf("cpu/cpu%d/topology/thread_siblings_list", c))); err == nil && len(sib) > 0 && sib[0] != c {
			r++
		}
		return r
	}
	out := slices.Clone(allowed)
	slices.SortStableFunc(out, func(a, b int) int { return rank(a) - rank(b) })
	return out
}

// AllowedCPUs is the CPUs this process may run on.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// NodeCPUs is NUMA node numa's CPUs, nil when unknown (numa < 0, or no
// such node).
func NodeCPUs(numa int) []int {
	if numa < 0 {
		return nil
	}
	cpus, err := parseCPUList(readSys(fmt.Sprintf("node/node%d/cpulist", numa)))
	if err != nil {
		return nil
	}
	return cpus
}
