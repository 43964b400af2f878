package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/results"
)

// benchUnits are the units of bench.txt lines and which way is better, so
// benchstat knows that a smaller p99 is an improvement.
var benchUnits = []struct{ unit, better string }{
	{"p50-ns", "lower"},
	{"p99-ns", "lower"},
	{"ops/s", "higher"},
}

// respUnits are the open loop's response times (from the intended starts)
// beside the service times, on the same lines; their Unit lines are
// written only when a run has them, so closed-loop bench.txt files stay
// as they were.
var respUnits = []struct{ unit, better string }{
	{"resp-p50-ns", "lower"},
	{"resp-p99-ns", "lower"},
}

// openLoop says whether any run has response times.
func openLoop(runs []*Run) bool {
	for _, run := range runs {
		for _, s := range run.Result.Ops {
			if s.ResponseNS != nil {
				return true
			}
		}
		for _, rep := range run.Result.Repetitions {
			for _, s := range rep.Ops {
				if s.ResponseNS != nil {
					return true
				}
			}
		}
	}
	return false
}

// benchTxtName is the benchmark name of kind in r, e.g.
// BenchmarkXRC/lifecycle/unreg_last/procs=2/threads=2. The qps count is not
// in the name but a configuration line, so runs that differ only in
// qps land in separate benchstat tables rather than being pooled.
func benchTxtName(r *results.Result, kind string) string {
	return fmt.Sprintf("BenchmarkXRC/%s/%s/procs=%d/threads=%d",
		benchPart(r.Config.WorkloadLabel()), benchPart(kind), r.Config.Procs, r.Config.Threads)
}

// benchPart makes s safe inside a benchmark name: benchfmt splits names at
// '/', fields at spaces, and takes a trailing "-N" as GOMAXPROCS.
func benchPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', ' ', '\t', '-', '=':
			return '_'
		}
		return r
	}, s)
}

// writeBench writes runs in the Go benchmark format: per run, configuration
// lines, then one line per repetition and op kind with the repetition's
// operation count as the iteration count, and in an open loop (--rate) the
// response time's p50 and p99 on the same line. A run without repetitions
// contributes one line per kind from its overall figures.
func writeBench(w io.Writer, runs []*Run) error {
	bw := bufio.NewWriter(safetext.NewWriter(w))
	fmt.Fprintln(bw, "# xrcbench: one line per repetition and op kind; read with benchstat")
	units := benchUnits
	if openLoop(runs) {
		units = append(slices.Clip(units), respUnits...)
	}
	for _, u := range units {
		fmt.Fprintf(bw, "Unit %s better=%s\n", u.unit, u.better)
	}
	for _, run := range runs {
		r := run.Result
		fmt.Fprintln(bw)
		fmt.Fprintf(bw, "# %s: %s, status %s\n", run.Dir, r.Environment.Host, r.Status)
		fmt.Fprintf(bw, "provider: %s\n", benchPart(r.Config.Provider))
		fmt.Fprintf(bw, "qps: %d\n", r.Config.QPs)
		fmt.Fprintf(bw, "qp-state: %s\n", r.Config.QPStateOf())
		reps := r.Repetitions
		if len(reps) == 0 {
			reps = []results.Repetition{{Ops: r.Ops}}
		}
		for _, rep := range reps {
			for _, kind := range run.Kinds {
				s, ok := rep.Ops[kind]
				if !ok || s.Count == 0 {
					// The one rule for a repetition without operations
					// (RepetitionStats'): a kind the run has did 0 ops/s
					// there, which benchstat must see as the report does,
					// and has no latency to give.
					if _, inRun := r.Ops[kind]; inRun && len(r.Repetitions) > 0 {
						fmt.Fprintf(bw, "%s 0 0.0 ops/s\n", benchTxtName(r, kind))
					}
					continue
				}
				fmt.Fprintf(bw, "%s %d %d p50-ns %d p99-ns %s ops/s",
					benchTxtName(r, kind), s.Count, s.NS.P50, s.NS.P99, strconv.FormatFloat(s.OpsPerSec, 'f', 1, 64))
				if s.ResponseNS != nil {
					fmt.Fprintf(bw, " %d resp-p50-ns %d resp-p99-ns", s.ResponseNS.P50, s.ResponseNS.P99)
				}
				fmt.Fprintln(bw)
			}
		}
	}
	return bw.Flush()
}
