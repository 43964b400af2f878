package report

import (
	"fmt"
	"os"
)

// A run folder's bench.txt lines (what Generate writes); `benchstat bench.txt`
// reads them unchanged.
func Example_benchTxt() {
	run, err := LoadRun("testdata/runs/tiny")
	if err != nil {
		fmt.Println(err)
		return
	}
	writeBench(os.Stdout, []*Run{run})
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
