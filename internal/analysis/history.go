package analysis

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/report"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/stats/changepoint"
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
	Gates []report.Gate
	// MinEffect is the smallest change of the median, in percent, that a
	// change point or drift must have (default 5, compare's threshold).
	MinEffect float64
	// Alpha is the permutation test's level (default 0.01); Permutations
	// its count (default 999); Seed makes its p-values reproducible.
	Alpha        float64
	Permutations int
	Seed         uint64
	// Progress, when not nil, is told what a long history is doing
	// ("reg p50: window 40 of 199"), from several goroutines one call at
	// a time.
	Progress func(string)
	// XLabel is what the x axis of history.html names each run by:
	// "date" (its start), or a label KEY (its --label KEY value). ""
	// (the default): commit when a run carries --label commit=..., else
	// the date.
	XLabel string
}

// HistoryPoint is one run of a series.
type HistoryPoint struct {
	Run     string    `json:"run"`
	RunID   string    `json:"run_id,omitempty"`
	Started time.Time `json:"started"`
	Key     string    `json:"order_key,omitempty"` // the label value, when ordered by one
	X       string    `json:"x,omitempty"`         // what the x axis names it by (History.XLabel)
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
	// Regression: the change is for the worse (slower, or fewer ops/s),
	// and the configuration did not change there.
	Regression bool `json:"regression"`
	// ConfigChange lists what differs in configuration between the runs
	// either side of the step ("procs: 2 → 4"): the step is the
	// configuration's, not the code's, and no regression.
	ConfigChange []string `json:"config_change,omitempty"`
}

// HistoryConfigChange is a run whose configuration differs from the run
// before it.
type HistoryConfigChange struct {
	Index    int      `json:"index"` // of the run, in order
	Run      string   `json:"run"`
	Previous string   `json:"previous_run"`
	Changes  []string `json:"changes"` // "procs: 2 → 4"
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
	// TooFew says why no change point was looked for: too few runs for
	// the permutation test to find one at the level asked.
	TooFew string `json:"too_few,omitempty"`
	metric report.Metric
}

// History is the runs' gated metrics over time, with change points.
type History struct {
	Workload     string  `json:"workload"`
	OrderBy      string  `json:"order_by"`
	Runs         int     `json:"runs"`
	MinEffectPct float64 `json:"min_effect_pct"`
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
	Method       string  `json:"method"`
	// XLabel is what each point's X names: "date" or a label's key.
	XLabel string   `json:"x_label,omitempty"`
	Notes  []string `json:"notes,omitempty"` // runs left out, and why
	// ConfigChanges are the runs whose configuration differs from the
	// run before them: a change point there is not the code's.
	ConfigChanges []HistoryConfigChange `json:"config_changes,omitempty"`
	Series        []Series              `json:"series"`
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
			return nil, results.InputErrorf("%s: no such folder", d)
		case err != nil:
			return nil, results.InputError(err)
		case !st.IsDir():
			return nil, results.InputErrorf("%s: not a folder (give run folders or a folder of them)", d)
		}
		if _, err := os.Stat(filepath.Join(d, results.FileName)); err == nil {
			runs = append(runs, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, results.InputError(err)
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
			return nil, results.InputErrorf("%s: no %s in it or in the folders directly inside it: not a run folder nor a folder of them", d, results.FileName)
		}
	}
	return runs, nil
}

// BuildHistory reads the run folders dirs and computes their history.
// Failed runs are left out (noted); runs of different workloads are
// refused.
func BuildHistory(dirs []string, opt HistoryOptions) (*History, error) {
	return BuildHistoryContext(context.Background(), dirs, opt)
}

