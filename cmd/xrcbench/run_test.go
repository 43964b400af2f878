package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Bad input is refused before anything runs: exit status 2 and one line
// on stderr that says what is wrong, never a panic.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ndescription: d\nmode: loop\nqps: {scope: shared}\nphases:\n  - {op: reg, by: each, colour: red}\n"), 0o600)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--procs", "0"}, "--procs 0"},
		{[]string{"run", "--procs", "abc"}, "invalid argument \"abc\""},
		{[]string{"run", "--threads", "-2"}, "--threads -2"},
		{[]string{"run", "--qps", "0"}, "--qps 0"},
		{[]string{"run", "--duration", "0s"}, "--duration 0s"},
		{[]string{"run", "--duration", "-1s"}, "--duration -1s"},
		{[]string{"run", "--duration", "1s", "--iterations", "5"}, "not both"},
		{[]string{"run", "--iterations", "0"}, "--iterations 0"},
		{[]string{"run", "--warmup", "-1s"}, "--warmup -1s"},
		{[]string{"run", "--repetitions", "0"}, "--repetitions 0"},
		{[]string{"run", "--interval", "0s"}, "--interval 0s"},
		{[]string{"run", "--warmup", "1000000h"}, "--warmup 1000000h0m0s: want 0 (none) up to 1h0m0s"},
		{[]string{"run", "--duration", "2000000h", "--warmup", "600000h"}, "--duration 2000000h0m0s: want a positive duration up to 168h0m0s (7 days)"},
		{[]string{"run", "--duration", "169h"}, "up to 168h0m0s"},
		{[]string{"run", "--interval", "2h"}, "--interval 2h0m0s: want 1ms to 1h0m0s"},
		{[]string{"run", "--stall-timeout", "1ms"}, "--stall-timeout 1ms: want at least 2s"},
		{[]string{"run", "--stall-timeout", "-1s"}, "--stall-timeout -1s"},
		{[]string{"run", "--sim-cost", "reg=11s"}, "at most 10s per operation"},
		{[]string{"run", "--workload", "steady", "--procs", "16", "--threads", "8"}, "registrants per QP"},
		{[]string{"run", "--workload", "nosuch"}, `unknown workload "nosuch"`},
		{[]string{"run", "--workload", bad}, "bad.yaml:6: unknown key colour"},
		{[]string{"run", "--workload", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"run", "--nosuchflag"}, "unknown flag: --nosuchflag"},
		{[]string{"run", "--provider", "nosuch"}, `unknown provider "nosuch"`},
		{[]string{"run", "--sim-cost", "reg=fast"}, "--sim-cost"},
		{[]string{"run", "--sim-semantics", "modern"}, "--sim-semantics"},
		{[]string{"run", "--qp-state", "rts"}, `--qp-state: unknown QP state "rts": want reset, init or rtr`},
		{[]string{"sweep", "--qp-state", "RTR"}, `--qp-state: unknown QP state "RTR"`},
		{[]string{"run", "--pin=sometimes"}, `--pin: "sometimes": want auto, cpu or none`},
		{[]string{"sweep", "--pin=core"}, `--pin: "core"`},
		{[]string{"run", "--sim-cost", "modify=1us,reset=2us,rst=1us"}, `unknown operation "rst"`},
		{[]string{"run", "--provider", "null", "--sim-cost", "reg=1us"}, "--provider sim only"},
		{[]string{"run", "extra"}, "unknown command \"extra\""},
		{[]string{"run", "--label", "fw"}, `label "fw": want key=value`},
		{[]string{"run", "--label", "=22.31"}, "empty key"},
		{[]string{"run", "--label", "1fw=x"}, `label key "1fw": want a letter`},
		{[]string{"run", "--label", "fw=a\x1b[2Jb"}, "control character"},
		{[]string{"run", "--label", "fw=1", "--label", "fw=2"}, "label fw given twice"},
		{[]string{"sweep", "--label", "a b=c"}, `label key "a b"`},
		{[]string{"sweep", "--procs", "1,x"}, `--procs "1,x"`},
		{[]string{"sweep", "--threads", "0"}, `--threads "0"`},
		{[]string{"sweep", "--qps", "2,2"}, "given twice"},
		{[]string{"sweep", "--procs", "1,2000"}, "--procs 2000"},
		{[]string{"sweep", "--sim-cost", "lookup=list,scan=2us", "--sim-cost", "lookup=list,scan=2000ns"}, "the same cost model"},
		{[]string{"sweep", "--sim-cost", "lookup=xarray", "--sim-cost", "scan=2us"}, "give it with lookup=list"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, append(tt.args, "--out", filepath.Join(dir, "out")))
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tt.want) || strings.Contains(msg, "goroutine") {
				t.Errorf("stderr %q: want one line containing %q", msg, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
				t.Errorf("bad input created the output folder")
			}
		})
	}
}

