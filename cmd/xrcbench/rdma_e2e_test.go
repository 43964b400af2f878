//go:build rdma

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

var (
	rdmaBinOnce sync.Once
	rdmaBin     string
	rdmaBinErr  error
)

// rdmaBinary builds xrcbench with the rdma provider, once: run re-executes
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
		if out, err := exec.Command("go", "build", "-tags", "rdma", "-o", rdmaBin, ".").CombinedOutput(); err != nil {
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
	lib, err := filepath.Abs(filepath.Join("..", "..", "build", "fakeverbs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(lib, "libibverbs.so.1")); err != nil {
		t.Skipf("the libibverbs test double is not built (%s): run make fakeverbs (needs libibverbs-dev)", lib)
	}
	bin := rdmaBinary(t)
	tests := []struct{ provider, semantics string }{
		{"rdma", "upstream"},
		{"legacy", "legacy"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			state, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, "run", "--provider", tt.provider, "--device", "xbfake0", "--workload", "lifecycle",
				"--procs", "2", "--threads", "2", "--qps", "4", "--iterations", "25", "--warmup", "100ms", "--out", out)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "XRCBENCH_FAKEVERBS_DIR="+state,
				"XRCBENCH_FAKEVERBS_DEVICES=xbfake0")
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
			env := r.Environment
			if env.Provider != tt.provider || env.Device["name"] != "xbfake0" || env.Device["semantics"] != tt.semantics ||
				env.Device["library"] != "xrcbench fakeverbs (test double)" {
				t.Errorf("environment: provider %q device %v", env.Provider, env.Device)
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