// BuildHistoryContext is BuildHistory, stopped with ctx's error when ctx
// is done.
func BuildHistoryContext(ctx context.Context, dirs []string, opt HistoryOptions) (*History, error) {
	opt, labelKey, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	paths, err := FindRuns(dirs)
	if err != nil {
		return nil, err
	}
	h := &History{OrderBy: opt.OrderBy, MinEffectPct: opt.MinEffect, Method: historyMethod}
	runs, err := h.loadRuns(ctx, paths, labelKey, opt.Progress)
	if err != nil {
		return nil, err
	}
	orderRuns(runs, labelKey != "")
	if h.XLabel, err = xLabelOf(opt.XLabel, runs); err != nil {
		return nil, err
	}
	for i := range runs {
		runs[i].x = runs[i].xValue(h.XLabel)
	}
	h.Runs = len(runs)
	h.ConfigChanges = configChanges(runs)
	gates := opt.Gates
	if gates == nil {
		last := runs[len(runs)-1].r
		gates = report.DefaultGates(last, results.KindsOf(last))
	}
	cpo := changepoint.Options{Alpha: opt.Alpha, Permutations: opt.Permutations, MinEffect: opt.MinEffect / 100, Seed: opt.Seed}
	for _, g := range gates {
		if opt.Progress != nil {
			cpo.Progress = func(done, total int) {
				opt.Progress(fmt.Sprintf("%s %s: window %d of %d", g.Kind, g.Metric, done, total))
			}
		}
		s, err := buildSeries(ctx, g, runs, cpo)
		if err != nil {
			return nil, err
		}
		if s.TooFew != "" {
			h.Notes = append(h.Notes, fmt.Sprintf("%s %s: %s", g.Kind, g.Metric, s.TooFew))
		}
		h.Series = append(h.Series, s)
	}
	h.Alpha, h.Permutations = cmp.Or(opt.Alpha, 0.01), cmp.Or(opt.Permutations, 999)
	return h, nil
}

// historyRun is a run folder of a history, with the value of the label
// it is ordered by ("" when ordered by start time).
type historyRun struct {
	dir string
	r   *results.Result
	key string
	x   string // what the x axis names it by
}

// xLabelOf is the x axis's naming of the runs: asked, else commit when a
// run has that label (CI runs are ordered by what they measured), else
// the date.
func xLabelOf(asked string, runs []historyRun) (string, error) {
	has := func(key string) bool {
		return slices.ContainsFunc(runs, func(run historyRun) bool {
			_, ok := run.r.Labels[key]
			return ok
		})
	}
	switch {
	case asked == "date":
		return asked, nil
	case asked != "" && !has(asked):
		return "", results.InputErrorf("--x-label %q: no run has that label (want date or the key of a --label the runs carry)", asked)
	case asked != "":
		return asked, nil
	case has("commit"):
		return "commit", nil
	}
	return "date", nil
}

// xValue is the run's name on an x axis naming runs by xl.
func (run historyRun) xValue(xl string) string {
	if xl == "date" {
		return run.r.Started.UTC().Format("2006-01-02 15:04")
	}
	if v, ok := run.r.Labels[xl]; ok {
		return v
	}
	return "–" // this run has no such label
}

// withDefaults fills in opt's order and minimum effect and checks the
// order: labelKey is the label the runs are ordered by, "" for their
// start times.
func (opt HistoryOptions) withDefaults() (_ HistoryOptions, labelKey string, _ error) {
	if opt.OrderBy == "" {
		opt.OrderBy = "start"
	}
	if opt.MinEffect == 0 {
		opt.MinEffect = 5
	}
	labelKey, byLabel := strings.CutPrefix(opt.OrderBy, "label:")
	if opt.OrderBy != "start" && (!byLabel || labelKey == "") {
		return opt, "", results.InputErrorf("--order-by %q: want start or label:KEY", opt.OrderBy)
	}
	if !byLabel {
		labelKey = ""
	}
	return opt, labelKey, nil
}

// loadRuns loads the runs at paths and sets h's workload. A failed run is
// left out with a note: what it measured is no point of a series. A run
// of another workload, or without the label ordered by, is refused: the
// history would have no one meaning or no one order.
func (h *History) loadRuns(ctx context.Context, paths []string, labelKey string, progress func(string)) ([]historyRun, error) {
	var runs []historyRun
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil && i%500 == 0 && i > 0 {
			progress(fmt.Sprintf("read %d of %d runs", i, len(paths)))
		}
		r, err := results.Load(p)
		if err != nil {
			return nil, results.InputError(err)
		}
		if r.Status == results.StatusFailed {
			h.Notes = append(h.Notes, fmt.Sprintf("%s left out: a failed run (%s)", p, r.Error))
			continue
		}
		if h.Workload == "" {
			h.Workload = r.Config.Workload
		} else if r.Config.Workload != h.Workload {
			return nil, results.InputErrorf("%s ran workload %q, %s ran %q: a history is of one workload", runs[0].dir, h.Workload, p, r.Config.Workload)
		}
		run := historyRun{dir: p, r: r}
		if labelKey != "" {
			v, ok := r.Labels[labelKey]
			if !ok {
				return nil, results.InputErrorf("%s has no label %q to order by (run it with --label %s=...)", p, labelKey, labelKey)
			}
			run.key = v
		}
		runs = append(runs, run)
	}
	if len(runs) == 0 {
		return nil, results.InputErrorf("no run to make a history of (%s)", strings.Join(h.Notes, "; "))
	}
	return runs, nil
}