// A known provider this machine lacks fails like conform and devices do
// (exit 1, one line, unchanged message), before anything is created; an
// unknown name stays bad usage (TestRunBadInput).
func TestRunProviderUnavailable(t *testing.T) {
	var missing []string
	for _, p := range verbs.Providers() {
		if !p.Available {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) == 0 {
		t.Skip("every provider is available on this machine")
	}
	dir := t.TempDir()
	for _, name := range missing {
		for _, sub := range []string{"run", "sweep"} {
			t.Run(sub+"/"+name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				out := filepath.Join(dir, sub+"-"+name)
				code := run(&stdout, &stderr, []string{sub, "--provider", name, "--out", out})
				if code != exitFailed {
					t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, stderr.String())
				}
				msg := stderr.String()
				want := "provider " + name + " is not available here: "
				if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) {
					t.Errorf("stderr %q: want one line containing %q", msg, want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("an unavailable provider created the output folder")
				}
			})
		}
	}
}

// The list output, golden: fixed providers (availability depends on the
// machine) and the real built-in workloads.
func TestListGolden(t *testing.T) {
	provs := []verbs.ProviderInfo{
		{Name: "null", Description: "does nothing", Available: true},
		{Name: "rdma", Description: "rdma-core", Reason: "built without rdma-core headers"},
	}
	var b bytes.Buffer
	if err := writeList(&b, provs, workloads.Builtins()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "list.golden", b.Bytes())
}

