package qualify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDefaultPlan(t *testing.T) {
	p, err := LoadPlan("")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 7 || p.Repetitions != 5 || !p.Conformance.All || len(p.Criteria) == 0 {
		t.Errorf("default plan: %d runs, %d reps, criteria %d", len(p.Runs), p.Repetitions, len(p.Criteria))
	}
	c := p.Criteria[0]
	if c.Kind != "unreg_last" || c.Metric.Name != "p99" || c.Relative || c.Limit != 2e6 || c.Op != "<=" {
		t.Errorf("first criterion %+v", c)
	}
	if lc := p.Runs[4]; lc.Threads.Resolve(3) != 3 || lc.Procs.Resolve(3) != 2 {
		t.Errorf("lifecycle: %v x %v", lc.Procs, lc.Threads)
	}
}

func TestPlanErrors(t *testing.T) {
	const head = "name: t\nrepetitions: 5\niterations: 10\nwarmup: 0s\nconformance: none\n"
	const run = "runs:\n  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4}\n"
	tests := []struct {
		name, plan, want string
	}{
		{"syntax", head + "runs:\n  - name: lc\n    workload: lifecycle: x\n", "t.yaml:8: mapping values are not allowed in this context"},
		// No line from yaml.v3 (the first line): still no "yaml: " in front,
		// as in a workload's message (both come from internal/yamlstrict).
		{"syntax without a line", "name: \"\\q\"\n", "t.yaml: found unknown escape character"},
		{"unknown key", head + run + "colour: red\n", "t.yaml:8: unknown key colour (known here:"},
		{"unknown key in a run", head + "runs:\n  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4, pin: yes}\n", "t.yaml:7: unknown key pin (known here:"},
		{"bad count", head + "runs:\n  - {name: lc, workload: lifecycle, procs: many, threads: 2, qps: 4}\n", `t.yaml:7: count "many": want a positive number, cpus or Nxcpus`},
		{"bad duration", "name: t\nrepetitions: 5\nduration: soon\n" + run, `t.yaml:3: duration "soon"`},
		{"no runs", head, "no runs"},
		{"unknown workload", head + "runs:\n  - {name: lc, workload: nosuch, procs: 1, threads: 2, qps: 4}\n", `t.yaml:7: run lc: unknown workload "nosuch"`},
		{"run twice", head + run + "  - {name: lc, workload: steady, procs: 1, threads: 1, qps: 4}\n", "t.yaml:8: run lc named twice"},
		{"criterion of no run", head + run + "criteria:\n  - {run: x, check: reg.p50 <= 1ms}\n", `t.yaml:9: criterion "reg.p50 <= 1ms": no run named "x"`},
		{"bad check", head + run + "criteria:\n  - {run: lc, check: reg.p50 < 1ms}\n", "t.yaml:9: criterion \"reg.p50 < 1ms\": want KIND.METRIC"},
		{"bad metric", head + run + "criteria:\n  - {run: lc, check: reg.p42 <= 1ms}\n", `unknown metric "p42"`},
		{"latency limit not a duration", head + run + "criteria:\n  - {run: lc, check: reg.p50 <= 5}\n", "want a duration such as 2ms"},
		{"regression without %", head + run + "criteria:\n  - {run: lc, check: reg.p50 regression <= 5}\n", "regression <= N%"},
		{"bad conformance", head[:len(head)-len("conformance: none\n")] + "conformance: some\n" + run, `t.yaml:5: conformance "some"`},
		{"bad run name", head + "runs:\n  - {name: ../x, workload: lifecycle, procs: 1, threads: 2, qps: 4}\n", `t.yaml:7: run name "../x"`},
		{"bad soak percent", head + run + "soak: {memory_growth: 10}\n", `t.yaml:8: "10": want a percentage such as 10%`},
		{"unknown soak key", head + run + "soak: {length: 1h}\n", "t.yaml:8: unknown key length (known here: duration, interval, memory_growth, p99_drift)"},
		{"two documents", head + run + "---\nname: u\n", "more than one YAML document"},
		{"bad qp_state", "qp_state: ready\n" + head + run, `t.yaml:1: qp_state "ready": want reset, init or rtr`},
		{"bad qp_state of a run", head + "runs:\n  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4, qp_state: RTR}\n", `t.yaml:7: run lc: qp_state "RTR": want reset, init or rtr`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePlan([]byte(tt.plan), "t.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
	p, err := ParsePlan([]byte(head+run+"criteria:\n  - {run: lc, check: reg.ops_per_sec >= 1.5k}\n  - {run: lc, check: unreg_last.p50 regression <= 30%}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Criteria[0]; c.Limit != 1500 || c.Op != ">=" || c.Line != 9 {
		t.Errorf("rate criterion %+v", c)
	}
	if c := p.Criteria[1]; !c.Relative || c.Limit != 30 || c.Kind != "unreg_last" {
		t.Errorf("relative criterion %+v", c)
	}
	// qp_state, the plan's and a run's, is read as given; "" is run's default.
	p, err = ParsePlan([]byte("qp_state: init\n"+head+run+"  - {name: r2, workload: churn, procs: 1, threads: 1, qps: 2, qp_state: reset}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.QPState != "init" || p.Runs[0].QPState != "" || p.Runs[1].QPState != "reset" {
		t.Errorf("qp_state: plan %q, runs %q and %q", p.QPState, p.Runs[0].QPState, p.Runs[1].QPState)
	}
}

// TestLoadPlanRefuses: a --plan that is no regular file, or too big, is
// refused at once in one line naming it. Before, a FIFO blocked the
// command for good (os.Open waits for a writer) and /dev/zero was read
// for its first MiB.
func TestLoadPlanRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), 110000), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"fifo", fifo, fifo + ": not a regular file (a FIFO)"},
		{"device", "/dev/zero", "/dev/zero: not a regular file"},
		{"directory", dir, dir + ": not a regular file (a directory)"},
		{"over 1 MiB", big, big + ": 1.0 MiB, more than the 1 MiB"},
		{"missing", filepath.Join(dir, "nosuch.yaml"), "nosuch.yaml: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := LoadPlan(tt.path)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err %v, want one line containing %q", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				// The blocked open cannot be undone: free it and fail.
				if f, err := os.OpenFile(tt.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("LoadPlan(%s) still blocked after 10s", tt.path)
			}
		})
	}
}

