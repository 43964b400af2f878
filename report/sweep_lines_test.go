package report

import (
	"fmt"
	"slices"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// A sweep plot's lines: one per op kind and series in the order first
// met, each point sorted by x; a run without operations of a kind adds no
// point to it; the x values are the distinct ones, sorted.
func TestCollectSweepLines(t *testing.T) {
	run := func(procs, threads int, ops map[string]float64) *Run {
		r := &results.Result{Config: results.Config{Procs: procs, Threads: threads}, Ops: map[string]results.OpStats{}}
		for k, v := range ops {
			s := results.OpStats{OpsPerSec: v}
			if v > 0 {
				s.Count = 10
			}
			r.Ops[k] = s
		}
		return &Run{Result: r}
	}
	sr := &sweepReport{Kinds: []string{"reg", "unreg"}, Runs: []*Run{
		run(2, 1, map[string]float64{"reg": 200, "unreg": 150}),
		run(1, 1, map[string]float64{"reg": 100, "unreg": 0}), // unreg stalled: no point
		run(1, 3, map[string]float64{"reg": 120, "unreg": 90}),
	}}
	m := sweepMetrics[0] // ops_per_sec
	if m.name != "ops_per_sec" {
		t.Fatalf("sweepMetrics[0] is %s", m.name)
	}
	total := func(r *Run) float64 { return float64(r.Result.Config.Procs * r.Result.Config.Threads) }
	for _, tc := range []struct {
		name   string
		series func(*Run) string
		want   []string // label: x=y ...
		xs     []float64
	}{
		{"by kind", func(*Run) string { return "" },
			[]string{"reg: 1=100 2=200 3=120", "unreg: 2=150 3=90"}, []float64{1, 2, 3}},
		{"by kind and threads", func(r *Run) string { return fmt.Sprintf("%d threads", r.Result.Config.Threads) },
			[]string{"reg, 1 threads: 1=100 2=200", "reg, 3 threads: 3=120", "unreg, 1 threads: 2=150", "unreg, 3 threads: 3=90"}, []float64{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := collectSweepLines(sr, m, total, tc.series)
			var got []string
			for _, ln := range sl.lines {
				s := ln.label + ":"
				for _, p := range ln.pts {
					s += fmt.Sprintf(" %g=%g", p.x, p.y)
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("lines %q\nwant %q", got, tc.want)
			}
			if !slices.Equal(sl.xs, tc.xs) {
				t.Errorf("xs %v, want %v", sl.xs, tc.xs)
			}
			if sl.lo != 90 || sl.hi != 200 || sl.reps {
				t.Errorf("range %g..%g reps %v; want 90..200 without repetitions", sl.lo, sl.hi, sl.reps)
			}
		})
	}
	if sl := collectSweepLines(&sweepReport{Kinds: []string{"reg"}}, m, total, func(*Run) string { return "" }); len(sl.lines) != 0 || len(sl.xs) != 0 {
		t.Errorf("an empty sweep has lines %v, xs %v", sl.lines, sl.xs)
	}
}

// Points of one line with an equal x (procs 2 x threads 1 and procs 1 x
// threads 2, against total threads) keep the order of the sweep's runs,
// so a line is drawn the same way every time. 40 runs, more than the 12
// below which sort.Slice falls back to an insertion sort (stable by
// chance), over the four shapes of 2 and 4 threads.
func TestCollectSweepLinesEqualX(t *testing.T) {
	shapes := []results.Config{{Procs: 2, Threads: 1}, {Procs: 4, Threads: 1}, {Procs: 1, Threads: 2}, {Procs: 2, Threads: 2}}
	sr := &sweepReport{Kinds: []string{"reg"}}
	var at2, at4 []string
	for i := range 40 {
		c := shapes[i%len(shapes)]
		sr.Runs = append(sr.Runs, &Run{Result: &results.Result{Config: c,
			Ops: map[string]results.OpStats{"reg": {Count: 10, OpsPerSec: float64(i)}}}})
		if c.Procs*c.Threads == 2 {
			at2 = append(at2, fmt.Sprintf("2=%d", i))
		} else {
			at4 = append(at4, fmt.Sprintf("4=%d", i))
		}
	}
	want := append(at2, at4...) // by x, then in the runs' order
	total := func(r *Run) float64 { return float64(r.Result.Config.Procs * r.Result.Config.Threads) }
	sl := collectSweepLines(sr, sweepMetrics[0], total, func(*Run) string { return "" })
	if len(sl.lines) != 1 {
		t.Fatalf("%d lines, want 1", len(sl.lines))
	}
	var got []string
	for _, p := range sl.lines[0].pts {
		got = append(got, fmt.Sprintf("%g=%g", p.x, p.y))
	}
	if !slices.Equal(got, want) {
		t.Errorf("points %q\nwant %q (by x, then in the runs' order)", got, want)
	}
}
