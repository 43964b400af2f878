package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// TestRunSimLegacyMlnx runs the workloads on the sim device behind
// MLNX_OFED's legacy layer (--sim-semantics legacy-mlnx), one thread per
// process as that model needs: exact counts, no error, registrant process;
// more threads per process are bad input, refused with the advice.
func TestRunSimLegacyMlnx(t *testing.T) {
	judgesNoTime(t)
	// 10 iterations over 2 QPs, 2 processes of 1 thread.
	for _, tc := range []struct {
		workload string
		want     map[string]int64
	}{
		{"lifecycle", map[string]int64{"create": 20, "unreg_last": 20}},
		{"steady", map[string]int64{"reg": 40, "unreg": 40}},
		{"churn", map[string]int64{"create": 40, "unreg_last": 40}},
		{"storm", nil},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := []string{"run", "--sim-semantics", "legacy-mlnx", "--workload", tc.workload, "--procs", "2", "--threads", "1",
				"--quiet", "--out", out}
			if tc.workload != "storm" {
				args = append(args, "--qps", "2", "--iterations", "10", "--warmup", "0s")
			}
			if code, stdout, stderr := runEngine(t, args...); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "ok" || r.Environment.Device == nil || r.Environment.Device.Registrant != "process" || r.Environment.Device.Semantics != "legacy-mlnx" {
				t.Fatalf("status %q (%s), device %v", r.Status, r.Error, r.Environment.Device)
			}
			for kind, o := range r.Ops {
				if o.Errors != 0 {
					t.Errorf("%s: %d errors", kind, o.Errors)
				}
			}
			for kind, want := range tc.want {
				if got := int64(r.Ops[kind].Count); got != want {
					t.Errorf("%s: count %d, want %d", kind, got, want)
				}
			}
			if tc.workload == "storm" && (r.Ops["reg"].Count == 0 || r.Ops["unreg"].Count+r.Ops["unreg_last"].Count != r.Ops["create"].Count+r.Ops["reg"].Count) {
				t.Errorf("storm: create %d reg %d unreg %d unreg_last %d: every registration must be undone once", r.Ops["create"].Count,
					r.Ops["reg"].Count, r.Ops["unreg"].Count, r.Ops["unreg_last"].Count)
			}
		})
	}
	t.Run("threads/sharded", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		if code, stdout, stderr := runEngine(t, "run", "--sim-semantics", "legacy-mlnx", "--workload", "sharded", "--procs", "2",
			"--threads", "2", "--qps", "2", "--iterations", "10", "--warmup", "0s", "--quiet", "--out", out); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if o := r.Ops["reg"]; r.Status != "ok" || o.Count != 80 || o.Errors != 0 {
			t.Errorf("status %q, reg count %d errors %d: want ok, 80, 0", r.Status, o.Count, o.Errors)
		}
	})
	t.Run("threads-refused", func(t *testing.T) {
		code, _, stderr := runEngine(t, "run", "--sim-semantics", "legacy-mlnx", "--workload", "steady", "--procs", "2",
			"--threads", "2", "--iterations", "10", "--out", filepath.Join(t.TempDir(), "run"))
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || len(lines) != 1 || !strings.Contains(stderr, "--threads 1 --procs 4") {
			t.Errorf("exit %d, stderr %q: want 2 and one line with --threads 1 --procs 4", code, stderr)
		}
	})
}
