package host

// The CPU check, as perftest users know it (perftest warns when the
// frequency is scaled, -F silences it): a latency measured on a CPU that
// changes its clock, or beside a busy SMT sibling that shares its core's
// pipeline, moves with the machine, not with the device. The facts are
// the bill of materials' (PlaceCPUs); the check only judges them.

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/xrcbench/xrcbench/results"
)

// procStat is the kernel's per-CPU time accounting; tests point it at a
// file of their own.
var procStat = "/proc/stat"

// siblingBusyShare is the share of the run a measured CPU's SMT sibling
// may be busy before the check warns: above it, the sibling's work takes
// the core's execution units from the measured thread often enough to show
// in its percentiles.
const siblingBusyShare = 0.10

// CPUTicks are each CPU's busy and total time (clock ticks) from procStat.
type CPUTicks map[int][2]uint64

// ReadCPUTicks reads procStat; nil where it cannot be read, which the
// check then says.
func ReadCPUTicks() CPUTicks {
	b, err := os.ReadFile(procStat)
	if err != nil {
		return nil
	}
	t := CPUTicks{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		var total, idle uint64
		for i, s := range f[1:] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				break
			}
			total += v
			if i == 3 || i == 4 { // idle, iowait
				idle += v
			}
		}
		t[cpu] = [2]uint64{total - idle, total}
	}
	return t
}

// busyShare is the share of the time between before and after cpu was busy;
// false where either reading lacks it or no time passed.
func busyShare(before, after CPUTicks, cpu int) (float64, bool) {
	b, okb := before[cpu]
	a, oka := after[cpu]
	if !okb || !oka || a[1] <= b[1] || a[0] < b[0] {
		return 0, false
	}
	return float64(a[0]-b[0]) / float64(a[1]-b[1]), true
}

// smtSiblings are the SMT siblings of cpus that are not among them: the
// hardware threads sharing a core with a measured thread.
func smtSiblings(cpus []int) (map[int]int, error) {
	sib := map[int]int{} // sibling → the measured CPU it shares a core with
	for _, c := range cpus {
		v := readSys(fmt.Sprintf("cpu/cpu%d/topology/thread_siblings_list", c))
		if unreadable(v) {
			return nil, fmt.Errorf("CPU %d's siblings are %s", c, v)
		}
		list, err := parseCPUList(v)
		if err != nil {
			return nil, fmt.Errorf("CPU %d's siblings: %v", c, err)
		}
		for _, s := range list {
			if !slices.Contains(cpus, s) {
				sib[s] = c
			}
		}
	}
	return sib, nil
}

// CheckSiblings records in b how busy the measured CPUs' SMT siblings
// were between before and after, and says which were busier than
// siblingBusyShare.
func CheckSiblings(b *results.BOM, cpus []int, before, after CPUTicks) (busy []string) {
	if b == nil {
		return nil
	}
	sib, err := smtSiblings(cpus)
	switch {
	case err != nil:
		b.CPU.SiblingsBusy = results.Unreadable("topology")
		return nil
	case len(sib) == 0:
		b.CPU.SiblingsBusy = "none outside the measured CPUs"
		return nil
	case before == nil || after == nil:
		b.CPU.SiblingsBusy = results.Unreadable("proc-stat")
		return nil
	}
	var rows []string
	for _, s := range slices.Sorted(maps.Keys(sib)) {
		share, ok := busyShare(before, after, s)
		if !ok {
			rows = append(rows, fmt.Sprintf("CPU %d (sibling of %d): unknown", s, sib[s]))
			continue
		}
		r := fmt.Sprintf("CPU %d (sibling of %d): %.0f%% busy", s, sib[s], 100*share)
		rows = append(rows, r)
		if share > siblingBusyShare {
			busy = append(busy, r)
		}
	}
	b.CPU.SiblingsBusy = strings.Join(rows, "; ")
	return busy
}

// CPUCheckWarnings judges the CPUs' setup the bill of materials records:
// a governor other than performance, turbo/boost on, a busy SMT sibling.
// A fact that could not be read is recorded as such and warns of nothing:
// most containers and VMs show no cpufreq at all, and a warning there
// would be about the machine's privacy, not its clock.
func CPUCheckWarnings(b *results.BOM, busySiblings []string) []results.Warning {
	if b == nil {
		return nil
	}
	var out []results.Warning
	if g := b.CPU.Governor; !unreadable(g) && g != "performance" {
		out = append(out, results.NewWarning(results.WarnCPUSetup, results.SeverityWarning, 0, "", fmt.Sprintf("CPU frequency governor %s, not performance", g)).WithMeans("the clock changes under the measurement; set it with cpupower frequency-set -g performance, or silence this check with --no-cpu-check"))
	}
	if b.CPU.Boost == "on" {
		out = append(out, results.NewWarning(results.WarnCPUSetup, results.SeverityWarning, 0, "", "turbo/boost is on").WithMeans("the clock depends on temperature and on the other cores' load, so repeated runs differ; turn it off (cpufreq boost or intel_pstate no_turbo), or silence this check with --no-cpu-check"))
	}
	if len(busySiblings) > 0 {
		out = append(out, results.NewWarning(results.WarnCPUSetup, results.SeverityWarning, 0, "", fmt.Sprintf("SMT siblings of the measured CPUs were busy (%s)", strings.Join(busySiblings, "; "))).WithMeans("they share the core's pipeline with a measured thread; keep them idle (or leave SMT off) while measuring, or silence this check with --no-cpu-check"))
	}
	return out
}
