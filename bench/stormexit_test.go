package bench

import (
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// The method is recorded where figures are: netlink only when the kernel
// answered, so a note never sits beside a method that was not used.
func TestStormExitMethod(t *testing.T) {
	exit, err := workloads.Parse([]byte("name: s\ndescription: d\nmode: storm\nstorm:\n  nodes: 3\n  arrival: burst\n  teardown: exit\n"), "storm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		provider string
		exitNS   int64
		method   string
	}{
		{"rdma", 1234, "netlink"},
		{"rdma", -1, ""},
		{"legacy", 1234, "netlink"},
		{"sim", 1234, "sim_inspect"},
		{"null", -1, ""},
	} {
		cfg := Config{Provider: tt.provider, Workload: exit, Procs: 1, Threads: 2, Nodes: 3}
		reps := []*repOutcome{{index: 0, stormExitNS: tt.exitNS, stormExitNote: "not measurable here: why"}}
		var got *results.Storm = stormResult(reps, cfg)
		if got.TeardownMethod != tt.method {
			t.Errorf("%s, teardown %d: method %q, want %q", tt.provider, tt.exitNS, got.TeardownMethod, tt.method)
		}
		if (tt.exitNS >= 0) != (len(got.TeardownNS) == 1) {
			t.Errorf("%s, teardown %d: figures %v", tt.provider, tt.exitNS, got.TeardownNS)
		}
	}
}
