package report

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// RunSet is one column of an N-way comparison: one run folder, or every
// folder that carries one value of a label (compare --by), whose
// repetitions are pooled.
type RunSet struct {
	Name string
	Runs []*Run
}

// MultiComparison compares several run sets of one workload, each against
// the first: per set, exactly what Compare(first, set) finds (the same
// test, Holm's correction over the gated metrics within that pair, the
// same verdicts), laid out as one table with a column per set.
type MultiComparison struct {
	Workload  string     `json:"workload"`
	By        string     `json:"by,omitempty"` // the label the sets were grouped by
	Sets      []SetInfo  `json:"sets"`
	Alpha     float64    `json:"alpha"`
	Threshold float64    `json:"threshold_pct"`
	CI        float64    `json:"confidence"`
	Gates     []Gate     `json:"gates"`
	Rows      []MultiRow `json:"rows"`
	// Regressions counts gated cells with the regression verdict, all sets.
	Regressions int  `json:"regressions"`
	TooFew      bool `json:"too_few_repetitions"`
	NeedReps    int  `json:"repetitions_needed,omitempty"`
	// Notes say what differs between the first set and another; Warnings
	// are the firmware warnings (two sets, one firmware version, different
	// figures) and the runs' own warnings.
	Notes    []string          `json:"notes,omitempty"`
	Warnings []results.Warning `json:"warnings,omitempty"`
	// ConfigDiffs are the settings that differ (ConfigDiff) within a set
	// or between the first set and another, compared anyway at
	// CompareOptions.AllowConfigDiff: the verdict names them.
	ConfigDiffs []string `json:"config_differences,omitempty"`

	pairs []*Comparison // pairs[i-1]: first vs Sets[i]
	sets  []*Run        // each set's pooled run
}

// SetInfo identifies one column.
type SetInfo struct {
	Name        string            `json:"name"`
	Dirs        []string          `json:"dirs"`
	Repetitions int               `json:"repetitions"`
	Device      string            `json:"device,omitempty"`
	FWVer       string            `json:"fw_ver,omitempty"` // "" unknown; "mixed" when its runs disagree
	Labels      map[string]string `json:"labels,omitempty"` // those all its runs share
}

// MultiRow is one op kind and metric across the sets.
type MultiRow struct {
	Kind   string      `json:"kind"`
	Metric string      `json:"metric"`
	Gated  bool        `json:"gated"`
	Cells  []MultiCell `json:"cells"` // one per set; the first has no delta
	metric Metric
}

// MultiCell is one set's figure for a row and its test against the first.
type MultiCell struct {
	Center      Center   `json:"center"`
	DeltaPct    *float64 `json:"delta_pct,omitempty"`
	P           *float64 `json:"p,omitempty"`
	PAdj        *float64 `json:"p_adjusted,omitempty"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict,omitempty"`
}

// mixedFW marks a set whose runs report different firmware versions.
const mixedFW = "mixed"