func TestListShow(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(&stdout, &stderr, []string{"list", "--show", "lifecycle"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// What it prints is a spec that parses back to the same workload.
	spec, err := workloads.Parse(stdout.Bytes(), "shown.yaml")
	if err != nil || spec.Name != "lifecycle" || len(spec.Phases) != 4 {
		t.Errorf("list --show output does not parse back: %v", err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(&stdout, &stderr, []string{"list", "--show", "nosuch"}); code != exitUsage || !strings.Contains(stderr.String(), "unknown workload") {
		t.Errorf("--show nosuch: exit %d, stderr %q", code, stderr.String())
	}
}

// Help teaches: every flag of the CLI contract is there, with examples.
func TestRunHelp(t *testing.T) {
	for _, sub := range []string{"run", "sweep"} {
		var stdout, stderr bytes.Buffer
		if code := run(&stdout, &stderr, []string{sub, "--help"}); code != exitOK {
			t.Fatalf("%s --help: exit %d", sub, code)
		}
		out := stdout.String()
		for _, flag := range []string{"--provider", "--device", "--workload", "--procs", "--threads", "--qps",
			"--duration", "--iterations", "--warmup", "--repetitions", "--pin", "--seed", "--out",
			"--sim-semantics", "--sim-cost", "Examples:", "xrcbench " + sub} {
			if !strings.Contains(out, flag) {
				t.Errorf("%s --help lacks %q", sub, flag)
			}
		}
	}
}

var (
	engineOnce sync.Once
	engineBin  string
	engineErr  error
)

// engineBinary builds xrcbench once: run re-executes its own binary as
// workers, which the test binary cannot be.
func engineBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds xrcbench and runs worker processes")
	}
	engineOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xrcbench-test-bin-")
		if err != nil {
			engineErr = err
			return
		}
		engineBin = filepath.Join(dir, "xrcbench")
		if out, err := exec.Command("go", "build", "-o", engineBin, ".").CombinedOutput(); err != nil {
			engineErr = &buildError{err, out}
		}
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engineBin
}

// judgesNoTime marks a test of real runs that judges what they wrote and
// counted, never how fast they went, as one that may run beside another
// such test: it runs at the package's end, when make test's other
// packages are done and a CPU would idle (t.Parallel, two at a time on
// two CPUs). A test that judges time or load must not call it.
func judgesNoTime(t *testing.T) {
	t.Helper()
	t.Parallel()
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// A qualification run by runEngine prints no qualification.pdf
// (--no-pdf): starting Chromium costs seconds each time, over some thirty
// qualifications here; the tests of the PDF use runEngineWithPDF.
func runEngine(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if len(args) > 0 && args[0] == "qualify" {
		args = append(slices.Clone(args), "--no-pdf")
	}
	return runEngineWithPDF(t, args...)
}

func runEngineWithPDF(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, stdout, stderr := runProcess(exec.Command(engineBinary(t), args...))
	if code == -1 {
		t.Fatal(stderr)
	}
	return code, stdout, stderr
}

func TestRunEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runEngine(t, "run", "--workload", "lifecycle", "--procs", "2", "--threads", "2",
		"--qps", "4", "--iterations", "25", "--warmup", "100ms", "--sim-cost", "destroy=50us", "--out", out,
		"--label", "fw=22.31.1014", "--label", "board=b 7 = <x>")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"unreg_last", "p99.9", "run folder: " + out, "no QP leaked"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops["unreg_last"].Count != 25*4 || r.Config.ProviderOpts["sim_cost"] != "destroy=50µs" {
		t.Errorf("unreg_last count %d, provider options %v", r.Ops["unreg_last"].Count, r.Config.ProviderOpts)
	}
	if want := map[string]string{"fw": "22.31.1014", "board": "b 7 = <x>"}; !maps.Equal(r.Labels, want) {
		t.Errorf("labels %v, want %v", r.Labels, want)
	}
	wantCmd := "xrcbench run --iterations=25 --label=fw=22.31.1014 --label=board=b 7 = <x> --sim-cost=destroy=50us --warmup=100ms --workload=lifecycle --procs=2 --threads=2 --qps=4"
	if strings.Join(r.Config.CommandLine, " ") != wantCmd {
		t.Errorf("command line %q, want %q", r.Config.CommandLine, wantCmd)
	}
	if r.Environment.Version == "" || r.Environment.CPUs == 0 || r.Environment.Kernel == "" {
		t.Errorf("config/environment incomplete: %v %+v", r.Config.CommandLine, r.Environment)
	}
	// The run folder has summary.md and bench.txt without a `report`
	// (the README's Results section says so), from this run's figures.
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil || !bytes.Contains(md, []byte("unreg_last")) || !bytes.Contains(md, []byte("Labels: board=b 7 = \\<x\\> fw=22.31.1014.")) {
		t.Errorf("summary.md: %v\n%s", err, md)
	}
	bt, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil || !bytes.Contains(bt, []byte("unreg_last")) || !bytes.Contains(bt, []byte(fmt.Sprintf(" %d ", 25*4))) {
		t.Errorf("bench.txt: %v\n%s", err, bt)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
		t.Errorf("run wrote report.html: that is report's (plots take long)")
	}
}

func TestSweepEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	code, stdout, stderr := runEngine(t, "sweep", "--provider", "null", "--workload", "sharded", "--procs", "1,2",
		"--threads", "1", "--qps", "2,3", "--iterations", "10", "--warmup", "0s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "reg ops/s") || !strings.Contains(stdout, "sweep folder: "+out+" (4 points)") {
		t.Errorf("sweep overview missing:\n%s", stdout)
	}
	s, err := results.LoadSweep(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 4 {
		t.Fatalf("%d points, want 4", len(s.Points))
	}
	for _, p := range s.Points {
		r, err := results.Load(filepath.Join(out, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		want := int64(p.Procs * p.Threads * p.QPs * 10)
		rerun := strings.Join(r.Config.CommandLine, " ")
		if !strings.HasPrefix(rerun, "xrcbench run ") || !strings.HasSuffix(rerun, fmt.Sprintf("--procs=%d --threads=1 --qps=%d", p.Procs, p.QPs)) {
			t.Errorf("point %s: command line %q does not rerun it", p.Dir, rerun)
		}
		if p.Status != "ok" || r.Config.Procs != p.Procs || r.Config.QPs != p.QPs || r.Ops["reg"].Count != want {
			t.Errorf("point %+v: reg count %d, want %d", p, r.Ops["reg"].Count, want)
		}
		for _, f := range []string{"summary.md", "bench.txt"} {
			if _, err := os.Stat(filepath.Join(out, p.Dir, f)); err != nil {
				t.Errorf("point %s: %v", p.Dir, err)
			}
		}
	}
}

// A worker killed mid-run: exit status 1, one line naming the worker, its
// pid and the signal, result.json still written, no worker left running.
func TestRunWorkerKilled(t *testing.T) {
	bin := engineBinary(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "--workload", "steady", "--procs", "2", "--threads", "1",
		"--duration", "60s", "--warmup", "0s", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var workers []int
	for deadline := time.Now().Add(20 * time.Second); len(workers) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		workers = childPIDs(cmd.Process.Pid)
	}
	if len(workers) < 2 {
		cmd.Process.Kill()
		t.Fatalf("found workers %v, want 2", workers)
	}
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(workers[0], syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("xrcbench did not exit after a worker was killed")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitFailed, stderr.String())
	}
	want := fmt.Sprintf("(pid %d) was killed by signal 9", workers[0])
	var lines []string // the error, without the run's warnings and notes
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(l, "warning: ") && !strings.HasPrefix(l, "note: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("stderr %q: want one line with %q (besides warnings)", stderr.String(), want)
	}
	// Partial when the kill came while measuring (the other worker's
	// figures are kept), failed when it came before: never ok.
	if r, err := results.Load(out); err != nil || (r.Status != results.StatusPartial && r.Status != results.StatusFailed) {
		t.Errorf("result.json: status %v, %v; want partial or failed", r.Status, err)
	}
	for _, p := range workers {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("worker %d still exists", p)
		}
	}
}

// childPIDs lists the children of pid.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// A coordinator killed outright (no chance to clean up) takes its workers
// with it: they get SIGKILL from the kernel (PR_SET_PDEATHSIG). The
// private directory it could not remove names its pid, and the next run in
// the same temporary directory removes it.
func TestCoordinatorKilled(t *testing.T) {
	bin := engineBinary(t)
	tmp := t.TempDir() // never the system's /tmp: the killed run leaves its device there
	cmd := exec.Command(bin, "run", "--workload", "steady", "--procs", "3", "--threads", "1",
		"--duration", "60s", "--warmup", "0s", "--out", filepath.Join(t.TempDir(), "run"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var workers []int
	for deadline := time.Now().Add(20 * time.Second); len(workers) < 3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		workers = childPIDs(cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if len(workers) < 3 {
		t.Fatalf("found workers %v, want 3", workers)
	}
	for _, p := range workers {
		gone := false
		for deadline := time.Now().Add(10 * time.Second); !gone && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			// Gone, or a zombie waiting for init to reap it: not running.
			gone = err != nil || strings.Contains(string(data), ") Z ")
		}
		if !gone {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("worker %d outlived its coordinator", p)
		}
	}

	left, _ := filepath.Glob(filepath.Join(tmp, "xrcbench-run-*"))
	want := fmt.Sprintf("xrcbench-run-%d-", cmd.Process.Pid)
	if len(left) != 1 || !strings.HasPrefix(filepath.Base(left[0]), want) {
		t.Fatalf("private directories left %v, want one named %s*", left, want)
	}
	next := exec.Command(bin, "run", "--provider", "null", "--workload", "sharded", "--qps", "1",
		"--iterations", "1", "--warmup", "0s", "--out", filepath.Join(t.TempDir(), "next"))
	next.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("after the next run, %s holds %v: the dead run's directory was not removed", tmp, ents)
	}
}

func TestSummaryGolden(t *testing.T) {
	r := &results.Result{
		Status: results.StatusOK,
		Ops: map[string]results.OpStats{
			"create":     {Count: 1600, OpsPerSec: 532.7, NS: results.Latency{P50: 171, P99: 60_000, P999: 124_000, Max: 1_810_000}},
			"unreg":      {Count: 4800, OpsPerSec: 1598, NS: results.Latency{P50: 2_100, P99: 17_000, P999: 65_000, Max: 4_090_000}},
			"unreg_last": {Count: 1600, Errors: 3, OpsPerSec: 532.7, NS: results.Latency{P50: 202_000, P99: 830_000, P999: 3_170_000, Max: 24_440_000_000}},
		},
		Harness: results.Harness{Timer: "clock_monotonic", TimerOverheadNS: 23.4, StartSkewNS: 28_000},
		Leaks:   &results.LeakCheck{Checked: true, Method: "sim_inspect"},
	}
	var b bytes.Buffer
	printSummary(&b, r, "run folder: runs/make-run")
	r.Status, r.Leaks = results.StatusPartial, &results.LeakCheck{Method: "none", Detail: "the null provider keeps no state"}
	printSummary(&b, r, "run folder: runs/other")
	golden.Check(t, "summary.golden", b.Bytes())
}

// --out on a folder that is not empty and not a run folder is refused and
// left as it was; replacing an earlier run removes exactly what that run
// and `report` on it wrote, and nothing the user put beside them.
func TestRunReusedFolder(t *testing.T) {
	judgesNoTime(t)
	writeFiles := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		for _, p := range names {
			path := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("the user's"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(t *testing.T, out, workload string) (int, string, string) {
		return runEngine(t, "run", "--provider", "null", "--workload", workload, "--qps", "2",
			"--iterations", "5", "--warmup", "0s", "--out", out)
	}

	t.Run("not a run folder", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "mine")
		user := []string{"summary.md", "bench.txt", "plots/figures/fig1.svg", "reg.hlog"}
		writeFiles(t, out, user...)
		code, stdout, stderr := run(t, out, "sharded")
		if code != exitUsage {
			t.Fatalf("exit %d, want %d\n%s\n%s", code, exitUsage, stdout, stderr)
		}
		checkOneLine(t, stderr)
		if !strings.Contains(stderr, "not an xrcbench run folder") {
			t.Errorf("stderr %q does not say why", stderr)
		}
		for _, p := range user {
			if data, err := os.ReadFile(filepath.Join(out, p)); err != nil || string(data) != "the user's" {
				t.Errorf("%s: %v %q: the user's file was touched", p, err, data)
			}
		}
		if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
			t.Errorf("beside the folder: %v, want nothing left", ents)
		}
	})

	t.Run("earlier run", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		if code, stdout, stderr := run(t, out, "steady"); code != 0 {
			t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if code, stdout, stderr := runCLI("report", out); code != 0 {
			t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
		}
		user := []string{"notes.txt", "plots/mine.svg", "mine/report.html"}
		writeFiles(t, out, user...)
		if code, stdout, stderr := run(t, out, "churn"); code != 0 {
			t.Fatalf("second run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(out, path)
				left = append(left, rel)
			}
			return nil
		})
		// The run's files, its summary.md and bench.txt and their record,
		// and the user's.
		want := append(slices.Clone(r.Files), user...)
		want = append(want, "summary.md", "bench.txt", results.ReportManifest)
		slices.Sort(left)
		slices.Sort(want)
		if !slices.Equal(left, want) {
			t.Errorf("folder holds %v, want the new run's files and the user's: %v", left, want)
		}
		// steady wrote reg.hlog, churn does not: it must be gone.
		if r.Config.Workload != "churn" || !slices.Contains(r.Files, "create.hlog") || slices.Contains(r.Files, "reg.hlog") {
			t.Errorf("result of workload %s lists %v", r.Config.Workload, r.Files)
		}
	})

	t.Run("empty folder", func(t *testing.T) {
		out := t.TempDir()
		if code, stdout, stderr := run(t, out, "sharded"); code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if _, err := results.Load(out); err != nil {
			t.Error(err)
		}
	})
}

// Unexpected outcomes fail the run: on null every reg of the errors
// workload succeeds where it must fail with EINVAL, so the run exits 1
// with status partial and says what went wrong; sim fails them as it must.
func TestRunUnexpectedOutcomes(t *testing.T) {
	tests := []struct {
		provider   string
		wantCode   int
		wantStatus string
		wantStderr string
	}{
		{"null", exitFailed, results.StatusPartial, "reg_invalid 40 of 40 (unexpected_success x40)"},
		{"sim", exitOK, results.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := runEngine(t, "run", "--provider", tt.provider, "--workload", "errors",
				"--iterations", "10", "--qps", "4", "--warmup", "0s", "--out", out)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.wantCode, stdout, stderr)
			}
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.wantStatus || r.Ops["reg_invalid"].Count != 40 || r.Ops["reg_foreign"].Count != 40 {
				t.Errorf("status %q, ops %+v: want %s with 40 of each kind", r.Status, r.Ops, tt.wantStatus)
			}
			if tt.wantStderr == "" {
				return
			}
			var lines []string // the error, without the run's warnings and notes
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(l, "warning: ") && !strings.HasPrefix(l, "note: ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], tt.wantStderr) || !strings.Contains(lines[0], "reg_foreign 40 of 40") {
				t.Errorf("stderr %q: want one line naming both kinds", stderr)
			}
		})
	}
}

