package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/report/changepoint"
	"github.com/xrcbench/xrcbench/results"
)

// Output names of history.
const (
	HistoryHTMLFile = "history.html"
	HistoryJSONFile = "history.json"
)

// HistoryOptions configure History.
type HistoryOptions struct {
	// OrderBy is "start" (the runs' start times, the default) or
	// "label:KEY" (the runs' --label KEY values: numerically when all are
	// numbers, else as text; ties by start time).
	OrderBy string
	// Gates are the series; nil: the workload's DefaultGates.
	Gates []Gate
	// MinEffect is the smallest change of the median, in percent, that a
	// change point or drift must have (default 5, compare's threshold).
	MinEffect float64
	// Alpha is the permutation test's level (default 0.01); Permutations
	// its count (default 999); Seed makes its p-values reproducible.
	Alpha        float64
	Permutations int
	Seed         uint64
}

// HistoryPoint is one run of a series.
type HistoryPoint struct {
	Run     string    `json:"run"`
	RunID   string    `json:"run_id,omitempty"`
	Started time.Time `json:"started"`
	Key     string    `json:"order_key,omitempty"` // the label value, when ordered by one
	Status  string    `json:"status"`
	// Median over the run's repetitions, their MAD, min and max.
	N      int     `json:"repetitions"`
	Median float64 `json:"median"`
	MAD    float64 `json:"mad"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// HistoryChange is a change point of a series.
type HistoryChange struct {
	Index     int     `json:"index"` // of the first run after the step
	Run       string  `json:"run"`
	Before    float64 `json:"before"` // medians of the segments on either side
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	P         float64 `json:"p"`
	// Regression: the change is for the worse (slower, or fewer ops/s).
	Regression bool `json:"regression"`
}

// HistoryDrift is a stretch of runs that moved steadily.
type HistoryDrift struct {
	Start     int     `json:"start"` // first run
	End       int     `json:"end"`   // last run
	StartRun  string  `json:"start_run"`
	EndRun    string  `json:"end_run"`
	PerRunPct float64 `json:"per_run_pct"`
	ChangePct float64 `json:"change_pct"`
	P         float64 `json:"p"` // Mann-Kendall
	// Regression: the drift is for the worse.
	Regression bool `json:"regression"`
}

// Series is one gated metric over the runs.
type Series struct {
	Kind         string          `json:"kind"`
	Metric       string          `json:"metric"`
	Points       []HistoryPoint  `json:"points"`
	ChangePoints []HistoryChange `json:"change_points"`
	Drifts       []HistoryDrift  `json:"drifts"`
	// LatestAfterRegression: the most recent change point is a
	// regression, and so the latest run sits after it.
	LatestAfterRegression bool `json:"latest_after_regression"`
	metric                Metric
}

// History is the runs' gated metrics over time, with change points.
type History struct {
	Workload     string   `json:"workload"`
	OrderBy      string   `json:"order_by"`
	Runs         int      `json:"runs"`
	MinEffectPct float64  `json:"min_effect_pct"`
	Alpha        float64  `json:"alpha"`
	Permutations int      `json:"permutations"`
	Method       string   `json:"method"`
	Notes        []string `json:"notes,omitempty"` // runs left out, and why
	Series       []Series `json:"series"`
}

// historyMethod names the method in history.json and history.html.
const historyMethod = "E-divisive (Matteson and James 2014) on the per-run medians, permutation test, minimum effect; a stretch a Theil-Sen line fits at least as well as a step is a drift (Mann-Kendall p)"

// FindRuns expands dirs into run folders: a folder with result.json is a
// run; any other folder stands for the run folders directly inside it.
func FindRuns(dirs []string) ([]string, error) {
	var runs []string
	for _, d := range dirs {
		st, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, inputErrorf("%s: no such folder", d)
		case err != nil:
			return nil, inputError{err}
		case !st.IsDir():
			return nil, inputErrorf("%s: not a folder (give run folders or a folder of them)", d)
		}
		if _, err := os.Stat(filepath.Join(d, results.FileName)); err == nil {
			runs = append(runs, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, inputError{err}
		}
		n := 0
		for _, e := range entries {
			sub := filepath.Join(d, e.Name())
			if _, err := os.Stat(filepath.Join(sub, results.FileName)); err == nil && e.IsDir() {
				runs = append(runs, sub)
				n++
			}
		}
		if n == 0 {
			return nil, inputErrorf("%s: no %s in it or in the folders directly inside it: not a run folder nor a folder of them", d, results.FileName)
		}
	}
	return runs, nil
}

// BuildHistory reads the run folders dirs and computes their history.
// Failed runs are left out (noted); runs of different workloads are
// refused.
func BuildHistory(dirs []string, opt HistoryOptions) (*History, error) {
	if opt.OrderBy == "" {
		opt.OrderBy = "start"
	}
	if opt.MinEffect == 0 {
		opt.MinEffect = 5
	}
	cpo := changepoint.Options{Alpha: opt.Alpha, Permutations: opt.Permutations, MinEffect: opt.MinEffect / 100, Seed: opt.Seed}
	labelKey, byLabel := strings.CutPrefix(opt.OrderBy, "label:")
	if opt.OrderBy != "start" && (!byLabel || labelKey == "") {
		return nil, inputErrorf("--order-by %q: want start or label:KEY", opt.OrderBy)
	}
	paths, err := FindRuns(dirs)
	if err != nil {
		return nil, err
	}
	h := &History{OrderBy: opt.OrderBy, MinEffectPct: opt.MinEffect, Method: historyMethod}
	type loaded struct {
		dir string
		r   *results.Result
		key string
	}
	var runs []loaded
	for _, p := range paths {
		r, err := results.Load(p)
		if err != nil {
			return nil, inputError{err}
		}
		if r.Status == results.StatusFailed {
			h.Notes = append(h.Notes, fmt.Sprintf("%s left out: a failed run (%s)", p, r.Error))
			continue
		}
		if h.Workload == "" {
			h.Workload = r.Config.Workload
		} else if r.Config.Workload != h.Workload {
			return nil, inputErrorf("%s ran workload %q, %s ran %q: a history is of one workload", runs[0].dir, h.Workload, p, r.Config.Workload)
		}
		l := loaded{dir: p, r: r}
		if byLabel {
			v, ok := runLabels(r)[labelKey]
			if !ok {
				return nil, inputErrorf("%s has no label %q to order by (run it with --label %s=...)", p, labelKey, labelKey)
			}
			l.key = v
		}
		runs = append(runs, l)
	}
	if len(runs) == 0 {
		return nil, inputErrorf("no run to make a history of (%s)", strings.Join(h.Notes, "; "))
	}
	numeric := true
	for _, l := range runs {
		if _, err := strconv.ParseFloat(l.key, 64); err != nil {
			numeric = false
		}
	}
	slices.SortStableFunc(runs, func(a, b loaded) int {
		if byLabel {
			if numeric {
				x, _ := strconv.ParseFloat(a.key, 64)
				y, _ := strconv.ParseFloat(b.key, 64)
				if c := cmp.Compare(x, y); c != 0 {
					return c
				}
			} else if c := strings.Compare(a.key, b.key); c != 0 {
				return c
			}
		}
		return a.r.Started.Compare(b.r.Started)
	})
	h.Runs = len(runs)
	gates := opt.Gates
	if gates == nil {
		gates = DefaultGates(h.Workload, kindsOf(runs[len(runs)-1].r))
	}
	for _, g := range gates {
		m, ok := MetricByName(g.Metric)
		if !ok {
			return nil, inputErrorf("--gate %s: unknown metric %q; want one of %s", g, g.Metric, MetricNames())
		}
		s := Series{Kind: g.Kind, Metric: g.Metric, metric: m}
		var values []float64
		var idx []int // series index → run index
		for i, l := range runs {
			rs := RepetitionStats(l.r, g.Kind, m)
			if len(rs.Values) == 0 {
				continue
			}
			lo, hi := slices.Min(rs.Values), slices.Max(rs.Values)
			s.Points = append(s.Points, HistoryPoint{
				Run: l.dir, RunID: l.r.RunID, Started: l.r.Started, Key: l.key, Status: l.r.Status,
				N: len(rs.Values), Median: rs.Median, MAD: rs.MAD, Min: lo, Max: hi,
			})
			values = append(values, rs.Median)
			idx = append(idx, i)
		}
		if len(s.Points) == 0 {
			return nil, inputErrorf("--gate %s: no run measured %s", g, g.Kind)
		}
		res := changepoint.Detect(values, cpo)
		for _, cp := range res.ChangePoints {
			s.ChangePoints = append(s.ChangePoints, HistoryChange{
				Index: cp.Index, Run: s.Points[cp.Index].Run, Before: cp.Before, After: cp.After,
				ChangePct: 100 * cp.Change, P: cp.P, Regression: worse(m, 100*cp.Change, 0),
			})
		}
		for _, d := range res.Drifts {
			s.Drifts = append(s.Drifts, HistoryDrift{
				Start: d.Start, End: d.End - 1, StartRun: s.Points[d.Start].Run, EndRun: s.Points[d.End-1].Run,
				PerRunPct: 100 * d.PerStep, ChangePct: 100 * d.Change, P: d.P, Regression: worse(m, 100*d.Change, 0),
			})
		}
		if n := len(s.ChangePoints); n > 0 && s.ChangePoints[n-1].Regression {
			s.LatestAfterRegression = true
		}
		if len(values) < 2*max(cpo.MinSize, 3) {
			h.Notes = append(h.Notes, fmt.Sprintf("%s %s: %s, too few to find change points (6 at least)", g.Kind, g.Metric, plural(len(values), "run")))
		}
		h.Series = append(h.Series, s)
	}
	h.Alpha, h.Permutations = cmp.Or(opt.Alpha, 0.01), cmp.Or(opt.Permutations, 999)
	return h, nil
}

// Regressed reports whether the latest run of any series sits after a
// regression change point: what a scheduled job alerts on.
func (h *History) Regressed() bool {
	return slices.ContainsFunc(h.Series, func(s Series) bool { return s.LatestAfterRegression })
}

// Lines are the text summary, one or more per series.
func (h *History) Lines() []string {
	var out []string
	out = append(out, fmt.Sprintf("history of %s: %s ordered by %s; change points by E-divisive (p ≤ %g, %d permutations), at least %g%%",
		h.Workload, plural(h.Runs, "run"), h.OrderBy, h.Alpha, h.Permutations, h.MinEffectPct))
	for _, s := range h.Series {
		last := s.Points[len(s.Points)-1]
		line := fmt.Sprintf("%s %s: %s, latest %s", s.Kind, s.Metric, plural(len(s.Points), "run"), s.metric.Format(last.Median))
		if len(s.ChangePoints) == 0 && len(s.Drifts) == 0 {
			line += "; no change point"
		}
		out = append(out, line)
		for _, c := range s.ChangePoints {
			what := "improvement"
			if c.Regression {
				what = "REGRESSION"
			}
			out = append(out, fmt.Sprintf("  change point at run %d (%s): %s → %s, %+.1f%%, p=%.3g: %s",
				c.Index+1, c.Run, s.metric.Format(c.Before), s.metric.Format(c.After), c.ChangePct, c.P, what))
		}
		for _, d := range s.Drifts {
			what := "improving"
			if d.Regression {
				what = "worsening"
			}
			out = append(out, fmt.Sprintf("  drift over runs %d–%d (%s … %s): %+.2f%% per run, %+.1f%% in all, Mann-Kendall p=%.3g: %s",
				d.Start+1, d.End+1, d.StartRun, d.EndRun, d.PerRunPct, d.ChangePct, d.P, what))
		}
		if s.LatestAfterRegression {
			out = append(out, fmt.Sprintf("  the latest run (%s) sits after a regression", last.Run))
		}
	}
	for _, n := range h.Notes {
		out = append(out, "note: "+n)
	}
	return out
}

// WriteText writes Lines.
func (h *History) WriteText(w io.Writer) error {
	for _, l := range h.Lines() {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// JSON is history.json.
func (h *History) JSON() ([]byte, error) {
	out := struct {
		*History
		Regressed bool `json:"latest_after_regression"`
	}{h, h.Regressed()}
	return marshalIndent(out)
}
