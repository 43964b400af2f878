package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/results"
)

// reconfigured writes a copy of the lifecycle fixture changed by f.
func reconfigured(t *testing.T, f func(r *results.Result)) string {
	t.Helper()
	r, err := results.Load(fixture("lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	f(r)
	dir := t.TempDir()
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareConfigCLI: compare does not say PASS across different
// configurations: exit 2 with one line naming the differences, unless
// --allow-config-diff, when the verdict line names them; firmware and
// labels never block; a qualification folder gets the line to compare its
// runs/<name>.
func TestCompareConfigCLI(t *testing.T) {
	lc := fixture("lifecycle")
	other := reconfigured(t, func(r *results.Result) {
		r.Config.Provider, r.Config.Procs, r.Config.Threads, r.Config.QPs, r.Config.QPState = "rdma", 1, 1, 1, "rtr"
		r.Config.ProviderOpts = nil
	})
	fw := reconfigured(t, func(r *results.Result) {
		r.Environment.Device.FWVer = "candidate-2"
		r.Labels = map[string]string{"fw": "candidate-2"}
	})
	qual := t.TempDir()
	for _, d := range []string{"lc", "steady-1"} {
		if err := os.MkdirAll(filepath.Join(qual, qualify.RunsDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(qual, qualify.JSONFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCompareCases(t, []compareCase{
		{"the issue's case: sim 2x2 16 QPs against rdma 1x1 1 QP at rtr", []string{lc, other}, 2, nil,
			"not comparable: " + lc + " and " + other + " differ in configuration (provider: sim → rdma, procs: 2 → 1, threads: 2 → 1, qps: 16 → 1, qp_state: reset → rtr); compare runs of one configuration, or give --allow-config-diff", true},
		{"allowed: the verdict names the differences", []string{lc, other, "--allow-config-diff"}, 0,
			[]string{"verdict: no significant regression beyond 5% in reg.p50, unreg_last.p50; across different configurations (provider: sim → rdma, procs: 2 → 1"}, "", false},
		{"N-way too", []string{lc, fw, other}, 2, nil, "not comparable: ", true},
		{"firmware and labels are what it is for", []string{lc, fw}, 0, []string{"verdict: no significant regression beyond 5% in reg.p50, unreg_last.p50\n"}, "", false},
		{"a qualification folder", []string{qual, lc}, 2, nil,
			qual + " is a qualification folder, not a run folder: compare its runs/<name> (" + filepath.Join(qual, "runs", "lc") + ", " + filepath.Join(qual, "runs", "steady-1") + ")", true},
		{"a qualification folder as the new one, N-way", []string{lc, lc, qual}, 2, nil, "is a qualification folder", true},
	})
	if _, stdout, _ := runCLI("compare", lc, fw); strings.Contains(stdout, "different configurations") {
		t.Errorf("a firmware change is called a configuration change:\n%s", stdout)
	}
}

// TestExportJUnitConfigDiff: export's JUnit is compare's gate, so it
// refuses runs of different configurations the same way.
func TestExportJUnitConfigDiff(t *testing.T) {
	lc := fixture("lifecycle")
	other := reconfigured(t, func(r *results.Result) { r.Config.QPs = 1 })
	code, stdout, stderr := runCLI("export", lc, other, "--format", "junit")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "not comparable: ") || !strings.Contains(stderr, "qps: 16 → 1") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming qps", code, stderr)
	}
	if code, stdout, stderr := runCLI("export", lc, other, "--format", "junit", "--allow-config-diff"); code != 0 || !strings.Contains(stdout, "<testsuite") {
		t.Errorf("--allow-config-diff: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
