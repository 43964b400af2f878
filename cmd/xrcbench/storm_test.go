package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
