package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// fakeProcStat points procStat at a file holding lines.
func fakeProcStat(t *testing.T, lines ...string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := procStat
	procStat = p
	t.Cleanup(func() { procStat = old })
}

func TestReadCPUTicks(t *testing.T) {
	fakeProcStat(t,
		"cpu  100 0 50 800 50 0 0 0 0 0",
		"cpu0 10 0 5 80 5 0 0 0 0 0",
		"cpu1 90 1 45 720 45 0 0 0 0 0",
		"intr 12345",
		"cpufoo 1 2 3 4",
	)
	got := ReadCPUTicks()
	want := CPUTicks{0: {15, 100}, 1: {136, 901}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("readCPUTicks = %v, want %v", got, want)
	}
	procStat = filepath.Join(t.TempDir(), "absent")
	if ReadCPUTicks() != nil {
		t.Error("an unreadable /proc/stat gives ticks")
	}
}

// TestCPUCheck: each setup the check judges, from the facts the bill of
// materials records, and what it warns of; an unreadable fact warns of
// nothing.
func TestCPUCheck(t *testing.T) {
	smt := map[string]string{
		"cpu/cpu0/topology/thread_siblings_list": "0,2",
		"cpu/cpu1/topology/thread_siblings_list": "1,3",
	}
	smt4 := map[string]string{
		"cpu/cpu0/topology/thread_siblings_list": "0,2", "cpu/cpu2/topology/thread_siblings_list": "0,2",
		"cpu/cpu1/topology/thread_siblings_list": "1,3", "cpu/cpu3/topology/thread_siblings_list": "1,3",
	}
	idle := CPUTicks{0: {0, 0}, 1: {0, 0}, 2: {0, 0}, 3: {0, 0}}
	later := func(busy2, busy3 uint64) CPUTicks {
		return CPUTicks{0: {100, 100}, 1: {100, 100}, 2: {busy2, 100}, 3: {busy3, 100}}
	}
	tests := []struct {
		name          string
		gov, boost    string
		sys           map[string]string
		cpus          []int
		before, after CPUTicks
		siblings      string
		warn          []string // substrings, one per warning, in order
	}{
		{"quiet machine", "performance", "off", smt, []int{0, 1}, idle, later(2, 5),
			"CPU 2 (sibling of 0): 2% busy; CPU 3 (sibling of 1): 5% busy", nil},
		{"powersave", "powersave", "off", smt, []int{0, 1}, idle, later(0, 0),
			"CPU 2 (sibling of 0): 0% busy; CPU 3 (sibling of 1): 0% busy", []string{"governor powersave, not performance"}},
		{"boost on", "performance", "on", smt, []int{0, 1}, idle, later(0, 0),
			"CPU 2 (sibling of 0): 0% busy; CPU 3 (sibling of 1): 0% busy", []string{"turbo/boost is on"}},
		{"a busy sibling", "performance", "off", smt, []int{0, 1}, idle, later(3, 60),
			"CPU 2 (sibling of 0): 3% busy; CPU 3 (sibling of 1): 60% busy", []string{"SMT siblings of the measured CPUs were busy (CPU 3 (sibling of 1): 60% busy)"}},
		{"all three", "schedutil", "on", smt, []int{0, 1}, idle, later(50, 60),
			"CPU 2 (sibling of 0): 50% busy; CPU 3 (sibling of 1): 60% busy", []string{"governor schedutil", "turbo/boost", "CPU 2 (sibling of 0): 50% busy; CPU 3"}},
		{"siblings measured too", "performance", "off", smt4, []int{0, 1, 2, 3}, idle, later(90, 90),
			"none outside the measured CPUs", nil},
		{"a container: nothing readable", results.Unreadable("absent"), results.Unreadable("absent"), nil, []int{0}, idle, later(0, 0),
			results.Unreadable("topology"), nil},
		{"no /proc/stat", "performance", "off", smt, []int{0, 1}, nil, nil,
			results.Unreadable("proc-stat"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeSysDevices(t, tt.sys)
			b := &results.BOM{CPU: results.CPUBOM{Governor: tt.gov, Boost: tt.boost}}
			busy := CheckSiblings(b, tt.cpus, tt.before, tt.after)
			if b.CPU.SiblingsBusy != tt.siblings {
				t.Errorf("SiblingsBusy = %q, want %q", b.CPU.SiblingsBusy, tt.siblings)
			}
			ws := CPUCheckWarnings(b, busy)
			if len(ws) != len(tt.warn) {
				t.Fatalf("warnings %q, want %d like %q", ws, len(tt.warn), tt.warn)
			}
			for i, w := range ws {
				if !strings.Contains(w.Text, tt.warn[i]) || !strings.Contains(w.Text, "--no-cpu-check") || w.Kind != results.WarnCPUSetup {
					t.Errorf("warning %d = %q, want it to say %q and how to silence it", i, w, tt.warn[i])
				}
			}
		})
	}
}