// pooled merges a set's runs into one run whose repetitions are all of
// theirs, so Compare tests the set as one sample. Its runs must be of one
// workload.
func pooled(set RunSet, allowConfigDiff bool) (*Run, SetInfo, []string, error) {
	if len(set.Runs) == 0 {
		return nil, SetInfo{}, nil, inputErrorf("set %s has no run", set.Name)
	}
	first := set.Runs[0].Result
	r := *first
	r.Repetitions, r.Warnings, r.Ops = nil, nil, map[string]results.OpStats{}
	if first.Storm != nil {
		// The storm's per-repetition figures pool with the repetitions.
		st := *first.Storm
		st.MakespanNS, st.TeardownNS, st.RankDoneNS, st.RankRunQueueNS, st.RankBusyNS, st.RankTeardownNS = nil, nil, nil, nil, nil, nil
		r.Storm = &st
	}
	info := SetInfo{Name: set.Name, Device: deviceName(first.Environment), FWVer: fwVer(first.Environment)}
	info.Labels = maps.Clone(first.Labels)
	kinds := map[string]bool{}
	var diffs []string
	for _, run := range set.Runs {
		x := run.Result
		if x.Config.Workload != first.Config.Workload || (x.Config.WorkloadSpec != "" && first.Config.WorkloadSpec != "" && !sameWorkloadSpec(x.Config.WorkloadSpec, first.Config.WorkloadSpec)) {
			return nil, info, nil, inputErrorf("set %s: %s ran %q, %s ran %q; a set is of one workload",
				set.Name, set.Runs[0].Dir, first.Config.Workload, run.Dir, x.Config.Workload)
		}
		if d := buildDiff(first, x); len(d) > 0 {
			// One label value, two builds: pooling them would report a
			// mixture as the firmware "fw=1.1" (issue 47: two builds both
			// labelled fw=1.1, pooled without a word).
			return nil, info, nil, inputErrorf("set %s pools different device builds: %s and %s differ in %s; one label value must name one build: label these runs apart",
				set.Name, set.Runs[0].Dir, run.Dir, strings.Join(d, ", "))
		}
		if d := ConfigDiff(first, x); len(d) > 0 {
			if !allowConfigDiff {
				return nil, info, nil, inputErrorf("not comparable: set %s: %s and %s differ in configuration (%s); pool runs of one configuration, or give --allow-config-diff to compare them anyway",
					set.Name, set.Runs[0].Dir, run.Dir, strings.Join(d, ", "))
			}
			diffs = append(diffs, fmt.Sprintf("within %s: %s", set.Name, strings.Join(d, ", ")))
		}
		info.Dirs = append(info.Dirs, run.Dir)
		if fw := fwVer(x.Environment); fw != info.FWVer {
			info.FWVer = mixedFW
		}
		for k, v := range info.Labels {
			if x.Labels[k] != v {
				delete(info.Labels, k)
			}
		}
		for i, rep := range x.Repetitions {
			rep.Index = len(r.Repetitions)
			r.Repetitions = append(r.Repetitions, rep)
			if r.Storm != nil {
				mk, td := int64(-1), int64(-1)
				if x.Storm != nil && i < len(x.Storm.MakespanNS) {
					mk = x.Storm.MakespanNS[i]
				}
				if x.Storm != nil && i < len(x.Storm.TeardownNS) {
					td = x.Storm.TeardownNS[i]
				}
				r.Storm.MakespanNS, r.Storm.TeardownNS = append(r.Storm.MakespanNS, mk), append(r.Storm.TeardownNS, td)
			}
		}
		for k, s := range x.Ops {
			t := r.Ops[k]
			t.Count += s.Count
			r.Ops[k] = t
			kinds[k] = true
		}
		for _, w := range x.Warnings {
			if len(set.Runs) > 1 {
				w.Text = run.Dir + ": " + w.Text
			}
			r.Warnings = append(r.Warnings, w)
		}
		if x.Status != results.StatusOK && r.Status == results.StatusOK {
			r.Status, r.Error = x.Status, x.Error
		}
	}
	info.Repetitions = len(r.Repetitions)
	run := &Run{Dir: strings.Join(info.Dirs, ","), Label: set.Name, Result: &r}
	for _, k := range results.OpKinds {
		if kinds[k] {
			run.Kinds = append(run.Kinds, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		if !slices.Contains(run.Kinds, k) {
			run.Kinds = append(run.Kinds, k)
		}
	}
	return run, info, diffs, nil
}

// buildDiff names the device facts that say a and b ran on different
// builds of the device: firmware version, PSID (board id), driver and its
// version, each where both results know it ("fw_ver 1.1.2 vs 1.1.3").
func buildDiff(a, b *results.Result) []string {
	facts := func(r *results.Result) [][2]string {
		var f [][2]string
		if d := r.Environment.Device; d.Known() {
			f = append(f, [2]string{"fw_ver", d.FWVer}, [2]string{"driver", d.Driver})
		}
		if bom := r.Environment.BOM; bom != nil {
			f = append(f, [2]string{"bom fw_ver", bom.Device.FWVer}, [2]string{"psid", bom.Device.BoardID},
				[2]string{"bom driver", bom.Device.Driver}, [2]string{"driver_version", bom.Device.DriverVersion})
		}
		return f
	}
	fb := facts(b)
	var out []string
	for _, x := range facts(a) {
		for _, y := range fb {
			if x[0] == y[0] && x[1] != "" && y[1] != "" && x[1] != y[1] {
				out = append(out, fmt.Sprintf("%s %s vs %s", x[0], x[1], y[1]))
			}
		}
	}
	return out
}

func fwVer(env results.Environment) string {
	if !env.Device.Known() {
		return ""
	}
	return env.Device.FWVer
}

func deviceName(env results.Environment) string {
	if !env.Device.Known() {
		return ""
	}
	return env.Device.Name
}

// CompareMany compares sets[1:] each against sets[0]. by names the label
// the sets were grouped by, for the header ("" when each is a folder).
func CompareMany(sets []RunSet, by string, opt CompareOptions) (*MultiComparison, error) {
	if len(sets) < 2 {
		return nil, inputErrorf("an N-way comparison needs at least 2 sets, got %d", len(sets))
	}
	if opt.Confidence == 0 {
		opt.Confidence = DefaultConfidence
	}
	mc := &MultiComparison{By: by, Alpha: opt.Alpha, Threshold: opt.Threshold, CI: opt.Confidence}
	for _, s := range sets {
		run, info, diffs, err := pooled(s, opt.AllowConfigDiff)
		if err != nil {
			return nil, err
		}
		mc.ConfigDiffs = append(mc.ConfigDiffs, diffs...)
		mc.sets = append(mc.sets, run)
		mc.Sets = append(mc.Sets, info)
	}
	index := map[string]int{} // kind.metric → row
	for i := 1; i < len(mc.sets); i++ {
		c, err := Compare(mc.sets[0], mc.sets[i], opt)
		if err != nil {
			return nil, err
		}
		mc.pairs = append(mc.pairs, c)
		mc.Workload, mc.Gates, mc.NeedReps = c.Workload, c.Gates, c.NeedReps
		mc.TooFew = mc.TooFew || c.TooFew
		mc.Regressions += c.Regressions
		if len(c.ConfigDiffs) > 0 {
			mc.ConfigDiffs = append(mc.ConfigDiffs, fmt.Sprintf("%s → %s: %s", mc.Sets[0].Name, mc.Sets[i].Name, strings.Join(c.ConfigDiffs, ", ")))
		}
		for _, n := range c.Notes {
			mc.Notes = append(mc.Notes, fmt.Sprintf("%s → %s: %s", mc.Sets[0].Name, mc.Sets[i].Name, n))
		}
		for _, r := range c.Rows {
			key := r.Kind + "." + r.Metric
			j, ok := index[key]
			if !ok {
				j = len(mc.Rows)
				index[key] = j
				mc.Rows = append(mc.Rows, MultiRow{Kind: r.Kind, Metric: r.Metric, Gated: r.Gated, metric: r.metric,
					Cells: make([]MultiCell, len(sets))})
				for k := range mc.Rows[j].Cells {
					mc.Rows[j].Cells[k].Verdict = verdictNoData
				}
			}
			row := &mc.Rows[j]
			row.Cells[0] = MultiCell{Center: r.Base}
			row.Cells[i] = MultiCell{Center: r.New, DeltaPct: r.DeltaPct, P: r.P, PAdj: r.PAdj, Significant: r.Significant, Verdict: r.Verdict}
		}
	}
	// Rows in op kind order, as the two-way table.
	slices.SortStableFunc(mc.Rows, func(a, b MultiRow) int {
		return slices.Index(results.OpKinds, a.Kind) - slices.Index(results.OpKinds, b.Kind)
	})
	if err := mc.firmwareWarnings(opt); err != nil {
		return nil, err
	}
	for i, run := range mc.sets {
		for _, w := range run.Result.Warnings {
			w.Text = mc.Sets[i].Name + ": " + w.Text
			mc.Warnings = append(mc.Warnings, w)
		}
	}
	return mc, nil
}

// warnFirmwareDiffers is the kind of a comparison's own warning that two
// sets reporting one firmware version differ significantly: not a run's
// (results' Warn* kinds), a finding of the comparison.
const warnFirmwareDiffers = "firmware_differs"

// firmwareWarnings compares every two sets that report one firmware
// version: if they differ significantly in a gated metric, the version
// does not identify what was measured (another build under one version
// string, or the machine changed), and the reader must know.
func (mc *MultiComparison) firmwareWarnings(opt CompareOptions) error {
	for i := range mc.sets {
		for j := i + 1; j < len(mc.sets); j++ {
			fw := mc.Sets[i].FWVer
			if fw == "" || fw == mixedFW || fw != mc.Sets[j].FWVer {
				continue
			}
			o := opt
			o.Gates = mc.Gates
			c, err := Compare(mc.sets[i], mc.sets[j], o)
			if err != nil {
				return err
			}
			var diffs []string
			for _, r := range c.Rows {
				if r.Gated && (r.Verdict == VerdictRegression || r.Verdict == verdictImprovement) {
					diffs = append(diffs, fmt.Sprintf("%s %s %+.1f%% (Holm p %.3g)", r.Kind, r.Metric, *r.DeltaPct, *r.PAdj))
				}
			}
			if len(diffs) > 0 {
				mc.Warnings = append(mc.Warnings, results.NewWarning(warnFirmwareDiffers, results.SeverityWarning, 0, "",
					fmt.Sprintf("%s and %s both report firmware %s but differ significantly: %s",
						mc.Sets[i].Name, mc.Sets[j].Name, fw, strings.Join(diffs, "; "))).
					WithMeans("the version does not identify what was measured; compare the runs' bills of materials (board id, driver, libibverbs, PCIe link, CPU setup)"))
			}
		}
	}
	return nil
}

// column is a set's header: its name, and its firmware where known.
func (mc *MultiComparison) column(i int) string {
	s := mc.Sets[i]
	if s.FWVer != "" {
		return fmt.Sprintf("%s [fw %s]", s.Name, s.FWVer)
	}
	return s.Name
}

// cell writes one set's figure: the median ± its interval, and for the
// sets after the first the change, the verdict and p (Holm's for gated
// rows).
func (r MultiRow) cell(i int) string {
	c := r.Cells[i]
	if c.Center.N == 0 {
		return "–"
	}
	s := centerCell(r.metric, c.Center)
	if i == 0 {
		return s
	}
	s += " " + deltaCell(c.DeltaPct) + " " + c.Verdict
	p := c.P
	if r.Gated && c.PAdj != nil {
		p = c.PAdj
	}
	if p != nil {
		s += fmt.Sprintf(" (p %.3f)", *p)
	}
	return s
}

func (mc *MultiComparison) header() []string {
	var h []string
	for i, s := range mc.Sets {
		line := fmt.Sprintf("%s: %s (%s", s.Name, strings.Join(s.Dirs, " "), units.Plural(s.Repetitions, "repetition"))
		if s.Device != "" {
			line += ", device " + s.Device
		}
		if s.FWVer != "" {
			line += ", fw " + s.FWVer
		}
		if l := results.LabelString(s.Labels); l != "" {
			line += ", labels " + l
		}
		line += ")"
		if i == 0 {
			line += ": the baseline"
		}
		h = append(h, line)
	}
	by := ""
	if mc.By != "" {
		by = fmt.Sprintf("; sets grouped by label %s, their repetitions pooled", mc.By)
	}
	h = append(h, fmt.Sprintf("workload %s%s; medians over repetitions ± %.0f%% confidence interval ([low, high] where wider than ±%.0f%%); each set against %s: change, verdict, p (Mann-Whitney U); alpha %g, threshold %g%%",
		mc.Workload, by, 100*mc.CI, 100*maxPctRange, mc.Sets[0].Name, mc.Alpha, mc.Threshold))
	h = append(h, fmt.Sprintf("gated (decide the verdict, Holm-corrected within each set's comparison): %s; the other rows are information", gateList(mc.Gates)))
	return h
}

// Verdict is the one-line conclusion: the sets with a regression against
// the first, or why none could be decided.
func (mc *MultiComparison) Verdict() string {
	v := mc.verdict()
	if len(mc.ConfigDiffs) > 0 {
		v += "; across different configurations (" + strings.Join(mc.ConfigDiffs, "; ") + "), compared at --allow-config-diff"
	}
	return v
}

func (mc *MultiComparison) verdict() string {
	var regs []string
	for _, r := range mc.Rows {
		if !r.Gated {
			continue
		}
		for i, c := range r.Cells[1:] {
			if c.Verdict == VerdictRegression {
				regs = append(regs, fmt.Sprintf("%s %s %s %+.1f%% (Holm p %.3g)", mc.Sets[i+1].Name, r.Kind, r.Metric, *c.DeltaPct, *c.PAdj))
			}
		}
	}
	switch {
	case len(regs) > 0:
		return fmt.Sprintf("%d significant regression(s) beyond %g%% against %s: %s", len(regs), mc.Threshold, mc.Sets[0].Name, strings.Join(regs, "; "))
	case mc.TooFew:
		var have []string
		for _, s := range mc.Sets {
			have = append(have, fmt.Sprintf("%s %d", s.Name, s.Repetitions))
		}
		return fmt.Sprintf("undecided: too few repetitions (%s): %s; rerun with --repetitions %d or more",
			strings.Join(have, ", "), mc.pairs[0].needWhy(), mc.NeedReps)
	}
	return fmt.Sprintf("no significant regression beyond %g%% against %s in %s", mc.Threshold, mc.Sets[0].Name, gateList(mc.Gates))
}

// WriteText writes mc as an aligned table, a column per set.
func (mc *MultiComparison) WriteText(w io.Writer) error {
	t := textTable{
		header: mc.header(), notesTitle: "differences:", notes: mc.Notes,
		columns: []string{"op", "metric", ""},
		after:   mc.footnotes(), verdict: mc.Verdict(),
	}
	for i := range mc.Sets {
		t.columns = append(t.columns, mc.column(i))
	}
	for _, r := range mc.Rows {
		row := []string{r.Kind, r.Metric, roleCell(r.Gated)}
		for i := range r.Cells {
			row = append(row, r.cell(i))
		}
		t.rows = append(t.rows, row)
	}
	for _, x := range mc.Warnings {
		t.after = append(t.after, "warning: "+x.Text)
	}
	return t.write(w)
}

func (mc *MultiComparison) footnotes() []string {
	var f []string
	seen := map[string]bool{}
	for _, c := range mc.pairs {
		for _, n := range c.footnotes(false) {
			if strings.HasPrefix(n, "!N") || strings.HasPrefix(n, "  ") || seen[n] {
				continue // the runs' warnings are listed once, by set
			}
			seen[n] = true
			f = append(f, n)
		}
	}
	return f
}

// WriteMarkdown writes mc as a Markdown table, for CI job summaries.
func (mc *MultiComparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## xrcbench compare: %s, %d sets\n\n", mdText(mc.Workload), len(mc.Sets))
	for _, h := range mc.header() {
		fmt.Fprintf(bw, "- %s\n", mdText(h))
	}
	for _, n := range mc.Notes {
		fmt.Fprintf(bw, "- **differs**: %s\n", mdText(n))
	}
	fmt.Fprint(bw, "\n| op | metric | role |")
	rule := "|---|---|---|"
	for i := range mc.Sets {
		fmt.Fprintf(bw, " %s |", mdText(mc.column(i)))
		rule += "---:|"
	}
	fmt.Fprintln(bw, "\n"+rule)
	for _, r := range mc.Rows {
		fmt.Fprintf(bw, "| %s | %s | %s |", mdText(r.Kind), mdText(r.Metric), roleCell(r.Gated))
		for i := range r.Cells {
			c := mdText(r.cell(i))
			if r.Gated && r.Cells[i].Verdict == VerdictRegression {
				c = "**" + c + "**"
			}
			fmt.Fprintf(bw, " %s |", c)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw)
	for _, f := range mc.footnotes() {
		fmt.Fprintf(bw, "%s  \n", mdText(f))
	}
	for _, x := range mc.Warnings {
		fmt.Fprintf(bw, "**Warning:** %s  \n", mdText(x.Text))
	}
	fmt.Fprintf(bw, "**Verdict:** %s\n", mdText(mc.Verdict()))
	return bw.Flush()
}

// WriteJSON writes mc as JSON, with the verdict.
func (mc *MultiComparison) WriteJSON(w io.Writer) error {
	return writeJSON(w, struct {
		*MultiComparison
		Verdict string `json:"verdict"`
	}{mc, mc.Verdict()})
}

// Figures draws each gated metric across the sets: per set the median
// over its repetitions, the bars spanning the lowest to the highest.
func (mc *MultiComparison) Figures() ([]Figure, error) {
	var figs []Figure
	for _, g := range mc.Gates {
		m, _ := GateMetric(g)
		f, err := mc.gateFigure(g, m)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

func (mc *MultiComparison) gateFigure(g Gate, m Metric) (Figure, error) {
	name := fmt.Sprintf("compare-%s-%s", g.Kind, g.Metric)
	title := fmt.Sprintf("%s %s across %d sets: change from %s", g.Kind, g.Metric, len(mc.Sets), mc.Sets[0].Name)
	p := newPlot(title, "set", "change from "+mc.Sets[0].Name+" (%)")
	st := runsStamp(mc.sets)
	base, _, _, ok := pointValue(mc.sets[0], g.Kind, m)
	if !ok || base == 0 {
		return emptyFigure(p, name, title, "the first set recorded no "+g.Kind, st)
	}
	// Changes, not values: a log axis of latencies spans a decade with two
	// ticks, where a +24% regression looks flat; against the threshold's
	// band it is plainly outside.
	rel := func(v float64) float64 { return 100 * (v/base - 1) }
	var pts sweepPoints
	var ticks []plot.Tick
	var labels []string
	lo, hi := -mc.Threshold*1.5, mc.Threshold*1.5
	for i, run := range mc.sets {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: mc.column(i)})
		y, l, h, ok := pointValue(run, g.Kind, m)
		if !ok {
			continue
		}
		pts = append(pts, sweepPoint{x: float64(i), y: rel(y), lo: rel(l), hi: rel(h)})
		labels = append(labels, fmt.Sprintf("%+.1f%%", rel(y)))
		lo, hi = math.Min(lo, rel(l)), math.Max(hi, rel(h))
	}
	x0, x1 := -0.5, float64(len(mc.sets))-0.5
	band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: -mc.Threshold}, {X: x1, Y: -mc.Threshold}, {X: x1, Y: mc.Threshold}, {X: x0, Y: mc.Threshold}})
	if err != nil {
		return Figure{}, err
	}
	band.Color, band.LineStyle.Width = color.RGBA{R: 0xdd, G: 0xee, B: 0xdd, A: 0xff}, 0
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("within the threshold (±%g%%)", mc.Threshold), band)
	l, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return Figure{}, err
	}
	styleLine(l, 0)
	sc.Color, sc.Radius = l.Color, vg.Points(3)
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return Figure{}, err
	}
	eb.Color, eb.CapWidth = l.Color, vg.Points(6)
	xys := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xys[i] = plotter.XY{X: pt.x, Y: pt.y}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return Figure{}, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(9)
	}
	lb.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(2)}
	p.Add(l, sc, eb, lb)
	p.X.Min, p.X.Max = x0, x1
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	pad := 0.1 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.Legend.Top, p.Legend.Left = true, true
	caption := fmt.Sprintf("Each point is one set (%s): the change of its median %s %s over its repetitions from %s's (%s), the bars spanning the lowest to the highest repetition; the band is the threshold, ±%g%%. Each set is tested against %s in the table: a point outside the band is a regression only where the test says so.",
		strings.Join(setNames(mc.Sets), ", "), g.Kind, g.Metric, mc.Sets[0].Name, m.Format(base), mc.Threshold, mc.Sets[0].Name)
	return render(p, name, title, caption, st)
}

func setNames(sets []SetInfo) []string {
	var n []string
	for _, s := range sets {
		n = append(n, s.Name)
	}
	return n
}
