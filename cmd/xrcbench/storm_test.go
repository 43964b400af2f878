package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// Flags that do not apply to a storm, or apply only to one, are bad input:
// one line, exit 2, before anything runs.
func TestStormFlagsRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--workload", "storm", "--duration", "1s"}, "--duration does not apply to the storm workload"},
		{[]string{"run", "--workload", "storm", "--qps", "4"}, "--qps does not apply"},
		{[]string{"run", "--workload", "storm", "--warmup", "1s"}, "--warmup does not apply"},
		{[]string{"run", "--workload", "steady", "--nodes", "4"}, "--nodes applies to storm workloads only"},
		{[]string{"run", "--workload", "storm", "--nodes", "1"}, "--nodes 1: want 2 to"},
		{[]string{"run", "--workload", "storm", "--procs", "2", "--sim-max-qp", "10"}, "needs up to 16 live QPs (16 receive QPs + 0 re-wired x 2 ranks), the sim device holds 10"},
		{[]string{"run", "--provider", "null", "--workload", "storm", "--sim-max-qp", "10"}, "apply to --provider sim only"},
		{[]string{"sweep", "--workload", "storm", "--nodes", "3,x"}, "nodes"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		args := append(tt.args, "--out", filepath.Join(t.TempDir(), "r"))
		code := run(&out, &errb, args)
		if code != exitUsage || !strings.Contains(errb.String(), tt.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line containing %q", tt.args, code, errb.String(), exitUsage, tt.want)
		}
	}
}

// A storm sweep over --nodes: one point per node count, each a storm of
// (nodes-1) x ranks QPs, indexed with its nodes.
func TestStormSweepNodes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sw")
	code, stdout, stderr := runEngine(t, "sweep", "--workload", "storm", "--procs", "2", "--nodes", "3,5", "--quiet", "--out", root)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(root, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx results.Sweep
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Points) != 2 {
		t.Fatalf("points %+v", idx.Points)
	}
	for i, n := range []int{3, 5} {
		p := idx.Points[i]
		r, err := results.Load(filepath.Join(root, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if p.Nodes != n || p.QPs != (n-1)*2 || r.Storm == nil || r.Storm.Nodes != n || r.Ops["create"].Count != int64((n-1)*2) {
			t.Errorf("point %d: %+v, storm %+v", i, p, r.Storm)
		}
	}
}

// A rank's run-queue time is measured over its completion time's own
// window, from the start until its last step, so it is never more of it
// than all: two ranks forced onto one CPU (taskset, --pin=cpu) wait on
// its run queue for each other, before the start too (each spins its last
// 2 ms). Counted from 5 ms before the start, as it was, a rank's wait
// came to 151% of its completion time in a report.
func TestStormRunQueueWindow(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset here to put both ranks on one CPU")
	}
	bin := buildXrcbench(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(taskset, "-c", "0", bin, "run", "--quiet", "--workload", "storm", "--nodes", "9", "--procs", "2",
		"--repetitions", "5", "--sim-cost", "create=150us,reg=20us", "--pin=cpu", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	res, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	st := res.Storm
	if st == nil || len(st.RankRunQueueNS) != 5 || len(st.RankDoneNS) != 5 {
		t.Fatalf("storm %+v", st)
	}
	for _, w := range res.Workers {
		if len(w.CPUs) != 1 || w.CPUs[0] != 0 {
			t.Fatalf("worker %d on CPUs %v, want 0", w.Index, w.CPUs)
		}
	}
	// The kernel adds a wait as the thread gets its CPU back, which the
	// reading after the last step may follow by a few microseconds.
	const slack = 50 * time.Microsecond
	waited := false
	for i, ranks := range st.RankRunQueueNS {
		for r, q := range ranks {
			d := st.RankDoneNS[i][r]
			if q < 0 {
				t.Skipf("repetition %d rank %d: this kernel does not report run-queue waits", i+1, r)
			}
			if time.Duration(q) > time.Duration(d)+slack {
				t.Errorf("repetition %d rank %d: waited %v on the run queue, more than its completion time %v", i+1, r, time.Duration(q), time.Duration(d))
			}
			waited = waited || q > 0
		}
	}
	if !waited {
		t.Errorf("two ranks on one CPU never waited on its run queue: %v", st.RankRunQueueNS)
	}
}
