package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildXrcbench builds the real binary: `run` re-executes itself for its
// worker processes, which a test binary cannot stand in for. It skips,
// saying why, while the engine's `run` subcommand does not exist yet.
func buildXrcbench(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short: builds xrcbench and runs the sim engine")
	}
	bin := filepath.Join(t.TempDir(), "xrcbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "run", "--help").CombinedOutput(); err != nil {
		t.Skipf("xrcbench run is not available yet (%v: %s): the sim cost-model validation of compare needs the engine", err, strings.TrimSpace(string(out)))
	}
	return bin
}

// simRun runs the steady workload on the sim provider with an injected reg
// cost: 5 repetitions, one thread, so the cost model dominates.
func simRun(t *testing.T, bin, regCost string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--provider", "sim", "--workload", "steady",
		"--procs", "1", "--threads", "1", "--qps", "1",
		"--duration", "300ms", "--warmup", "100ms", "--repetitions", "5",
		"--sim-cost", "reg="+regCost, "--seed", "1", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
	}
	return out
}

func runBin(bin string, args ...string) (int, string, string) {
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return code, o.String(), e.String()
}

// TestCompareSimCostModel is the validation: A/A pairs of identical
// sim configurations never report a regression; an injected +25% reg
// cost is flagged (exit 1) on reg p50. It also reports on the real run
// folders.
func TestCompareSimCostModel(t *testing.T) {
	bin := buildXrcbench(t)
	base := simRun(t, bin, "2us")
	again := simRun(t, bin, "2us")
	slower := simRun(t, bin, "2500ns")

	code, stdout, stderr := runBin(bin, "compare", base, again)
	if code != 0 {
		t.Errorf("A/A compare: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runBin(bin, "compare", base, slower)
	if code != 1 {
		t.Errorf("+25%% reg compare: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	flagged := false
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == "reg" && f[1] == "p50" && strings.HasSuffix(line, "regression") {
			flagged = true
		}
	}
	if !flagged {
		t.Errorf("reg p50 not flagged as a regression:\n%s", stdout)
	}

	for _, dir := range []string{base, slower} {
		code, stdout, stderr := runBin(bin, "report", dir)
		if code != 0 {
			t.Fatalf("report %s: exit %d\n%s\n%s", dir, code, stdout, stderr)
		}
		for _, f := range []string{"report.html", "summary.md", "bench.txt", "plots/reg-spectrum.svg", "plots/reg-timeline.png"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("report on a real run: %v", err)
			}
		}
	}
}