// TestPrintSummaryExpected: the errors workload's intended failures have a
// column of their own; "errors" counts the unexpected outcomes only.
func TestPrintSummaryExpected(t *testing.T) {
	r := &results.Result{Status: "ok", Ops: map[string]results.OpStats{
		"reg_invalid": {Count: 60, Expect: "EINVAL"},
		"reg_foreign": {Count: 60, Errors: 2, Expect: "EINVAL", ErrnoCounts: map[string]int64{"EBUSY": 2}},
	}}
	var b strings.Builder
	printSummary(&b, r, "dir")
	lines := strings.Split(b.String(), "\n")
	for i, want := range [][]string{
		{"op", "count", "errors", "expected", "ops/s"},
		{"reg_invalid", "60", "0", "EINVAL: 60"},
		{"reg_foreign", "60", "2", "EINVAL: 58"},
	} {
		if got := strings.Fields(lines[i]); len(got) < len(want) || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") &&
			strings.Join(append(got[:3:3], got[3]+" "+got[4]), "|") != strings.Join(want, "|") {
			t.Errorf("line %d %q, want it to start with %q", i, lines[i], want)
		}
	}
	// Without such kinds, no such column.
	b.Reset()
	printSummary(&b, &results.Result{Status: "ok", Ops: map[string]results.OpStats{"reg": {Count: 5}}}, "dir")
	if strings.Contains(b.String(), "expected") {
		t.Errorf("an expected column without a kind that must fail:\n%s", b.String())
	}
}

