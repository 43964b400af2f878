package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// TestRunLegacyFlavorsThroughDouble runs lifecycle, steady, churn and the
// storm through the legacy provider bound to each build of the double:
// OFED 1.x with 2 threads per process (each its own registrant), MLNX_OFED
// with one thread per process (the process is the registrant), each with
// exact counts and no error; on MLNX_OFED more threads are refused before
// any worker starts, with the advice.
func TestRunLegacyFlavorsThroughDouble(t *testing.T) {
	judgesNoTime(t)
	bin := rdmaBinary(t)
	type flavor struct {
		name, lib, semantics, registrant string
		threads                          int
	}
	flavors := []flavor{
		{verbs.FlavorOFED1, testdouble.LibDir(t), "legacy", verbs.RegistrantContext, 2},
		{verbs.FlavorMlnxCompat, testdouble.MlnxLibDir(t), "legacy-mlnx", verbs.RegistrantProcess, 1},
	}
	// 25 iterations over 4 QPs, 2 processes.
	counts := func(w string, threads int) map[string]int64 {
		all := int64(25 * 4 * 2 * threads)
		switch w {
		case "lifecycle":
			return map[string]int64{"create": 100, "unreg_last": 100}
		case "steady":
			return map[string]int64{"reg": all, "unreg": all}
		case "churn":
			return map[string]int64{"create": all, "unreg_last": all}
		}
		return nil
	}
	for _, f := range flavors {
		for _, w := range []string{"lifecycle", "steady", "churn", "storm"} {
			t.Run(f.name+"/"+w, func(t *testing.T) {
				state, out := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "run")
				args := []string{"run", "--provider", "legacy", "--device", "xbfake0", "--workload", w, "--procs", "2",
					"--threads", strconv.Itoa(f.threads), "--quiet", "--out", out}
				if w != "storm" {
					args = append(args, "--qps", "4", "--iterations", "25", "--warmup", "100ms")
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = testdouble.Env(f.lib, state, "xbfake0")
				var e bytes.Buffer
				cmd.Stderr = &e
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, e.String())
				}
				r, err := results.Load(out)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != "ok" {
					t.Fatalf("status %q: %s", r.Status, r.Error)
				}
				for kind, o := range r.Ops {
					if o.Errors != 0 {
						t.Errorf("%s: %d errors", kind, o.Errors)
					}
				}
				for kind, want := range counts(w, f.threads) {
					if got := int64(r.Ops[kind].Count); got != want {
						t.Errorf("%s: count %d, want %d", kind, got, want)
					}
				}
				if w == "storm" && (r.Ops["create"].Count == 0 || r.Ops["reg"].Count == 0 ||
					r.Ops["unreg"].Count+r.Ops["unreg_last"].Count != r.Ops["create"].Count+r.Ops["reg"].Count) {
					t.Errorf("storm: create %d reg %d unreg %d unreg_last %d: every registration must be undone once", r.Ops["create"].Count,
						r.Ops["reg"].Count, r.Ops["unreg"].Count, r.Ops["unreg_last"].Count)
				}
				dev := r.Environment.Device
				if dev == nil || dev.Semantics != f.semantics || dev.LegacyFlavor != f.name || dev.Registrant != f.registrant {
					t.Errorf("device %v: want semantics %s, legacy_flavor %s, registrant %s", dev, f.semantics, f.name, f.registrant)
				}
				// Every report names them too; summary.md is written with the run.
				if md, err := os.ReadFile(filepath.Join(out, "summary.md")); err != nil ||
					!strings.Contains(string(md), "legacy_flavor "+f.name) || !strings.Contains(string(md), "registrant "+f.registrant) {
					t.Errorf("summary.md (%v) does not name legacy_flavor %s and registrant %s", err, f.name, f.registrant)
				}
				snap, err := verbs.InspectSim(filepath.Join(state, "xbfake0"))
				if err != nil {
					t.Fatal(err)
				}
				if len(snap.QPs) != 0 || snap.Registrants != 0 {
					t.Errorf("after the run the double holds %d QPs and %d registrants", len(snap.QPs), snap.Registrants)
				}
			})
		}
	}
	// Where no two threads of a process register one QP, threads are
	// fine on MLNX_OFED too: churn's and sharded's QPs are each thread's.
	for _, w := range []string{"churn", "sharded"} {
		t.Run("mlnx-compat/threads/"+w, func(t *testing.T) {
			state, out := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(bin, "run", "--provider", "legacy", "--device", "xbfake0", "--workload", w, "--procs", "2",
				"--threads", "2", "--qps", "4", "--iterations", "25", "--warmup", "100ms", "--quiet", "--out", out)
			cmd.Env = testdouble.Env(testdouble.MlnxLibDir(t), state, "xbfake0")
			var e bytes.Buffer
			cmd.Stderr = &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, e.String())
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]map[string]int64{"churn": {"create": 400, "unreg_last": 400}, "sharded": {"reg": 400, "unreg": 400}}[w]
			for kind, n := range want {
				if o := r.Ops[kind]; r.Status != "ok" || int64(o.Count) != n || o.Errors != 0 {
					t.Errorf("status %q, %s: count %d errors %d, want %d and 0", r.Status, kind, o.Count, o.Errors, n)
				}
			}
		})
	}
	t.Run("mlnx-compat/threads-refused", func(t *testing.T) {
		state, out := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(bin, "run", "--provider", "legacy", "--device", "xbfake0", "--workload", "steady", "--procs", "2",
			"--threads", "2", "--qps", "4", "--iterations", "25", "--warmup", "100ms", "--quiet", "--out", out)
		cmd.Env = testdouble.Env(testdouble.MlnxLibDir(t), state, "xbfake0")
		var e bytes.Buffer
		cmd.Stderr = &e
		err := cmd.Run()
		// A configuration the device cannot run: bad input, refused
		// before anything is written (it was exit 1 and a failed folder).
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("exit %v, want 2\nstderr:\n%s", err, e.String())
		}
		lines := strings.Split(strings.TrimSpace(e.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "--threads 1 --procs 4") || !strings.Contains(lines[0], "mlnx-compat") {
			t.Errorf("stderr %q: want one line with the advice --threads 1 --procs 4", e.String())
		}
		if _, err := os.Lstat(out); !os.IsNotExist(err) {
			t.Errorf("refused, yet %s exists (%v)", out, err)
		}
	})
}
