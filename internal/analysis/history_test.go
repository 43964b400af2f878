package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/xrcbench/xrcbench/internal/golden"
	"github.com/xrcbench/xrcbench/report"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

// writeHistory writes n lifecycle run folders under a new folder, started
// a day apart, whose reg and unreg_last p50 in run i are level(i) × 2µs
// with Gaussian noise of sd (a fraction), over 5 repetitions.
func writeHistory(t *testing.T, n int, sd float64, seed uint64, level func(i int) float64) string {
	t.Helper()
	return writeHistoryWith(t, n, sd, seed, level, nil)
}

// writeHistoryWith is writeHistory with each run's result passed to
// configure (when not nil) before it is written.
func writeHistoryWith(t *testing.T, n int, sd float64, seed uint64, level func(i int) float64, configure func(i int, r *results.Result)) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 3))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		runLevel := 2000 * level(i) * (1 + sd*rng.NormFloat64())
		vals := map[string][]float64{}
		for _, k := range []string{results.OpReg, results.OpUnregLast} {
			for range 5 {
				// Repetitions scatter a little around the run's level.
				vals[k] = append(vals[k], runLevel*(1+0.005*rng.NormFloat64()))
			}
		}
		r := resultstest.Lifecycle(vals)
		ordered := func(s results.OpStats) results.OpStats {
			p50 := s.NS.P50
			s.NS = results.Latency{Min: p50 / 2, P50: p50, P90: 2 * p50, P99: 3 * p50, P999: 4 * p50, Max: 5 * p50, Mean: float64(p50)}
			return s
		}
		for k, s := range r.Ops {
			r.Ops[k] = ordered(s)
		}
		for _, rep := range r.Repetitions {
			for k, s := range rep.Ops {
				rep.Ops[k] = ordered(s)
			}
		}
		r.Config.Procs, r.Config.Threads = 1, 1
		r.Started = t0.Add(time.Duration(i) * 24 * time.Hour)
		r.Finished = r.Started.Add(time.Minute)
		if configure != nil {
			configure(i, r)
		}
		// Folder names that do not sort in start order: the history must
		// order by time, not by name.
		dir := filepath.Join(root, fmt.Sprintf("run-%02d", (i*7)%n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func step(at int, f float64) func(int) float64 {
	return func(i int) float64 {
		if i >= at {
			return f
		}
		return 1
	}
}

func TestHistoryStep(t *testing.T) {
	root := writeHistory(t, 30, 0.03, 1, step(18, 1.08))
	h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h.Runs != 30 || len(h.Series) != 2 {
		t.Fatalf("%d runs, %d series; want 30 and the lifecycle gates reg.p50, unreg_last.p50", h.Runs, len(h.Series))
	}
	for _, s := range h.Series {
		for i := 1; i < len(s.Points); i++ {
			if !s.Points[i].Started.After(s.Points[i-1].Started) {
				t.Fatalf("%s: points not in start order at %d", s.Kind, i)
			}
		}
		if len(s.ChangePoints) != 1 {
			t.Errorf("%s %s: change points %+v, want one", s.Kind, s.Metric, s.ChangePoints)
			continue
		}
		c := s.ChangePoints[0]
		if c.Index < 17 || c.Index > 19 || !c.Regression || c.ChangePct < 5 || c.Run != s.Points[c.Index].Run {
			t.Errorf("%s: %+v, want a regression of about +8%% at run 18±1", s.Kind, c)
		}
		if !s.LatestAfterRegression {
			t.Errorf("%s: the latest run is not after the regression", s.Kind)
		}
	}
	if !h.Regressed() {
		t.Error("Regressed() false after a +8% step")
	}
	js, err := h.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Regressed bool `json:"latest_after_regression"`
		Series    []struct {
			ChangePoints []struct {
				Index int     `json:"index"`
				P     float64 `json:"p"`
			} `json:"change_points"`
		} `json:"series"`
	}
	if err := json.Unmarshal(js, &back); err != nil || !back.Regressed || len(back.Series) != 2 || len(back.Series[0].ChangePoints) != 1 || back.Series[0].ChangePoints[0].P <= 0 {
		t.Errorf("history.json: %v %+v", err, back)
	}
	page, err := h.HTML(root, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", `href="run-`, "/report.html", "change point before run", "latest run after a regression"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("history.html lacks %q", want)
		}
	}
	if n := bytes.Count(page, []byte("<circle")); n != 60 {
		t.Errorf("%d points plotted, want 60 (30 runs × 2 series)", n)
	}
}

// A step down in latency is an improvement: found, but no alert.
func TestHistoryImprovement(t *testing.T) {
	h, err := BuildHistory([]string{writeHistory(t, 30, 0.03, 1, step(18, 0.9))}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Series {
		if len(s.ChangePoints) != 1 || s.ChangePoints[0].Regression {
			t.Errorf("%s: %+v, want one improvement", s.Kind, s.ChangePoints)
		}
	}
	if h.Regressed() {
		t.Error("an improvement raised the alert")
	}
}

func TestHistoryFlatAndDrift(t *testing.T) {
	flat, err := BuildHistory([]string{writeHistory(t, 30, 0.03, 5, func(int) float64 { return 1 })}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range flat.Series {
		if len(s.ChangePoints)+len(s.Drifts) != 0 {
			t.Errorf("flat %s: %+v %+v", s.Kind, s.ChangePoints, s.Drifts)
		}
	}
	drift, err := BuildHistory([]string{writeHistory(t, 30, 0.01, 5, func(i int) float64 { return 1 + 0.005*float64(i) })}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range drift.Series {
		if len(s.ChangePoints) != 0 || len(s.Drifts) != 1 || !s.Drifts[0].Regression {
			t.Errorf("drift %s: %+v %+v, want one worsening drift and no change point", s.Kind, s.ChangePoints, s.Drifts)
		}
	}
	if drift.Regressed() {
		t.Error("a drift raised the step alert")
	}
	if lines := strings.Join(drift.Lines(), "\n"); !strings.Contains(lines, "drift over runs 1–30") {
		t.Errorf("summary does not name the drift:\n%s", lines)
	}
}

func TestHistoryRefuses(t *testing.T) {
	root := writeHistory(t, 3, 0.01, 1, step(99, 1))
	other := t.TempDir()
	r, err := results.Load(filepath.Join(root, "run-00"))
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Workload = "steady"
	if err := results.Write(other, r); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	notDir := filepath.Join(empty, "file")
	os.WriteFile(notDir, nil, 0o644)
	for name, tc := range map[string]struct {
		dirs []string
		opt  HistoryOptions
	}{
		"missing":          {[]string{filepath.Join(empty, "nope")}, HistoryOptions{}},
		"empty folder":     {[]string{empty}, HistoryOptions{}},
		"a file":           {[]string{notDir}, HistoryOptions{}},
		"two workloads":    {[]string{root, other}, HistoryOptions{}},
		"bad order":        {[]string{root}, HistoryOptions{OrderBy: "name"}},
		"no such label":    {[]string{root}, HistoryOptions{OrderBy: "label:commit"}},
		"gate not in runs": {[]string{root}, HistoryOptions{Gates: []report.Gate{{Kind: "create", Metric: "p50"}}}},
	} {
		if _, err := BuildHistory(tc.dirs, tc.opt); !errors.Is(err, results.ErrInput) {
			t.Errorf("%s: %v, want an input error", name, err)
		}
	}
}

// --order-by label:KEY orders by the label, numerically when every value
// is a number (9 before 10), whatever the start times.
func TestHistoryOrderByLabel(t *testing.T) {
	root := writeHistory(t, 12, 0.01, 1, step(99, 1))
	paths, err := FindRuns([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		r, err := results.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		r.Labels = map[string]string{"build": fmt.Sprint(100 - i)} // the reverse of the folder order
		if err := results.Write(p, r); err != nil {
			t.Fatal(err)
		}
	}
	h, err := BuildHistory([]string{root}, HistoryOptions{OrderBy: "label:build"})
	if err != nil {
		t.Fatal(err)
	}
	pts := h.Series[0].Points
	for i := range pts {
		if want := fmt.Sprint(89 + i); pts[i].Key != want {
			t.Fatalf("point %d: build %s, want %s (numeric order)", i, pts[i].Key, want)
		}
	}
}

// A step where the configuration changed is the configuration's, not the
// code's: history warns once per change, naming the run and what differs,
// marks the change point "configuration changed" instead of a regression,
// and does not alert. A regression elsewhere in the same series still
// alerts.
func TestHistoryConfigChange(t *testing.T) {
	procs := func(from int) func(int, *results.Result) {
		return func(i int, r *results.Result) {
			r.Config.ProviderOpts = map[string]string{"sim_cost": "reg=2µs"}
			r.Environment.Device = &results.Device{Name: "sim0", NUMANode: -1}
			if i >= from {
				r.Config.Procs = 2
				r.Config.QPState = "rtr"
				r.Config.ProviderOpts["sim_cost"] = "reg=2µs,modify=5µs"
			}
		}
	}
	for _, tc := range []struct {
		name       string
		level      func(int) float64
		configure  func(int, *results.Result)
		regressed  bool
		wantReason string // of the change point at run 19
	}{
		{"step at the change", step(18, 1.5), procs(18), false,
			"configuration changed (procs: 1 → 2, qp_state: reset → rtr, sim_cost: reg=2µs → reg=2µs,modify=5µs), not attributed to the code"},
		{"step elsewhere", step(18, 1.5), procs(9), true, "REGRESSION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeHistoryWith(t, 30, 0.03, 1, tc.level, tc.configure)
			h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.ConfigChanges) != 1 || len(h.ConfigChanges[0].Changes) != 3 {
				t.Fatalf("configuration changes %+v, want one of 3 keys", h.ConfigChanges)
			}
			warns := h.ConfigWarnings()
			at := h.ConfigChanges[0]
			if len(warns) != 1 || !strings.Contains(warns[0], fmt.Sprintf("run %d (%s) differs in configuration from run %d", at.Index+1, at.Run, at.Index)) ||
				!strings.Contains(warns[0], "procs: 1 → 2") {
				t.Errorf("warnings %q, want one naming run %d and procs", warns, at.Index+1)
			}
			if h.Regressed() != tc.regressed {
				t.Errorf("Regressed() = %v, want %v", h.Regressed(), tc.regressed)
			}
			for _, s := range h.Series {
				if len(s.ChangePoints) != 1 || s.ChangePoints[0].Index != 18 {
					t.Errorf("%s: change points %+v, want one at run 19", s.Kind, s.ChangePoints)
					continue
				}
				c := s.ChangePoints[0]
				if c.Regression != tc.regressed || (len(c.ConfigChange) > 0) == tc.regressed {
					t.Errorf("%s: %+v, regression %v", s.Kind, c, tc.regressed)
				}
			}
			lines := strings.Join(h.Lines(), "\n")
			if !strings.Contains(lines, tc.wantReason) {
				t.Errorf("summary does not say %q:\n%s", tc.wantReason, lines)
			}
			page, err := h.HTML(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(page, []byte(`class="config-change"`)); n != 2 {
				t.Errorf("history.html marks %d configuration changes, want 2 (one per series)", n)
			}
			if !bytes.Contains(page, []byte("Configuration changed: run ")) {
				t.Error("history.html does not list the configuration change")
			}
			if tc.regressed {
				return
			}
			// The text and history.json, with the temporary folder named RUNS.
			js, err := h.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			for _, w := range warns {
				fmt.Fprintln(&text, "warning: "+w)
			}
			h.WriteText(&text)
			golden.Check(t, "history-config.txt", bytes.ReplaceAll(text.Bytes(), []byte(root), []byte("RUNS")))
			golden.Check(t, "history-config.json", bytes.ReplaceAll(js, []byte(root), []byte("RUNS")))
		})
	}
}

// Too few runs for the permutation test to reach alpha: the history says
// how many a step needs, and never "no change point", which would read as
// "nothing changed". At 10 runs it looks (and finds the step).
func TestHistoryTooFewRuns(t *testing.T) {
	for _, tc := range []struct {
		n       int
		alpha   float64
		tooFew  string // "" looks
		summary string
	}{
		{8, 0, "8 runs: a step needs at least 5 runs on each side at alpha 0.01", "8 runs, latest 3.01µs; too few to look for a change point"},
		{9, 0, "9 runs: a step needs at least 5 runs on each side at alpha 0.01", "too few to look for a change point"},
		{8, 0.05, "", "change point at run 5"},
		{10, 0, "", "change point at run 6"},
	} {
		t.Run(fmt.Sprintf("%d runs at %g", tc.n, tc.alpha), func(t *testing.T) {
			root := writeHistory(t, tc.n, 0.01, 1, step(tc.n/2, 1.5))
			h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1, Alpha: tc.alpha})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Join(h.Lines(), "\n")
			for _, s := range h.Series {
				if s.TooFew != tc.tooFew {
					t.Errorf("%s: too few %q, want %q", s.Kind, s.TooFew, tc.tooFew)
				}
			}
			if !strings.Contains(lines, tc.summary) || tc.tooFew != "" && (strings.Contains(lines, "no change point") || !strings.Contains(lines, "note: reg p50: "+tc.tooFew)) {
				t.Errorf("summary, want %q and the note:\n%s", tc.summary, lines)
			}
		})
	}
}

// The device's firmware and the runs' labels are never a configuration
// difference (a history follows firmware); the settings compare names are.
func TestConfigDiff(t *testing.T) {
	base := func() *results.Result {
		return &results.Result{
			Config: results.Config{Workload: "steady", WorkloadSpec: "name: steady\n", Provider: "sim", Procs: 1, Threads: 1, QPs: 16, QPState: "rtr",
				ProviderOpts: map[string]string{"sim_cost": "reg=2us", "sim_semantics": "legacy"}},
			Environment: results.Environment{Device: &results.Device{Name: "sim0", FWVer: "1.0", NUMANode: -1}},
			Labels:      map[string]string{"fw": "1.0"},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(r *results.Result)
		want   []string
	}{
		{"firmware", func(r *results.Result) { r.Environment.Device.FWVer = "2.0" }, nil},
		{"labels", func(r *results.Result) { r.Labels = map[string]string{"fw": "2.0", "board": "b7"} }, nil},
		{"provider", func(r *results.Result) { r.Config.Provider = "rdma" }, []string{"provider: sim → rdma"}},
		{"device", func(r *results.Result) { r.Environment.Device.Name = "mlx5_0" }, []string{"device: sim0 → mlx5_0"}},
		{"workload", func(r *results.Result) { r.Config.Workload = "churn" }, []string{"workload: steady → churn"}},
		{"procs and threads", func(r *results.Result) { r.Config.Procs, r.Config.Threads = 2, 4 }, []string{"procs: 1 → 2", "threads: 1 → 4"}},
		{"qps", func(r *results.Result) { r.Config.QPs = 32 }, []string{"qps: 16 → 32"}},
		{"qp state", func(r *results.Result) { r.Config.QPState = "init" }, []string{"qp_state: rtr → init"}},
		{"cost model", func(r *results.Result) { r.Config.ProviderOpts["sim_cost"] = "reg=3us" }, []string{"sim_cost: reg=2us → reg=3us"}},
		{"semantics", func(r *results.Result) { r.Config.ProviderOpts["sim_semantics"] = "upstream" }, []string{"sim_semantics: legacy → upstream"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.change(b)
			if got := report.ConfigDiff(base(), b); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ConfigDiff = %q, want %q", got, tc.want)
			}
		})
	}
}

// history.html's axes say what they show: the x axis names each run by
// its commit when runs carry one (else its date, or the label asked
// for), the y axis the metric and unit; a flat series of 1% noise spans
// at most a fifth of the plot's height, not all of it; a run without a
// report.html links to its result.json, not to a dead page.
func TestHistoryHTMLAxes(t *testing.T) {
	withCommit := func(i int, r *results.Result) {
		r.Labels = map[string]string{"commit": fmt.Sprintf("%040x", 0xabc0+i), "board": fmt.Sprint("b", i)}
	}
	tests := []struct {
		name      string
		configure func(int, *results.Result)
		xLabel    string
		wantX     string // the first run's tick
		wantTitle string
	}{
		{"commit by default", withCommit, "", "00000000", "--label commit, in order of start time"},
		{"date without commit", nil, "", "01-01 00:00", "run start (UTC), in order of start time"},
		{"a label asked for", withCommit, "board", "b0", "--label board, in order of start time"},
		{"date asked for", withCommit, "date", "01-01 00:00", "run start (UTC), in order of start time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeHistoryWith(t, 12, 0.01, 1, step(99, 1), tt.configure)
			h, err := BuildHistory([]string{root}, HistoryOptions{XLabel: tt.xLabel, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			withReport := map[string]bool{}
			for i, pt := range h.Series[0].Points {
				withReport[pt.Run] = i%2 == 0
			}
			page, err := h.HTML(root, func(run string) bool { return withReport[run] })
			if err != nil {
				t.Fatal(err)
			}
			s := string(page)
			for _, want := range []string{">" + tt.wantX + "<", ">" + tt.wantTitle + "<", ">reg p50 (latency)<", "/" + results.FileName + `"`, "/" + report.HTMLFile + `"`} {
				if !strings.Contains(s, want) {
					t.Errorf("history.html lacks %q", want)
				}
			}
			if strings.Contains(s, "run (in order)") {
				t.Error("history.html still says run (in order)")
			}
			// Each point links to what exists.
			for _, pt := range h.Series[0].Points {
				rel, _ := filepath.Rel(root, pt.Run)
				want := filepath.ToSlash(filepath.Join(rel, map[bool]string{true: report.HTMLFile, false: results.FileName}[withReport[pt.Run]]))
				if !strings.Contains(s, `href="`+want+`"`) {
					t.Errorf("point %s: no link to %s", pt.Run, want)
				}
			}
		})
	}
	// The y axis of a flat, 1%-noisy series: the points' spread is a
	// small part of the plot's height.
	root := writeHistory(t, 20, 0.01, 2, step(99, 1))
	h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := h.Series[0]
	lo, hi := yRange(s.Points)
	var meds []float64
	for _, pt := range s.Points {
		meds = append(meds, pt.Median)
	}
	if share := (slices.Max(meds) - slices.Min(meds)) / (hi - lo); share > 0.5 {
		t.Errorf("the medians (%.0f–%.0f) fill %.0f%% of the y axis %.0f–%.0f: noise drawn as a cliff", slices.Min(meds), slices.Max(meds), 100*share, lo, hi)
	}
	if _, err := BuildHistory([]string{root}, HistoryOptions{XLabel: "nosuch"}); err == nil || !strings.Contains(err.Error(), `--x-label "nosuch"`) {
		t.Errorf("an --x-label no run has: %v", err)
	}
}
