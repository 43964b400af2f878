package report_test

import (
	"fmt"
	"os"

	"github.com/xrcbench/xrcbench/report"
)

// Write a run folder's bench.txt lines to stdout; `benchstat bench.txt`
// reads them unchanged.
func ExampleWriteBench() {
	run, err := report.LoadRun("testdata/runs/tiny")
	if err != nil {
		fmt.Println(err)
		return
	}
	report.WriteBench(os.Stdout, []*report.Run{run})
	// Output:
	// # xrcbench: one line per repetition and op kind; read with benchstat
	// Unit p50-ns better=lower
	// Unit p99-ns better=lower
	// Unit ops/s better=higher
	//
	// # testdata/runs/tiny: bench-a, status ok
	// provider: sim
	// qps: 1
	// qp-state: reset
	// BenchmarkXRC/churn/create/procs=1/threads=1 1 0 p50-ns 0 p99-ns 1.0 ops/s
	// BenchmarkXRC/churn/unreg_last/procs=1/threads=1 1 0 p50-ns 0 p99-ns 1.0 ops/s
}

// Compare a run folder with itself: nothing differs, so nothing is
// significant and the gate passes. The lifecycle workload gates on
// reg.p50 and unreg_last.p50; the other rows are information.
func ExampleCompare() {
	base, err := report.LoadRun("testdata/runs/lifecycle")
	if err != nil {
		fmt.Println(err)
		return
	}
	p50, _ := report.MetricByName("p50")
	c, err := report.Compare(base, base, report.CompareOptions{Threshold: 5, Alpha: 0.05, Metrics: []report.Metric{p50}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range c.Rows {
		role := "info"
		if r.Gated {
			role = "gate"
		}
		fmt.Printf("%s %s (%s): base n=%d, new n=%d, %s\n", r.Kind, r.Metric, role, r.Base.N, r.New.N, r.Verdict)
	}
	fmt.Println(c.Verdict())
	// Output:
	// create p50 (info): base n=5, new n=5, ~
	// reg p50 (gate): base n=5, new n=5, ~
	// unreg p50 (info): base n=5, new n=5, ~
	// unreg_last p50 (gate): base n=5, new n=5, ~
	// no significant regression beyond 5% in reg.p50, unreg_last.p50
}
