package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

var (
	rdmaBinOnce sync.Once
	rdmaBin     string
	rdmaBinErr  error
)

// rdmaBinary builds xrcbench, once: run re-executes
// its own binary as worker processes, and each must load the double.
func rdmaBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds xrcbench and runs worker processes")
	}
	rdmaBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xrcbench-rdma-bin-")
		if err != nil {
			rdmaBinErr = err
			return
		}
		rdmaBin = filepath.Join(dir, "xrcbench")
		if out, err := exec.Command("go", "build", "-o", rdmaBin, ".").CombinedOutput(); err != nil {
			rdmaBinErr = &buildError{err, out}
		}
	})
	if rdmaBinErr != nil {
		t.Fatal(rdmaBinErr)
	}
	return rdmaBin
}

// TestRunLifecycleThroughDouble runs the lifecycle workload with 2 worker
// processes x 2 threads through the rdma and legacy providers against the
// libibverbs test double: every process shares the domain and QPs through
// the double's sim device, and afterwards no QP is left in it.
func TestRunLifecycleThroughDouble(t *testing.T) {
	lib := testdouble.LibDir(t)
	bin := rdmaBinary(t)
	tests := []struct {
		provider, semantics string
		cost                string // XRCBENCH_FAKEVERBS_COST: the double's sim cost model
	}{
		{"rdma", "upstream", ""},
		{"legacy", "legacy", ""},
		// A known answer through the real API: the double makes the last
		// unreg (the destroy) cost 300us, and the harness must see it in
		// unreg_last and not in unreg.
		{"rdma", "upstream", "destroy=300us"},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.cost, func(t *testing.T) {
			state, out := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, "run", "--provider", tt.provider, "--device", "xbfake0", "--workload", "lifecycle",
				"--procs", "2", "--threads", "2", "--qps", "4", "--iterations", "25", "--warmup", "100ms", "--out", out)
			cmd.Env = append(testdouble.Env(lib, state, "xbfake0"), "XRCBENCH_FAKEVERBS_COST="+tt.cost)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, o.String(), e.String())
			}
			if !strings.Contains(o.String(), "unreg_last") {
				t.Errorf("summary lacks unreg_last:\n%s", o.String())
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "ok" {
				t.Fatalf("status %q: %s", r.Status, r.Error)
			}
			for kind, want := range map[string]int64{"create": 25 * 4, "unreg_last": 25 * 4} {
				if got := r.Ops[kind].Count; int64(got) != want || r.Ops[kind].Errors != 0 {
					t.Errorf("%s: count %d errors %d, want %d and 0", kind, got, r.Ops[kind].Errors, want)
				}
			}
			if r.Ops["reg"].Count == 0 || r.Ops["reg"].Errors != 0 || r.Ops["unreg"].Errors != 0 {
				t.Errorf("reg %+v unreg %+v", r.Ops["reg"], r.Ops["unreg"])
			}
			if len(r.Workers) != 2 {
				t.Errorf("%d worker processes, want 2", len(r.Workers))
			}
			if tt.cost != "" {
				// Generous bounds: a shared 2-core machine stretches the
				// top, never shortens a busy-wait.
				last, unreg := r.Ops["unreg_last"].NS, r.Ops["unreg"].NS
				if last.P50 < 300_000 || last.P50 > 3_000_000 || unreg.P50 >= 300_000 {
					t.Errorf("with destroy=300us: unreg_last p50 %dns (want 300us..3ms), unreg p50 %dns (want < 300us)",
						last.P50, unreg.P50)
				}
			}
			env := r.Environment
			if d := env.Device; env.Provider != tt.provider || d == nil || d.Name != "xbfake0" || d.Semantics != tt.semantics ||
				d.Library != "xrcbench fakeverbs (test double)" {
				t.Errorf("environment: provider %q device %+v", env.Provider, env.Device)
			}
			// Figures from the double are marked as such, for every report.
			if !env.Device.TestDouble || !slices.ContainsFunc(r.Warnings, func(w results.Warning) bool {
				return w.Kind == results.WarnTestDouble && strings.Contains(w.Text, "libibverbs test double") && strings.Contains(w.Text, "not RDMA hardware")
			}) {
				t.Errorf("not marked as a test-double run: device %+v, warnings %q", env.Device, r.Warnings)
			}
			// The firmware counters: the double is no mlx5, and the
			// result must say they were looked for and why they are absent.
			if fw := env.Firmware; fw == nil || !strings.HasPrefix(fw.NotReadable, "not readable: driver xrcbench_fake") || len(fw.Commands) != 0 {
				t.Errorf("firmware_commands %+v, want why the mlx5 counters are not readable", fw)
			}
			// An independent leak check: the double's own device state.
			snap, err := verbs.InspectSim(filepath.Join(state, "xbfake0"))
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.QPs) != 0 || snap.Registrants != 0 {
				t.Errorf("after the run the double holds %d QPs and %d registrants: %+v", len(snap.QPs), snap.Registrants, snap.QPs)
			}
		})
	}
}
