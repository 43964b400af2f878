package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/loadavg"
	"github.com/xrcbench/xrcbench/internal/testdouble"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// diskDir is a new folder on a disk file system, removed after the test:
// under the system's temporary folder, or where that is a memory one
// (tmpfs, ramfs), under the package's own folder. A state folder in
// memory would hide what a file written in it costs.
func diskDir(t *testing.T) string {
	t.Helper()
	for _, parent := range []string{os.TempDir(), "."} {
		var st unix.Statfs_t
		if unix.Statfs(parent, &st) != nil || st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
			continue
		}
		dir, err := os.MkdirTemp(parent, "xrcbench-disk-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	t.Skip("neither the temporary folder nor the package's is on a disk file system: a state folder in memory cannot show the cost of a file written in it")
	return ""
}

// Known answer (issue 44 item 3): at --qp-state rtr the creator's move to
// RTR, timed as modify, costs what the device was told it costs and no
// more: p50 within +5% of the injected 2 x 25 µs (modify is paid per
// transition, RESET->INIT and INIT->RTR), on the sim and through the
// libibverbs test double on rdma and on legacy as both libraries it plays.
// Before, the double wrote its record of the RTR (rtr-<device>) in its
// state folder inside every modify (a file made, written, closed and
// renamed): 150-380 µs against 10 µs injected with the folder on disk, so
// the double's state folder is on disk here. The record must still be
// there after the run, written when the device closed.
//
// 50 µs, not the 10 µs: the modify's own fixed cost, double and
// harness (locks, the QP lookup, two clock reads), is what p50 adds to
// 10 µs injected: 0.19 µs on the sim, 0.35-0.41 µs through the double at
// load average 10 on this 2-core VM, 0.4-0.6 µs at 12, so 2-6% of 10 µs
// but about 1% of 50 µs; the old file write was 3 to 8 times the whole
// 50 µs.
//
// Up to three tries per case: a write inside the modify is in every try,
// a busy machine disturbs some. A case that misses every try on a machine
// loaded beyond its CPUs is skipped, naming the figures and the load,
// unless even its fastest modify of each try was beyond the limit: a cost
// the double adds is in every operation, while other processes delay some
// (at load average 12-13 on 2 CPUs the old double's fastest of 400 was
// 129-253 µs in every try, the sim's 50.1 µs).
func TestModifyRTRKnownAnswer(t *testing.T) {
	bin := rdmaBinary(t)
	const (
		perMove = 25 * time.Microsecond
		want    = 2 * perMove // RESET->INIT, INIT->RTR
		limit   = want + want/20
		rounds  = 100
		qps     = 4
	)
	cost := fmt.Sprintf("modify=%v", perMove)
	for _, tc := range []struct {
		name, provider string
		lib            func(testing.TB) string // the double's folder; nil: the sim
		flavor         string                  // the legacy flavor the run must report
	}{
		{"sim", "sim", nil, ""},
		{"rdma", "rdma", testdouble.LibDir, ""},
		{"legacy-ofed1", "legacy", testdouble.LibDir, verbs.FlavorOFED1},
		{"legacy-mlnx-compat", "legacy", testdouble.MlnxLibDir, verbs.FlavorMlnxCompat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env []string
			var state string
			if tc.lib != nil {
				state = filepath.Join(diskDir(t), "state")
				env = append(testdouble.Env(tc.lib(t), state, "xbfake0"), "XRCBENCH_FAKEVERBS_COST="+cost)
			}
			var got []string
			allSlow := true // in every try, even the fastest modify was beyond the limit
			for try := 1; try <= 3; try++ {
				out := filepath.Join(t.TempDir(), "run")
				args := []string{"run", "--provider", tc.provider, "--workload", "lifecycle", "--procs", "1", "--threads", "1",
					"--qps", fmt.Sprint(qps), "--iterations", fmt.Sprint(rounds), "--warmup", "0s", "--qp-state", "rtr", "--quiet", "--out", out}
				if tc.lib == nil {
					args = append(args, "--sim-cost", cost)
				} else {
					args = append(args, "--device", "xbfake0")
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				if code, stdout, stderr := runProcess(cmd); code != 0 {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				r, err := results.Load(out)
				if err != nil {
					t.Fatal(err)
				}
				if d := r.Environment.Device; tc.flavor != "" && (d == nil || d.LegacyFlavor != tc.flavor) {
					t.Fatalf("device %+v: want legacy flavor %s", d, tc.flavor)
				}
				mod := r.Ops[results.OpModify]
				if mod.Count != rounds*qps || mod.Errors != 0 {
					t.Fatalf("modify count %d errors %d, want %d and 0 (one per create)", mod.Count, mod.Errors, rounds*qps)
				}
				if state != "" {
					if rec, err := os.ReadFile(filepath.Join(state, "rtr-xbfake0")); err != nil || strings.TrimSpace(string(rec)) != "port 1 lid 1" {
						t.Errorf("the double's record of the RTR: %q (%v), want \"port 1 lid 1\"", rec, err)
					}
				}
				p50 := time.Duration(mod.NS.P50)
				if p50 >= want && p50 <= limit {
					t.Logf("try %d: modify p50 %v (min %v, p90 %v) for %v injected", try, p50, time.Duration(mod.NS.Min), time.Duration(mod.NS.P90), want)
					return
				}
				got = append(got, fmt.Sprintf("%v (min %v)", p50, time.Duration(mod.NS.Min)))
				allSlow = allSlow && time.Duration(mod.NS.Min) > limit
			}
			if la := loadavg.Read(); la > float64(runtime.NumCPU()) && !allSlow {
				t.Skipf("modify p50 %s in 3 tries at load average %.1f on %d CPUs: too busy to time %v to 5%%",
					strings.Join(got, ", "), la, runtime.NumCPU(), want)
			}
			t.Errorf("modify p50 %s in 3 tries, want %v to %v (%v injected, +5%%)%s", strings.Join(got, ", "), want, limit, want,
				map[bool]string{true: ": even the fastest modify of each try was beyond it, so every one paid more than the device's cost"}[allSlow])
		})
	}
}