// orderRuns sorts runs by start time, or by their label values first:
// numerically when all are numbers (fw 9 before fw 10), else as text.
// Runs with the same label stay in start order.
func orderRuns(runs []historyRun, byLabel bool) {
	numeric := true
	for _, run := range runs {
		if _, err := strconv.ParseFloat(run.key, 64); err != nil {
			numeric = false
		}
	}
	slices.SortStableFunc(runs, func(a, b historyRun) int {
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
}

// configChanges are the ordered runs whose configuration differs from the
// run before them.
func configChanges(runs []historyRun) []HistoryConfigChange {
	var out []HistoryConfigChange
	for i := 1; i < len(runs); i++ {
		if d := report.ConfigDiff(runs[i-1].r, runs[i].r); len(d) > 0 {
			out = append(out, HistoryConfigChange{Index: i, Run: runs[i].dir, Previous: runs[i-1].dir, Changes: d})
		}
	}
	return out
}

// buildSeries is gate g's metric over the ordered runs, with its change
// points and drifts.
func buildSeries(ctx context.Context, g report.Gate, runs []historyRun, cpo changepoint.Options) (Series, error) {
	m, ok := report.GateMetric(g)
	if !ok {
		return Series{}, results.InputErrorf("--gate %s: unknown metric %q; want one of %s", g, g.Metric, report.MetricNames())
	}
	s := Series{Kind: g.Kind, Metric: g.Metric, metric: m}
	points, runAt := seriesPoints(runs, g.Kind, m)
	if len(points) == 0 {
		return Series{}, results.InputErrorf("--gate %s: no run measured %s", g, g.Kind)
	}
	s.Points = points
	values := make([]float64, len(points))
	for i, pt := range points {
		values[i] = pt.Median
	}
	if side := changepoint.MinSide(cpo); len(values) < changepoint.MinPoints(cpo) {
		s.TooFew = fmt.Sprintf("%s: a step needs at least %d runs on each side at alpha %g", units.Plural(len(values), "run"), side, cmp.Or(cpo.Alpha, 0.01))
		return s, nil
	}
	res, err := changepoint.DetectContext(ctx, values, cpo)
	if err != nil {
		return Series{}, err
	}
	s.ChangePoints = historyChanges(res.ChangePoints, points, runs, runAt, m)
	s.Drifts = historyDrifts(res.Drifts, points, m)
	if n := len(s.ChangePoints); n > 0 && s.ChangePoints[n-1].Regression {
		s.LatestAfterRegression = true
	}
	return s, nil
}

// seriesPoints are the points of kind's metric m, one per run that
// measured kind; runAt maps a point to its run, since a run that did not
// measure the kind has none.
func seriesPoints(runs []historyRun, kind string, m report.Metric) (points []HistoryPoint, runAt []int) {
	for i, run := range runs {
		rs := report.RepetitionStats(run.r, kind, m)
		if len(rs.Values) == 0 {
			continue
		}
		lo, hi := slices.Min(rs.Values), slices.Max(rs.Values)
		points = append(points, HistoryPoint{
			Run: run.dir, RunID: run.r.RunID, Started: run.r.Started, Key: run.key, X: run.x, Status: run.r.Status,
			N: len(rs.Values), Median: rs.Median, MAD: rs.MAD, Min: lo, Max: hi,
		})
		runAt = append(runAt, i)
	}
	return points, runAt
}

// historyChanges are the change points found in the series points of m.
// A step across a change of configuration is the configuration's, so it
// is never a regression however much worse the runs after it are.
func historyChanges(cps []changepoint.ChangePoint, points []HistoryPoint, runs []historyRun, runAt []int, m report.Metric) []HistoryChange {
	var out []HistoryChange
	for _, cp := range cps {
		// The step lies between two points of the series, which may
		// be runs apart when a run did not measure the kind.
		var cfg []string
		if cp.Index > 0 {
			cfg = report.ConfigDiff(runs[runAt[cp.Index-1]].r, runs[runAt[cp.Index]].r)
		}
		out = append(out, HistoryChange{
			Index: cp.Index, Run: points[cp.Index].Run, Before: cp.Before, After: cp.After,
			ChangePct: 100 * cp.Change, P: cp.P, Regression: len(cfg) == 0 && m.Worse(100*cp.Change, 0),
			ConfigChange: cfg,
		})
	}
	return out
}

// historyDrifts are the drifts found in the series points of m; a drift's
// End becomes its last point, as the reports name it.
func historyDrifts(drifts []changepoint.Drift, points []HistoryPoint, m report.Metric) []HistoryDrift {
	var out []HistoryDrift
	for _, d := range drifts {
		out = append(out, HistoryDrift{
			Start: d.Start, End: d.End - 1, StartRun: points[d.Start].Run, EndRun: points[d.End-1].Run,
			PerRunPct: 100 * d.PerStep, ChangePct: 100 * d.Change, P: d.P, Regression: m.Worse(100*d.Change, 0),
		})
	}
	return out
}

// ConfigWarnings say, one line per run whose configuration differs from
// the run before it, which run and what differs.
func (h *History) ConfigWarnings() []string {
	var out []string
	for _, c := range h.ConfigChanges {
		out = append(out, fmt.Sprintf("run %d (%s) differs in configuration from run %d (%s): %s; a change point there is not attributed to the code",
			c.Index+1, c.Run, c.Index, c.Previous, strings.Join(c.Changes, ", ")))
	}
	return out
}

// configChangeAt is the configuration change at run, if any.
func (h *History) configChangeAt(run string) *HistoryConfigChange {
	for i := range h.ConfigChanges {
		if h.ConfigChanges[i].Run == run {
			return &h.ConfigChanges[i]
		}
	}
	return nil
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
		h.Workload, units.Plural(h.Runs, "run"), h.OrderBy, h.Alpha, h.Permutations, h.MinEffectPct))
	for _, s := range h.Series {
		last := s.Points[len(s.Points)-1]
		line := fmt.Sprintf("%s %s: %s, latest %s", s.Kind, s.Metric, units.Plural(len(s.Points), "run"), s.metric.Format(last.Median))
		switch {
		case s.TooFew != "":
			line += "; too few to look for a change point"
		case len(s.ChangePoints) == 0 && len(s.Drifts) == 0:
			line += "; no change point"
		}
		out = append(out, line)
		for _, c := range s.ChangePoints {
			what := "improvement"
			switch {
			case len(c.ConfigChange) > 0:
				what = "configuration changed (" + strings.Join(c.ConfigChange, ", ") + "), not attributed to the code"
			case c.Regression:
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
			line := fmt.Sprintf("  drift over runs %d–%d (%s … %s): %+.2f%% per run, %+.1f%% in all, Mann-Kendall p=%.3g: %s",
				d.Start+1, d.End+1, d.StartRun, d.EndRun, d.PerRunPct, d.ChangePct, d.P, what)
			for _, pt := range s.Points[d.Start+1 : d.End+1] {
				if c := h.configChangeAt(pt.Run); c != nil {
					line += fmt.Sprintf("; the configuration changed within it, at %s", c.Run)
				}
			}
			out = append(out, line)
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
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DuplicateRuns of a history: its runs are the points of its series.
func (h *History) DuplicateRuns() []string {
	var most []HistoryPoint
	for _, s := range h.Series {
		if len(s.Points) > len(most) {
			most = s.Points
		}
	}
	var dirs, ids []string
	for _, p := range most {
		dirs, ids = append(dirs, p.Run), append(ids, p.RunID)
	}
	return report.DuplicateFolders(dirs, ids)
}
