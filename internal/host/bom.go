package host

// A result's bill of materials (results.BOM): the build, the kernel, the
// device's facts (read in verbs, where the device is read) and the CPUs
// the measuring threads ran on, read here.

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// sysDevices is where the kernel describes CPUs and NUMA nodes; tests
// point it at a tree of their own.
var sysDevices = "/sys/devices/system"

// buildRevision, set at link time (make does), is the full revision for
// builds without Go's VCS stamping.
var buildRevision string

// newBOM is the bill of materials but for the CPUs the threads ran on,
// which only the finished run knows (PlaceCPUs).
func newBOM(info verbs.DeviceInfo, kernelRelease string) *results.BOM {
	b := &results.BOM{XrcbenchVersion: Version(), XrcbenchRevision: revision(), KernelRelease: kernelRelease}
	if b.KernelRelease == "" {
		b.KernelRelease = results.Unreadable("uname")
	}
	if info.BOM != nil {
		b.Device = *info.BOM
	} else {
		// The sim and null providers have no adapter, driver or library.
		na := "n/a: " + cmpOr(info.Provider, "no device")
		b.Device = results.DeviceBOM{Driver: na, DriverVersion: na, Library: na, LibraryVersion: na, FWVer: na,
			BoardID: na, HCAType: na, LinkSpeed: na, LinkWidth: na, NUMANode: na}
	}
	b.CPU.Model = cpuModel()
	if b.CPU.Model == "" {
		b.CPU.Model = results.Unreadable("absent")
	}
	return b
}

func cmpOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// revision is the full VCS revision the binary was built from.
func revision() string {
	if buildRevision != "" {
		return buildRevision
	}
	rev, dirty, _ := vcsStamp()
	switch {
	case rev == "":
		return results.Unreadable("unstamped")
	case dirty:
		return rev + "+dirty"
	}
	return rev
}

// PlaceCPUs fills in the CPUs the threads ran on, whether they are on the
// device's NUMA node (numa, -1 unknown), and how those CPUs were set up.
// Unpinned threads could run on any CPU the run was allowed.
func PlaceCPUs(b *results.BOM, workers []results.Worker, numa int) (cpus []int) {
	if b == nil {
		return nil
	}
	for _, w := range workers {
		for _, t := range w.PerThread {
			if t.CPU >= 0 && !slices.Contains(cpus, t.CPU) {
				cpus = append(cpus, t.CPU)
			}
		}
	}
	slices.Sort(cpus)
	if len(cpus) > 0 {
		b.CPU.ThreadCPUs = "pinned: " + cpuList(cpus)
	} else {
		if cpus = AllowedCPUs(); cpus == nil {
			b.CPU.ThreadCPUs = results.Unreadable("affinity")
		} else {
			b.CPU.ThreadCPUs = "unpinned: any of " + cpuList(cpus)
		}
	}
	b.CPU.OnDeviceNode = onNode(cpus, numa, b.Device.NUMANode)
	b.CPU.Governor = governor(cpus)
	b.CPU.Boost = boost()
	b.CPU.SMT = readSys("cpu/smt/control")
	return cpus
}

// onNode says whether cpus are all on NUMA node numa; fact is the device
// BOM's own word for its node, which says why where numa is unknown.
func onNode(cpus []int, numa int, fact string) string {
	switch {
	case len(cpus) == 0:
		return results.Unreadable("affinity")
	case numa < 0 && strings.HasPrefix(fact, "n/a: "):
		return fact
	case numa < 0:
		return "unknown: the device's NUMA node is " + fact
	}
	list := readSys(fmt.Sprintf("node/node%d/cpulist", numa))
	node, err := parseCPUList(list)
	if err != nil {
		return list // its reason
	}
	var off []int
	for _, c := range cpus {
		if !slices.Contains(node, c) {
			off = append(off, c)
		}
	}
	if len(off) == 0 {
		return fmt.Sprintf("yes (node %d: CPUs %s)", numa, list)
	}
	return fmt.Sprintf("no: CPUs %s are not on node %d (its CPUs: %s)", cpuList(off), numa, list)
}

// governor is the frequency governor of cpus: one word when they agree,
// else each CPU's.
func governor(cpus []int) string {
	byGov := map[string][]int{}
	for _, c := range cpus {
		g := readSys(fmt.Sprintf("cpu/cpu%d/cpufreq/scaling_governor", c))
		byGov[g] = append(byGov[g], c)
	}
	if len(byGov) == 1 {
		for g := range byGov {
			return g
		}
	}
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(byGov)) {
		parts = append(parts, g+" on CPUs "+cpuList(byGov[g]))
	}
	return "mixed: " + strings.Join(parts, "; ")
}

// boost is whether the CPUs may run above their base frequency: cpufreq's
// boost switch (acpi-cpufreq, amd-pstate), else intel_pstate's no_turbo.
func boost() string {
	if v := readSys("cpu/cpufreq/boost"); !unreadable(v) {
		return onOff(v == "1")
	}
	v := readSys("cpu/intel_pstate/no_turbo")
	if unreadable(v) {
		return v
	}
	return onOff(v == "0")
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func unreadable(v string) bool { return strings.HasPrefix(v, "unreadable: ") }

// readSys is a file under sysDevices, trimmed, or why it is unreadable:
// a regular file of at most a page (sysfs attributes are), so that nothing
// else found there can block or exhaust the read.
func readSys(rel string) string {
	b, err := regfile.ReadFile(filepath.Join(sysDevices, rel), regfile.MaxAttr)
	switch {
	case errors.Is(err, regfile.ErrRefused):
		return results.Unreadable("refused")
	case errors.Is(err, os.ErrPermission):
		return results.Unreadable("permission")
	case errors.Is(err, os.ErrNotExist):
		return results.Unreadable("absent")
	case err != nil:
		return results.Unreadable("error")
	}
	if v := strings.TrimSpace(string(b)); v != "" {
		return v
	}
	return results.Unreadable("empty")
}

// parseCPUList reads the kernel's CPU list format: "0-3,8,10-11".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// cpuList writes sorted CPUs in the kernel's list format.
func cpuList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
