package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/verbs"
)

// Exact operation counts for --iterations runs: every thread does every
// phase on every one of its QPs in every pass or round.
func TestIterationsCounts(t *testing.T) {
	tests := []struct {
		workload            string
		provider            string
		procs, threads, qps int
		iterations          int64
		want                map[string]int64
	}{
		{"steady", "null", 2, 2, 8, 50, map[string]int64{"reg": 2 * 2 * 8 * 50, "unreg": 2 * 2 * 8 * 50}},
		{"sharded", "null", 1, 3, 4, 20, map[string]int64{"reg": 3 * 4 * 20, "unreg": 3 * 4 * 20}},
		{"churn", "null", 2, 1, 5, 30, map[string]int64{"create": 2 * 5 * 30, "unreg_last": 2 * 5 * 30}},
		{"errors", "null", 1, 2, 3, 10, map[string]int64{"reg_invalid": 2 * 3 * 10, "reg_foreign": 2 * 3 * 10}},
		// lifecycle: per round each QP is created once, registered by the
		// n-1 others, unregistered by n-1, and closed once.
		{"lifecycle", "null", 2, 2, 3, 7, map[string]int64{"create": 3 * 7, "reg": 3 * 3 * 7, "unreg": 3 * 3 * 7, "unreg_last": 3 * 7}},
		{"lifecycle", "null", 1, 1, 4, 5, map[string]int64{"create": 4 * 5, "reg": 0, "unreg": 0, "unreg_last": 4 * 5}},
	}
	for _, tt := range tests {
		t.Run(tt.workload+"/"+tt.provider, func(t *testing.T) {
			cfg := testConfig(t, tt.workload, tt.provider, tt.procs, tt.threads, tt.qps)
			cfg.Iterations = tt.iterations
			res := runOK(t, cfg)
			for kind, n := range tt.want {
				if got := res.Ops[kind].Count; got != n {
					t.Errorf("%s: count %d, want %d", kind, got, n)
				}
			}
			if len(res.Ops) != len(tt.want) {
				t.Errorf("ops %v, want kinds %v", res.Ops, tt.want)
			}
			for kind := range tt.want {
				if _, err := os.Stat(filepath.Join(cfg.Out, kind+".hlog")); err != nil {
					t.Errorf("no %s.hlog: %v", kind, err)
				}
			}
			if len(res.Workers) != tt.procs {
				t.Errorf("%d workers, want %d", len(res.Workers), tt.procs)
			}
		})
	}
}

func TestSimWorkloads(t *testing.T) {
	for _, w := range []string{"steady", "sharded", "lifecycle", "churn", "errors"} {
		t.Run(w, func(t *testing.T) {
			cfg := testConfig(t, w, "sim", 2, 2, 4)
			cfg.Iterations = 20
			res := runOK(t, cfg)
			for kind, s := range res.Ops {
				if s.Errors != 0 {
					t.Errorf("%s: %d errors %v", kind, s.Errors, s.ErrnoCounts)
				}
			}
			if res.Leaks == nil || !res.Leaks.Checked || res.Leaks.Method != "sim_inspect" || len(res.Leaks.Leaked) != 0 {
				t.Errorf("leaks %+v, want checked by sim_inspect, none leaked", res.Leaks)
			}
		})
	}
}

// Known answer: the sim device busy-waits 200µs on every destroy, so the
// last unreg of each QP, and only it, costs 200µs (plus the unreg itself).
// unreg_last is measured by construction: its count is rounds x QPs.
func TestLifecycleKnownAnswer(t *testing.T) {
	const rounds, qps = 40, 8
	cfg := testConfig(t, "lifecycle", "sim", 2, 2, qps)
	cfg.Iterations = rounds
	cfg.SimCost = verbs.Cost{Destroy: 200 * time.Microsecond}
	res := runOK(t, cfg)
	last, unreg := res.Ops["unreg_last"], res.Ops["unreg"]
	if last.Count != rounds*qps {
		t.Errorf("unreg_last count %d, want rounds x qps = %d", last.Count, rounds*qps)
	}
	if last.Errors != 0 || unreg.Errors != 0 {
		t.Errorf("errors: unreg_last %v, unreg %v", last.ErrnoCounts, unreg.ErrnoCounts)
	}
	if p50 := time.Duration(last.NS.P50); p50 < 200*time.Microsecond || p50 > 220*time.Microsecond {
		t.Errorf("unreg_last p50 %v, want 200µs to 220µs", p50)
	}
	if p50 := time.Duration(unreg.NS.P50); p50 > 50*time.Microsecond {
		t.Errorf("unreg p50 %v, want far below the 200µs destroy", p50)
	}
	if r := res.Repetitions[0].Rounds; r != rounds {
		t.Errorf("repetition rounds %d, want %d", r, rounds)
	}
}

// The interval logs hold every measured operation exactly once: the sum
// of their interval histograms equals the result's counts, for runs much
// longer than an interval.
func TestHlogsSumToCounts(t *testing.T) {
	for _, w := range []string{"steady", "lifecycle"} {
		t.Run(w, func(t *testing.T) {
			cfg := testConfig(t, w, "sim", 2, 1, 4)
			cfg.Duration = 1200 * time.Millisecond
			cfg.Warmup = 200 * time.Millisecond
			cfg.Interval = 200 * time.Millisecond
			cfg.Repetitions = 2
			res := runOK(t, cfg)
			for kind, s := range res.Ops {
				f, err := os.Open(filepath.Join(cfg.Out, kind+".hlog"))
				if err != nil {
					t.Fatal(err)
				}
				r := hdrhistogram.NewHistogramLogReader(f)
				var total int64
				intervals := 0
				for {
					h, err := r.NextIntervalHistogram()
					if err != nil {
						t.Fatalf("%s.hlog: %v", kind, err)
					}
					if h == nil {
						break
					}
					total += h.TotalCount()
					intervals++
				}
				f.Close()
				if total != s.Count {
					t.Errorf("%s: hlog holds %d operations, result %d", kind, total, s.Count)
				}
				if s.Count > 0 && intervals < 6 {
					t.Errorf("%s: %d intervals for 2 x 1.2s at 200ms", kind, intervals)
				}
			}
			if len(res.Repetitions) != 2 {
				t.Errorf("%d repetitions, want 2", len(res.Repetitions))
			}
		})
	}
}