// TestFit: a step asking for more threads than CPUs is scaled down to fit
// them, keeping its processes, unless it says oversubscribe; the reason
// names what was asked.
func TestFit(t *testing.T) {
	tests := []struct {
		procs, threads        Count
		over                  bool
		cpus                  int
		wantProcs, wantThread int
		scaled                bool
	}{
		{Count{N: 1}, Count{N: 1}, false, 2, 1, 1, false},
		{Count{N: 1}, Count{PerCPU: 1}, false, 2, 1, 2, false},
		{Count{N: 2}, Count{PerCPU: 1}, false, 2, 2, 1, true}, // the default plan's lifecycle
		{Count{N: 2}, Count{PerCPU: 1}, false, 16, 2, 8, true},
		{Count{N: 2}, Count{PerCPU: 1}, true, 2, 2, 2, false},
		{Count{N: 3}, Count{N: 1}, false, 2, 2, 1, true},
		{Count{N: 2}, Count{N: 3}, false, 7, 2, 3, false},
		{Count{PerCPU: 1}, Count{PerCPU: 2}, false, 4, 4, 1, true},
		{Count{N: 4}, Count{N: 1}, false, 1, 1, 1, true},
	}
	for _, tt := range tests {
		s := RunStep{Procs: tt.procs, Threads: tt.threads, Oversubscribe: tt.over}
		p, th, why := s.Fit(tt.cpus)
		if p != tt.wantProcs || th != tt.wantThread || (why != "") != tt.scaled ||
			(tt.scaled && !strings.Contains(why, fmt.Sprintf("scaled down from %s × %s (%d × %d threads) to fit %d CPUs", tt.procs, tt.threads,
				tt.procs.Resolve(tt.cpus), tt.threads.Resolve(tt.cpus), tt.cpus))) {
			t.Errorf("%s × %s (oversubscribe %v) on %d CPUs: %d × %d %q, want %d × %d scaled %v",
				tt.procs, tt.threads, tt.over, tt.cpus, p, th, why, tt.wantProcs, tt.wantThread, tt.scaled)
		}
	}
}