// TestPrintSummaryOpenLoop: an open loop's table leads with the rate's
// verdict and the response time, then the service time, as wrk2 does; a
// saturated run says so on its first line (its service p50 of 51ns once
// stood alone while the response p50 was 8.09ms).
func TestPrintSummaryOpenLoop(t *testing.T) {
	for _, tt := range []struct {
		name      string
		saturated bool
		want      []string
	}{
		{"keeping up", false, []string{"open loop: 25000 ops/s requested (fixed arrivals), 24990 achieved\n", "resp p50", "svc p50", "11µs", "12µs"}},
		{"saturated", true, []string{"open loop: 25000 ops/s requested (fixed arrivals), 24990 achieved: SATURATED", "8.09ms behind", "8.09ms", "51ns"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := results.Latency{P50: 11_000, P99: 20_000, P999: 30_000, Max: 40_000}
			if tt.saturated {
				resp.P50 = 8_090_000
			}
			svc := results.Latency{P50: 10_200, P99: 12_000}
			if tt.saturated {
				svc.P50 = 51
			}
			r := &results.Result{Status: "ok",
				OpenLoop: &results.OpenLoop{Arrival: "fixed", RequestedOpsPerSec: 25000, AchievedOpsPerSec: 24990, Saturated: tt.saturated, BacklogEndNS: 8_090_000},
				Ops:      map[string]results.OpStats{"reg": {Count: 5, NS: svc, ResponseNS: &resp}}}
			var b strings.Builder
			printSummary(&b, r, "dir")
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("summary lacks %q:\n%s", w, out)
				}
			}
			if first := strings.SplitN(out, "\n", 2)[0]; !strings.HasPrefix(first, "open loop: ") {
				t.Errorf("first line %q: want the open loop's verdict", first)
			}
			if i, j := strings.Index(out, "resp p50"), strings.Index(out, "svc p50"); i < 0 || j < i {
				t.Errorf("the response time does not lead:\n%s", out)
			}
		})
	}
}
