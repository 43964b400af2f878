package report_test

import (
	"fmt"

	"github.com/xrcbench/xrcbench/report"
)

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
