package analysis

import (
	"errors"
	"fmt"
	"github.com/xrcbench/xrcbench/report"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/stats/changepoint"
	"github.com/xrcbench/xrcbench/results"
)

func TestHistoryOptionsWithDefaults(t *testing.T) {
	tests := []struct {
		orderBy, wantOrderBy, wantLabel string
		minEffect, wantMinEffect        float64
		wantErr                         bool
	}{
		{"", "start", "", 0, 5, false},
		{"start", "start", "", 2, 2, false},
		{"label:fw", "label:fw", "fw", 0, 5, false},
		{"label:build:id", "label:build:id", "build:id", 0, 5, false},
		{"label:", "", "", 0, 0, true},
		{"name", "", "", 0, 0, true},
		{"fw", "", "", 0, 0, true},
	}
	for _, tt := range tests {
		opt, label, err := HistoryOptions{OrderBy: tt.orderBy, MinEffect: tt.minEffect}.withDefaults()
		if tt.wantErr {
			if !errors.Is(err, results.ErrInput) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.orderBy)) {
				t.Errorf("order by %q: %v, want an input error naming it", tt.orderBy, err)
			}
			continue
		}
		if err != nil || opt.OrderBy != tt.wantOrderBy || label != tt.wantLabel || opt.MinEffect != tt.wantMinEffect {
			t.Errorf("order by %q, min effect %v: got %q %q %v %v, want %q %q %v", tt.orderBy, tt.minEffect,
				opt.OrderBy, label, opt.MinEffect, err, tt.wantOrderBy, tt.wantLabel, tt.wantMinEffect)
		}
	}
}

// TestOrderRuns: label values order numerically only when all are
// numbers; equal labels, and no label, keep start order.
func TestOrderRuns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		keys    []string // run i started on day i
		byLabel bool
		want    []int // run indexes in order
	}{
		{"by start", []string{"", "", ""}, false, []int{0, 1, 2}},
		{"by start, labels ignored", []string{"9", "10", "1"}, false, []int{0, 1, 2}},
		{"numeric", []string{"10", "9", "100"}, true, []int{1, 0, 2}},
		{"numeric with fractions", []string{"1.5", "1.25", "-2"}, true, []int{2, 1, 0}},
		{"text when one is not a number", []string{"10", "9", "v1"}, true, []int{0, 1, 2}},
		{"text", []string{"b", "a", "c"}, true, []int{1, 0, 2}},
		{"ties by start", []string{"7", "3", "7", "3"}, true, []int{1, 3, 0, 2}},
	}
	for _, tt := range tests {
		var runs []historyRun
		for i, k := range tt.keys {
			runs = append(runs, historyRun{dir: fmt.Sprint(i), key: k, r: &results.Result{Started: t0.AddDate(0, 0, i)}})
		}
		// Hand them over latest first: the order must not come from the input.
		slices.Reverse(runs)
		orderRuns(runs, tt.byLabel)
		var got []int
		for _, run := range runs {
			var i int
			fmt.Sscan(run.dir, &i)
			got = append(got, i)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: order %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestHistoryChanges: a step is the configuration's when the runs either
// side of it differ, even when runs that did not measure the kind lie
// between them; else its direction and the metric say whether it is a
// regression.
func TestHistoryChanges(t *testing.T) {
	p50, _ := report.MetricByName("p50")
	ops, _ := report.MetricByName("ops_per_sec")
	// Runs 0-4 with procs 1 1 2 2 2; the series skips run 2, so its
	// points 0 1 2 3 are runs 0 1 3 4 and the procs change lies between
	// points 1 and 2.
	var runs []historyRun
	for i, procs := range []int{1, 1, 2, 2, 2} {
		r := &results.Result{}
		r.Config.Procs = procs
		runs = append(runs, historyRun{dir: fmt.Sprintf("run-%d", i), r: r})
	}
	runAt := []int{0, 1, 3, 4}
	points := []HistoryPoint{{Run: "run-0"}, {Run: "run-1"}, {Run: "run-3"}, {Run: "run-4"}}
	tests := []struct {
		name       string
		m          report.Metric
		index      int
		change     float64
		regression bool
		config     string
	}{
		{"slower latency", p50, 1, 0.1, true, ""},
		{"faster latency", p50, 3, -0.1, false, ""},
		{"fewer ops", ops, 3, -0.1, true, ""},
		{"more ops", ops, 1, 0.1, false, ""},
		{"slower across the config change", p50, 2, 0.5, false, "procs: 1 → 2"},
		{"at the first point", p50, 0, 0.1, true, ""},
	}
	for _, tt := range tests {
		cps := []changepoint.ChangePoint{{Index: tt.index, Before: 1, After: 1 + tt.change, Change: tt.change, P: 0.001}}
		got := historyChanges(cps, points, runs, runAt, tt.m)
		if len(got) != 1 {
			t.Fatalf("%s: %d changes, want 1", tt.name, len(got))
		}
		c := got[0]
		if c.Regression != tt.regression || strings.Join(c.ConfigChange, ", ") != tt.config ||
			c.Run != points[tt.index].Run || c.ChangePct != 100*tt.change {
			t.Errorf("%s: %+v, want regression %v, config change %q at %s, %+g%%", tt.name, c, tt.regression, tt.config, points[tt.index].Run, 100*tt.change)
		}
	}
	if got := historyChanges(nil, points, runs, runAt, p50); got != nil {
		t.Errorf("no change point gave %+v, want nil (null in history.json as before)", got)
	}
}

// TestHistoryDrifts: a drift's End is its last point, not one past it.
func TestHistoryDrifts(t *testing.T) {
	p50, _ := report.MetricByName("p50")
	ops, _ := report.MetricByName("ops_per_sec")
	points := []HistoryPoint{{Run: "a"}, {Run: "b"}, {Run: "c"}, {Run: "d"}}
	tests := []struct {
		m                report.Metric
		start, end       int // changepoint's: end one past the last
		change           float64
		wantEnd          int
		wantFrom, wantTo string
		regression       bool
	}{
		{p50, 0, 4, 0.06, 3, "a", "d", true},
		{p50, 1, 3, -0.06, 2, "b", "c", false},
		{ops, 0, 2, -0.06, 1, "a", "b", true},
		{ops, 2, 4, 0.06, 3, "c", "d", false},
	}
	for _, tt := range tests {
		got := historyDrifts([]changepoint.Drift{{Start: tt.start, End: tt.end, PerStep: tt.change / 3, Change: tt.change, P: 0.01}}, points, tt.m)
		d := got[0]
		if d.Start != tt.start || d.End != tt.wantEnd || d.StartRun != tt.wantFrom || d.EndRun != tt.wantTo || d.Regression != tt.regression {
			t.Errorf("%s drift %d..%d of %+g: %+v", tt.m.Name, tt.start, tt.end, tt.change, d)
		}
	}
}
