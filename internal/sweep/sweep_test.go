package sweep

import (
	"testing"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/workloads"
)

// A sweep point's folder and progress line: a storm's by its nodes.
func TestSweepPoint(t *testing.T) {
	steady, err := workloads.Get("steady")
	if err != nil {
		t.Fatal(err)
	}
	storm, err := workloads.Get("storm")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg        bench.Config
		dir, point string
	}{
		{bench.Config{Workload: steady, Procs: 2, Threads: 4, QPs: 16}, "p2-t4-q16", "2 procs x 4 threads, 16 QPs"},
		{bench.Config{Workload: storm, Procs: 1, Threads: 2, QPs: 6, Nodes: 4}, "p1-t2-n4", "1 procs x 2 threads, 4 nodes (6 QPs)"},
	} {
		dir, point := pointName(tc.cfg)
		if dir != tc.dir || point != tc.point {
			t.Errorf("pointName = %q, %q; want %q, %q", dir, point, tc.dir, tc.point)
		}
	}
}
