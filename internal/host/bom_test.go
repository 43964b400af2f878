package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
)

// fakeSysDevices lays out /sys/devices/system with the given files
// (relative path → content) and points sysDevices at it.
func fakeSysDevices(t *testing.T, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	for rel, v := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := sysDevices
	sysDevices = root
	t.Cleanup(func() { sysDevices = old })
}

func pinnedWorkers(cpus ...int) []results.Worker {
	var w results.Worker
	for i, c := range cpus {
		w.PerThread = append(w.PerThread, results.ThreadCounts{Thread: i, CPU: c})
	}
	return []results.Worker{w}
}

// TestPlaceCPUs: the CPUs the threads ran on, whether they are on the
// device's node, governor, boost and SMT, each read or its reason.
func TestPlaceCPUs(t *testing.T) {
	twoNodes := map[string]string{
		"node/node0/cpulist": "0-3", "node/node1/cpulist": "4-7",
		"cpu/cpu0/cpufreq/scaling_governor": "performance", "cpu/cpu1/cpufreq/scaling_governor": "performance",
		"cpu/cpu4/cpufreq/scaling_governor": "powersave",
		"cpu/cpufreq/boost":                 "0", "cpu/smt/control": "on",
	}
	tests := []struct {
		name                         string
		files                        map[string]string
		workers                      []results.Worker
		numa                         int
		numaFact                     string
		threads, on, gov, boost, smt string
	}{
		{"pinned on the device's node", twoNodes, pinnedWorkers(0, 1, 1), 0, "0",
			"pinned: 0-1", "yes (node 0: CPUs 0-3)", "performance", "off", "on"},
		{"pinned across nodes", twoNodes, pinnedWorkers(1, 4), 0, "0",
			"pinned: 1,4", "no: CPUs 4 are not on node 0 (its CPUs: 0-3)", "mixed: performance on CPUs 1; powersave on CPUs 4", "off", "on"},
		{"intel_pstate turbo, no cpufreq (a VM)", map[string]string{"cpu/intel_pstate/no_turbo": "0", "node/node1/cpulist": "4-7"},
			pinnedWorkers(5), 1, "1", "pinned: 5", "yes (node 1: CPUs 4-7)", results.Unreadable("absent"), "on", results.Unreadable("absent")},
		{"device without a NUMA node", twoNodes, pinnedWorkers(2), -1, results.Unreadable("none"),
			"pinned: 2", "unknown: the device's NUMA node is unreadable: none", "unreadable: absent", "off", "on"},
		{"sim", twoNodes, pinnedWorkers(0), -1, "n/a: sim", "pinned: 0", "n/a: sim", "performance", "off", "on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeSysDevices(t, tt.files)
			b := &results.BOM{Device: results.DeviceBOM{NUMANode: tt.numaFact}}
			PlaceCPUs(b, tt.workers, tt.numa)
			got := [5]string{b.CPU.ThreadCPUs, b.CPU.OnDeviceNode, b.CPU.Governor, b.CPU.Boost, b.CPU.SMT}
			if want := [5]string{tt.threads, tt.on, tt.gov, tt.boost, tt.smt}; got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
	// Unpinned threads ran anywhere the run was allowed.
	fakeSysDevices(t, twoNodes)
	b := &results.BOM{Device: results.DeviceBOM{NUMANode: "0"}}
	PlaceCPUs(b, []results.Worker{{PerThread: []results.ThreadCounts{{CPU: -1}}}}, 0)
	if !strings.HasPrefix(b.CPU.ThreadCPUs, "unpinned: any of ") || b.CPU.OnDeviceNode == "" {
		t.Errorf("unpinned: %+v", b.CPU)
	}
}

func TestCPUList(t *testing.T) {
	for _, s := range []string{"0", "0-3", "0-3,8,10-11"} {
		cpus, err := parseCPUList(s)
		if err != nil || cpuList(cpus) != s {
			t.Errorf("%q: %v, %v → %q", s, cpus, err, cpuList(cpus))
		}
	}
	for _, bad := range []string{"", "a", "3-1", "1-"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A CPU fact planted as a FIFO or a link to /dev/zero (issue 43, item 4)
// is "unreadable: refused", read neither blocking nor growing: sysfs
// attributes are regular files of at most a page.
func TestReadSysRefuses(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			const rel = "cpu/cpu0/cpufreq/scaling_governor"
			fakeSysDevices(t, map[string]string{rel: "performance", "cpu/smt/active": "0"})
			p := filepath.Join(sysDevices, rel)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			testenv.HostileFile(t, p, kind)
			got := make(chan string, 1)
			go func() { got <- readSys(rel) }()
			select {
			case v := <-got:
				if want := results.Unreadable("refused"); v != want {
					t.Errorf("readSys(%s) = %q, want %q", rel, v, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("readSys(%s): still reading after 10s", rel)
			}
			if v := readSys("cpu/smt/active"); v != "0" {
				t.Errorf("the fact beside it: %q, want 0", v)
			}
		})
	}
}
