package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// CompareOptions configures Compare.
type CompareOptions struct {
	// Threshold is the smallest change, in percent, that counts as a
	// regression or an improvement (5 means 5%).
	Threshold float64
	// Alpha is the significance level of the Mann-Whitney U test.
	Alpha float64
	// Metrics are compared for every op kind.
	Metrics []Metric
	// Gates are the metrics that decide the verdict, tested together with
	// Holm's correction; every other row is information. Nil: the
	// workload's DefaultGates.
	Gates []Gate
	// Confidence of the intervals around the medians (DefaultConfidence
	// when zero).
	Confidence float64
	// AllowConfigDiff compares runs whose configurations differ
	// (ConfigDiff); the verdict then names the differences. Without it
	// such runs are not comparable, an error wrapping results.ErrInput.
	AllowConfigDiff bool
	// FloorNS is the smallest change of a latency's median, in ns, that
	// can be a regression or an improvement; 0 is floorTimerReads reads
	// of the slower of the two runs' timers.
	FloorNS float64
}

// floorTimerReads is the default floor under latency changes, in reads
// of the timer: every operation's duration is the difference of two
// reads, so a change smaller than two is the timer's, not the device's
// (70ns → 80ns, one 10ns step between tied HDR values, once failed a
// qualification as +14.3%).
const floorTimerReads = 2

// DefaultAlpha is compare's default significance level.
const DefaultAlpha = 0.05

// DefaultConfidence is the level of the intervals around the medians:
// with the default gates and alpha, the repetitions the test needs also
// bound a 90% interval (5), so one number holds for both.
const DefaultConfidence = 0.90

// Gate is one op kind's metric that gates a comparison.
type Gate struct {
	Kind   string `json:"kind"`
	Metric string `json:"metric"`
}

func (g Gate) String() string { return g.Kind + "." + g.Metric }

// DefaultGates are the metrics a comparison of r's workload gates on when
// none are named: those its spec declares (results.Config.GatesOf), what
// the workload exists to measure, such as storm.makespan. Testing every
// kind and metric at alpha would flag a false change in one of them every
// few comparisons. kinds are the op kinds compared, for results whose
// workload predates declared gates.
func DefaultGates(r *results.Result, kinds []string) []Gate {
	var gs []Gate
	for _, g := range r.Config.GatesOf(kinds, r.Storm != nil) {
		kind, metric, _ := strings.Cut(g, ".")
		gs = append(gs, Gate{Kind: kind, Metric: metric})
	}
	return gs
}

// ParseGates reads "reg.p50,unreg_last.p50".
func ParseGates(s string) ([]Gate, error) {
	var gs []Gate
	seen := map[Gate]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, metric, ok := strings.Cut(part, ".")
		if !ok || kind == "" {
			return nil, inputErrorf("--gate %q: want KIND.METRIC, such as reg.p50 or storm.makespan", part)
		}
		g := Gate{Kind: kind, Metric: metric}
		if _, ok := GateMetric(g); !ok && kind == results.StormKind {
			return nil, inputErrorf("--gate %q: a storm's metrics are %s", part, strings.Join(results.StormMetrics, ", "))
		} else if !ok {
			return nil, inputErrorf("--gate %q: unknown metric %q; want one of %s", part, metric, MetricNames())
		}
		if !seen[g] {
			seen[g] = true
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return nil, inputErrorf("--gate %q: no metric named", s)
	}
	return gs, nil
}

// MinRepetitions is the one minimum number of repetitions per run that
// the report, compare's intervals and its refusal all name: the smallest
// with which the Mann-Whitney U test can reach alpha after Holm's
// correction over gates tested metrics, and the median has a finite
// interval at confidence.
func MinRepetitions(alpha, confidence float64, gates int) int {
	return max(stats.RepetitionsNeeded(alpha/float64(max(gates, 1))), stats.MedianCINeeded(confidence))
}

// Verdicts of a CompareRow.
const (
	VerdictRegression  = "regression"
	verdictImprovement = "improvement"
	verdictSmall       = "below threshold" // significant, but smaller than the threshold
	verdictSame        = "~"               // not significant
	VerdictTooFew      = "too few repetitions"
	verdictNoData      = "no data"
	VerdictUnderFloor  = "under the floor" // significant, but a latency change the timer cannot resolve (FloorNS)
)

// Comparison is the outcome of comparing two run folders.
type Comparison struct {
	Workload  string       `json:"workload"`
	Base      RunInfo      `json:"base"`
	New       RunInfo      `json:"new"`
	Alpha     float64      `json:"alpha"`
	Threshold float64      `json:"threshold_pct"`
	CI        float64      `json:"confidence"`
	Notes     []string     `json:"notes,omitempty"` // what differs between the runs, kinds in one run only
	Rows      []CompareRow `json:"rows"`
	// Regressions counts rows with the regression verdict.
	Regressions int `json:"regressions"`
	// TooFew is set when a gated row could not be tested for lack of
	// repetitions; NeedReps is how many each run needs (MinRepetitions).
	TooFew   bool `json:"too_few_repetitions"`
	NeedReps int  `json:"repetitions_needed,omitempty"`
	// FloorNS is the smallest latency change judged (CompareOptions.FloorNS).
	FloorNS float64 `json:"floor_ns"`
	Gates   []Gate  `json:"gates"`
	// Warnings are the runs' own warnings, typed as the runs have them,
	// their texts prefixed "base: " and "new: ", numbered from 1 by the
	// rows' Warned.
	Warnings []results.Warning `json:"warnings,omitempty"`

	// ConfigDiffs are the settings that differ between the runs
	// (ConfigDiff), compared anyway at the user's word
	// (CompareOptions.AllowConfigDiff): the verdict names them.
	ConfigDiffs []string `json:"config_differences,omitempty"`

	warnedAll bool // some warning of the runs concerns every row
}

// RunInfo identifies one side of a comparison.
type RunInfo struct {
	Dir         string `json:"dir"`
	Host        string `json:"host"`
	Provider    string `json:"provider"`
	Device      string `json:"device,omitempty"`
	Status      string `json:"status"`
	Repetitions int    `json:"repetitions"`
	Version     string `json:"xrcbench_version"`
	// Labels are the run's --label pairs.
	Labels map[string]string `json:"labels,omitempty"`
}

// CompareRow is one op kind and metric.
type CompareRow struct {
	Kind   string `json:"kind"`
	Metric string `json:"metric"`
	Base   Center `json:"base"`
	New    Center `json:"new"`
	// DeltaPct is (new/base − 1)·100; nil when base is 0 or a side is empty.
	DeltaPct *float64 `json:"delta_pct"`
	// P is the Mann-Whitney U p-value; nil when the test was not run.
	P *float64 `json:"p"`
	// Gated rows decide the verdict; PAdj is their p after Holm's
	// correction over the gated rows, what Significant is judged on.
	// Other rows are information, judged on P alone.
	Gated       bool     `json:"gated"`
	PAdj        *float64 `json:"p_adjusted,omitempty"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict"`
	// Warned lists the Comparison.Warnings (1-based) that concern the row.
	Warned []int `json:"warned,omitempty"`
	metric Metric
}

// Center is the median of one side's repetitions and its confidence
// interval; Lo and Hi are nil when the sample is too small to bound it.
type Center struct {
	N      int      `json:"n"`
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
}

// Compare compares new against base: for every op kind and metric, the
// medians over repetitions with confidence intervals, the change, and the
// Mann-Whitney U test. Runs of different workloads, or a failed run, are
// refused with an error wrapping results.ErrInput.
//
// As benchstat does, it first decides what is compared (the kinds both
// runs have, the metrics, the gates), then measures each row from the
// repetitions, and only then judges the rows together: the gates'
// p-values are corrected over all of them before any verdict.
func Compare(base, new *Run, opt CompareOptions) (*Comparison, error) {
	if opt.Confidence == 0 {
		opt.Confidence = DefaultConfidence
	}
	if err := comparable(base, new); err != nil {
		return nil, err
	}
	cd := ConfigDiff(base.Result, new.Result)
	if len(cd) > 0 && !opt.AllowConfigDiff {
		return nil, inputErrorf("not comparable: %s and %s differ in configuration (%s); compare runs of one configuration, or give --allow-config-diff to compare them anyway",
			base.Dir, new.Dir, strings.Join(cd, ", "))
	}
	if opt.FloorNS == 0 {
		opt.FloorNS = floorTimerReads * max(base.Result.Harness.TimerOverheadNS, new.Result.Harness.TimerOverheadNS)
	}
	c := &Comparison{
		FloorNS:  opt.FloorNS,
		Workload: base.Result.Config.WorkloadLabel(),
		Base:     runInfo(base), New: runInfo(new),
		Alpha: opt.Alpha, Threshold: opt.Threshold, CI: opt.Confidence,
		Notes: differences(base, new), ConfigDiffs: cd,
	}
	kinds, notes := commonKinds(gateKinds(base), gateKinds(new))
	c.Notes = append(c.Notes, notes...)
	c.Gates = opt.Gates
	if c.Gates == nil {
		var dropped []string
		c.Gates, dropped = measurableGates(DefaultGates(base.Result, kinds), base, new)
		c.Notes = append(c.Notes, dropped...)
	}
	gated, err := gateSet(c.Gates, kinds)
	if err != nil {
		return nil, err
	}
	c.NeedReps = MinRepetitions(opt.Alpha, opt.Confidence, len(c.Gates))
	var warnedKinds func(string) []int
	c.Warnings, warnedKinds, c.warnedAll = runWarnings(base, new)
	for _, kind := range kinds {
		for _, m := range rowMetrics(opt.Metrics, c.Gates, kind) {
			row := c.measureRow(base.Result, new.Result, kind, m, gated[Gate{kind, m.Name}], opt)
			row.Warned = warnedKinds(kind)
			c.Rows = append(c.Rows, row)
		}
	}
	holm(c.Rows)
	for i := range c.Rows {
		row := &c.Rows[i]
		judge(row, opt.Alpha, opt.Threshold, opt.FloorNS)
		if row.Gated && row.Verdict == VerdictRegression {
			c.Regressions++
		}
		if row.Gated && row.Verdict == VerdictTooFew {
			c.TooFew = true
		}
	}
	return c, nil
}

// comparable refuses a pair of runs that cannot be compared at all:
// different workloads (their op kinds differ), a failed run, or one that
// measured no operation. A workload whose spec text changed is a
// difference of configuration (ConfigDiff).
func comparable(base, new *Run) error {
	b, n := base.Result, new.Result
	if b.Config.Workload != n.Config.Workload {
		return inputErrorf("different workloads: base %s ran %q, new %s ran %q; compare runs of one workload",
			base.Dir, b.Config.Workload, new.Dir, n.Config.Workload)
	}
	for _, run := range []*Run{base, new} {
		if run.Result.Status == results.StatusFailed {
			return inputErrorf("%s: a failed run (%s) has nothing to compare", run.Dir, run.Result.Error)
		}
		var measured int64
		for _, s := range run.Result.Ops {
			measured += s.Count
		}
		if measured == 0 {
			return inputErrorf("%s: no operation measured (ops is empty or all zero): nothing to compare", run.Dir)
		}
	}
	return nil
}

// commonKinds is the op kinds both runs measured, in base's order, and a
// note for each kind only one of them has.
func commonKinds(base, new []string) (kinds, notes []string) {
	for _, k := range base {
		if slices.Contains(new, k) {
			kinds = append(kinds, k)
		} else {
			notes = append(notes, fmt.Sprintf("%s only in base", k))
		}
	}
	for _, k := range new {
		if !slices.Contains(base, k) {
			notes = append(notes, fmt.Sprintf("%s only in new", k))
		}
	}
	return kinds, notes
}

// measurableGates leaves out of a workload's declared gates a storm
// figure that a run could not measure (a teardown by exit where no device
// could be asked for its QPs: Storm.TeardownNote), with a note saying
// why: gated without figures it would read as checked.
func measurableGates(gates []Gate, base, new *Run) (kept []Gate, notes []string) {
	for _, g := range gates {
		m, ok := GateMetric(g)
		if g.Kind != results.StormKind || !ok {
			kept = append(kept, g)
			continue
		}
		var missing []string
		for _, run := range []*Run{base, new} {
			if len(RepetitionStats(run.Result, g.Kind, m).Values) == 0 {
				missing = append(missing, run.Dir)
			}
		}
		if len(missing) == 0 {
			kept = append(kept, g)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s not gated: %s measured none", g, strings.Join(missing, " and ")))
	}
	return kept, notes
}

// gateSet is the gates as a set; a gate on a kind not in both runs is bad
// input.
func gateSet(gates []Gate, kinds []string) (map[Gate]bool, error) {
	gated := map[Gate]bool{}
	for _, g := range gates {
		if !slices.Contains(kinds, g.Kind) {
			return nil, inputErrorf("--gate %s: op kind %q is not in both runs (they have %s)", g, g.Kind, strings.Join(kinds, ", "))
		}
		gated[g] = true
	}
	return gated, nil
}

// rowMetrics is the metrics compared for kind: those asked for (for a
// storm's own figures, kind results.StormKind, all of stormMetrics), then
// any gated metric of the kind not among them (a gate is always shown).
func rowMetrics(metrics []Metric, gates []Gate, kind string) []Metric {
	ms := slices.Clone(metrics)
	if kind == results.StormKind {
		ms = slices.Clone(stormMetrics)
	}
	for _, g := range gates {
		if m, _ := GateMetric(g); g.Kind == kind && !slices.ContainsFunc(ms, func(x Metric) bool { return x.Name == m.Name }) {
			ms = append(ms, m)
		}
	}
	return ms
}

// measureRow is one kind and metric measured on both sides: the medians,
// the change and the test's p-value, or the verdict that says why there
// can be no test (no data, too few repetitions).
func (c *Comparison) measureRow(b, n *results.Result, kind string, m Metric, gated bool, opt CompareOptions) CompareRow {
	row := CompareRow{Kind: kind, Metric: m.Name, metric: m, Gated: gated}
	bv := RepetitionStats(b, kind, m).Values
	nv := RepetitionStats(n, kind, m).Values
	row.Base, row.New = center(bv, opt.Confidence), center(nv, opt.Confidence)
	if len(bv) == 0 || len(nv) == 0 {
		row.Verdict = verdictNoData
		// Operations were counted but not per repetition: the test has
		// nothing to work on, which must not pass as "no regression".
		if b.Ops[kind].Count > 0 || n.Ops[kind].Count > 0 {
			row.Verdict = VerdictTooFew
		}
		return row
	}
	if row.Base.Median != 0 {
		d := (row.New.Median/row.Base.Median - 1) * 100
		row.DeltaPct = &d
	}
	if row.Gated && min(len(bv), len(nv)) < c.NeedReps {
		// Fewer repetitions than the one minimum: the gate does not
		// decide, whatever this pair's p-value.
		row.Verdict = VerdictTooFew
	}
	if stats.MinUTestP(len(bv), len(nv)) > opt.Alpha {
		// Even completely separated samples could not reach alpha: any
		// verdict would be a guess.
		row.Verdict = VerdictTooFew
		return row
	}
	p := stats.UTest(bv, nv)
	row.P = &p
	return row
}

// judge gives a tested row its verdict: significant at alpha (a gated
// row on its Holm-adjusted p), then a regression or an improvement when
// the change passes the threshold. A row without a test keeps the verdict
// that says why.
func judge(row *CompareRow, alpha, threshold, floorNS float64) {
	if row.P == nil || row.Verdict == VerdictTooFew {
		return
	}
	p := *row.P
	if row.Gated {
		p = *row.PAdj
	}
	row.Significant = !(p > alpha) // as benchmath.Comparison.FormatDelta
	switch {
	case !row.Significant:
		row.Verdict = verdictSame
	case row.metric.Latency && math.Abs(row.New.Median-row.Base.Median) < floorNS:
		row.Verdict = VerdictUnderFloor
	case row.DeltaPct == nil:
		row.Verdict = verdictSmall
	case row.metric.Worse(*row.DeltaPct, threshold):
		row.Verdict = VerdictRegression
	case row.metric.Worse(-*row.DeltaPct, threshold):
		row.Verdict = verdictImprovement
	default:
		row.Verdict = verdictSmall
	}
}

// holm sets PAdj of the gated rows that were tested: Holm's step-down
// adjustment, p(i)·(m−i) for the i-th smallest of m, made monotone, so
// that the chance of any false regression among them stays at alpha.
func holm(rows []CompareRow) {
	var idx []int
	for i, r := range rows {
		if r.Gated && r.P != nil {
			idx = append(idx, i)
		}
	}
	ps := make([]float64, len(idx))
	for i, j := range idx {
		ps[i] = *rows[j].P
	}
	for i, adj := range stats.HolmAdjust(ps) {
		rows[idx[i]].PAdj = &adj
	}
}

// runWarnings gathers both runs' warnings and says which rows each
// concerns: a warning about an op kind (its Op) concerns that kind's rows,
// any other (a busy machine, more threads than CPUs, low coverage) every
// row.
func runWarnings(base, new *Run) (_ []results.Warning, _ func(kind string) []int, warnedAll bool) {
	var all []results.Warning
	byKind := map[string][]int{}
	var every []int
	for _, side := range []struct {
		name string
		run  *Run
	}{{"base", base}, {"new", new}} {
		for _, w := range side.run.Result.Warnings {
			w.Text = side.name + ": " + w.Text
			all = append(all, w)
			i := len(all)
			switch {
			case w.Severity == results.SeverityNotice:
				// Listed, but it marks no row and casts no doubt on a
				// regression: it does not change what the figures mean.
			case w.Op != "":
				byKind[w.Op] = append(byKind[w.Op], i)
			case w.Kind != results.WarnVersionUnknown:
				// Not knowing the code that measured says nothing of
				// the measurement.
				every = append(every, i)
			}
		}
	}
	// A warning about the run as a whole concerns every row: it is said
	// once in the legend, not marked on each row (a table of "!1,2,...,21"
	// on every line says nothing a row does not share).
	return all, func(kind string) []int { return byKind[kind] }, len(every) > 0
}

// Worse reports whether a change of deltaPct in m is worse than
// threshold (percent): up for a latency, down for a rate.
func (m Metric) Worse(deltaPct, threshold float64) bool {
	if m.BetterHigher {
		return deltaPct < -threshold
	}
	return deltaPct > threshold
}

// center is the median of values with its confidence interval (none when
// too few repetitions bound it).
func center(values []float64, confidence float64) Center {
	iv := stats.MedianInterval(values, confidence)
	c := Center{N: iv.N, Median: iv.Median}
	if iv.Finite {
		lo, hi := iv.Lo, iv.Hi
		c.Lo, c.Hi = &lo, &hi
	}
	return c
}

func runInfo(run *Run) RunInfo {
	r := run.Result
	return RunInfo{
		Dir: run.Dir, Host: r.Environment.Host, Provider: r.Config.Provider,
		Device: deviceLine(r.Environment), Status: r.Status,
		Repetitions: len(r.Repetitions), Version: r.Environment.Version,
		Labels: r.Labels,
	}
}

// differences lists what differs between two runs of one workload: they
// may be compared, but the reader must know.
// portOf and gidOf are the port and GID index a device moved QPs
// through, as text ("" where none).
func portOf(d *results.Device) string {
	if d.Port == 0 {
		return ""
	}
	return fmt.Sprint(d.Port)
}

func gidOf(d *results.Device) string {
	if d.GIDIndex == nil {
		return ""
	}
	return fmt.Sprint(*d.GIDIndex)
}

func differences(base, new *Run) []string {
	b, n := base.Result, new.Result
	var d []string
	diff := func(what string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			d = append(d, fmt.Sprintf("%s: %v → %v", what, x, y))
		}
	}
	diff("host", b.Environment.Host, n.Environment.Host)
	diff("provider", b.Config.Provider, n.Config.Provider)
	bd, nd := b.Environment.Device, n.Environment.Device
	if bd == nil {
		bd = &results.Device{}
	}
	if nd == nil {
		nd = &results.Device{}
	}
	part := func(d *results.Device) string {
		if d.VendorPartID == 0 {
			return ""
		}
		return fmt.Sprint(d.VendorPartID)
	}
	for _, f := range []struct{ name, base, new string }{
		{"name", bd.Name, nd.Name}, {"fw_ver", bd.FWVer, nd.FWVer}, {"hw_ver", bd.HWVer, nd.HWVer},
		{"vendor_part_id", part(bd), part(nd)}, {"driver", bd.Driver, nd.Driver},
		{"port", portOf(bd), portOf(nd)}, {"gid_index", gidOf(bd), gidOf(nd)}, {"gid_type", bd.GIDType, nd.GIDType},
	} {
		if f.base != "" || f.new != "" {
			diff("device "+f.name, orNone(f.base, f.base != ""), orNone(f.new, f.new != ""))
		}
	}
	diff("CPU", b.Environment.CPUModel, n.Environment.CPUModel)
	diff("kernel", b.Environment.Kernel, n.Environment.Kernel)
	diff("procs", b.Config.Procs, n.Config.Procs)
	diff("threads", b.Config.Threads, n.Config.Threads)
	diff("qps", b.Config.QPs, n.Config.QPs)
	diff("QP state", b.Config.QPStateOf(), n.Config.QPStateOf())
	diff("duration", b.Config.Duration.D(), n.Config.Duration.D())
	diff("iterations", b.Config.Iterations, n.Config.Iterations)
	diff("provider options", optString(b.Config.ProviderOpts), optString(n.Config.ProviderOpts))
	diff("timer", b.Harness.Timer, n.Harness.Timer)
	for _, run := range []*Run{base, new} {
		if run.Result.Status != results.StatusOK {
			d = append(d, fmt.Sprintf("%s is a %s run: %s", run.Dir, run.Result.Status, run.Result.Error))
		}
	}
	return d
}

// optString writes provider options as k=v, sorted.
func optString(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}

func orNone(v any, ok bool) any {
	if !ok {
		return "(none)"
	}
	return v
}

// Verdict is the one-line conclusion of c.
func (c *Comparison) Verdict() string {
	var regs []string
	warned := false
	for _, r := range c.Rows {
		if r.Gated && r.Verdict == VerdictRegression {
			regs = append(regs, fmt.Sprintf("%s %s %+.1f%% (p=%.3g, Holm %.3g)", r.Kind, r.Metric, *r.DeltaPct, *r.P, *r.PAdj))
			warned = warned || len(r.Warned) > 0
		}
	}
	// Every row shares what the runs warned of as a whole.
	warned = warned || len(regs) > 0 && c.warnedAll
	var v string
	switch {
	case len(regs) > 0:
		v = fmt.Sprintf("%d significant regression(s) beyond %g%%: %s", len(regs), c.Threshold, strings.Join(regs, "; "))
		if warned {
			v += "; the runs warned about what they measured (marked !): check before trusting it"
		}
	case c.TooFew:
		v = fmt.Sprintf("undecided: too few repetitions (%s): %s; rerun both with --repetitions %d or more",
			c.tooFewWhere(), c.needWhy(), c.NeedReps)
	default:
		v = fmt.Sprintf("no significant regression beyond %g%% in %s", c.Threshold, c.gateList())
	}
	if len(c.ConfigDiffs) > 0 {
		v += "; across different configurations (" + strings.Join(c.ConfigDiffs, ", ") + "), compared at --allow-config-diff"
	}
	return v
}

// tooFewWhere names the first gated row too short of repetitions to
// decide, with how many of each run's repetitions gave it a value: a
// repetition in which a kind measured nothing gives none, so the runs'
// repetition counts alone could read as enough.
func (c *Comparison) tooFewWhere() string {
	for _, r := range c.Rows {
		if r.Gated && r.Verdict == VerdictTooFew {
			return fmt.Sprintf("%s %s: base %d of %d repetitions, new %d of %d", r.Kind, r.Metric,
				r.Base.N, c.Base.Repetitions, r.New.N, c.New.Repetitions)
		}
	}
	return fmt.Sprintf("base %d, new %d", c.Base.Repetitions, c.New.Repetitions)
}

// needWhy says where NeedReps comes from.
func (c *Comparison) needWhy() string {
	return fmt.Sprintf("the Mann-Whitney U test at alpha %g over %s (Holm) and a %.0f%% interval of the median need at least %d per run",
		c.Alpha, units.Plural(len(c.Gates), "gated metric"), 100*c.CI, c.NeedReps)
}

func (c *Comparison) gateList() string { return gateList(c.Gates) }

func gateList(gs []Gate) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.String())
	}
	return strings.Join(s, ", ")
}

// The cells of a comparison's tables, two-way and N-way alike.

// centerCell is a median ± its confidence interval ("±∞" when too few
// repetitions bound it), "–" when nothing was measured.
//
// The ± is benchstat's (benchmath.Summary.PctRangeString: the farther
// bound's distance from the median, as a percentage of it), which reads
// well for the tight intervals benchstat is used to. Past ±100% it does
// not: the interval of a median is between two of the repetitions'
// figures, all positive, and is lopsided ("110ns ±437%" is 80ns to
// 591ns, never below zero). Such a cell gives the interval's bounds in
// the metric's unit instead, "110ns [80ns, 591ns]", which says what the
// percentage only hides: too noisy to bound a change of a few percent.
func centerCell(m Metric, c Center) string {
	if c.N == 0 {
		return "–"
	}
	s := m.Format(c.Median)
	if c.Lo == nil {
		return s + " ±∞"
	}
	if c.Median > 0 && *c.Lo >= 0 && math.Max(*c.Hi/c.Median-1, 1-*c.Lo/c.Median) > maxPctRange {
		return fmt.Sprintf("%s [%s, %s]", s, m.Format(*c.Lo), m.Format(*c.Hi))
	}
	sum := benchmath.Summary{Center: c.Median, Lo: *c.Lo, Hi: *c.Hi}
	return s + " ±" + sum.PctRangeString()
}

// maxPctRange is the widest interval, as a share of its median, that a
// comparison writes as ±percent; a wider one is written as its bounds.
const maxPctRange = 1.0

// deltaCell is the change, shown whatever the verdict: "~" says the test
// found no difference, not that there was no change.
func deltaCell(pct *float64) string {
	if pct == nil {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", *pct)
}

// roleCell says whether a row decides the verdict.
func roleCell(gated bool) string {
	if gated {
		return "gate"
	}
	return "info"
}

func (r CompareRow) ci(c Center) string { return centerCell(r.metric, c) }

func (r CompareRow) delta() string { return deltaCell(r.DeltaPct) }

func (r CompareRow) pValue() string {
	if r.P == nil {
		return "–"
	}
	if r.PAdj != nil {
		return fmt.Sprintf("%.3f (Holm %.3f)", *r.P, *r.PAdj)
	}
	return fmt.Sprintf("%.3f", *r.P)
}

func (r CompareRow) role() string { return roleCell(r.Gated) }

func (r CompareRow) marks() string {
	if len(r.Warned) == 0 {
		return ""
	}
	var s []string
	for _, i := range r.Warned {
		s = append(s, fmt.Sprint(i))
	}
	return "!" + strings.Join(s, ",")
}

func (c *Comparison) header() []string {
	h := []string{
		fmt.Sprintf("base: %s (%s on %s, %s)", c.Base.Dir, c.Base.Provider, c.Base.Host, units.Plural(c.Base.Repetitions, "repetition")),
		fmt.Sprintf("new:  %s (%s on %s, %s)", c.New.Dir, c.New.Provider, c.New.Host, units.Plural(c.New.Repetitions, "repetition")),
	}
	switch {
	case c.Base.Device == c.New.Device && c.Base.Device != "":
		h = append(h, "device (both): "+c.Base.Device)
	case c.Base.Device != c.New.Device:
		h = append(h, fmt.Sprintf("device: base %s; new %s", orDash(c.Base.Device), orDash(c.New.Device)))
	}
	if bl, nl := results.LabelString(c.Base.Labels), results.LabelString(c.New.Labels); bl != "" || nl != "" {
		if bl == nl {
			h = append(h, "labels (both): "+bl)
		} else {
			h = append(h, fmt.Sprintf("labels: base %s; new %s", orDash(bl), orDash(nl)))
		}
	}
	h = append(h, fmt.Sprintf("workload %s; medians over repetitions ± %.0f%% confidence interval ([low, high] where wider than ±%.0f%%); p: Mann-Whitney U; alpha %g, threshold %g%%",
		c.Workload, 100*c.CI, 100*maxPctRange, c.Alpha, c.Threshold))
	h = append(h, fmt.Sprintf("gated (decide the verdict, Holm-corrected): %s; the other rows are information", c.gateList()))
	return h
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// footnotes explain the marks in the table: the runs' warnings each on
// its own line in the text, one line a kind in the Markdown (md), where a
// comment says them once for both runs (warningGroups).
func (c *Comparison) footnotes(md bool) []string {
	var f []string
	for _, r := range c.Rows {
		if (r.Base.N > 0 && r.Base.Lo == nil) || (r.New.N > 0 && r.New.Lo == nil) {
			f = append(f, fmt.Sprintf("±∞: too few repetitions to bound the median: %s", c.needWhy()))
			break
		}
	}
	for _, r := range c.Rows {
		if r.Verdict == verdictSame {
			f = append(f, fmt.Sprintf("~: no significant difference (p > %g; for gated rows, Holm's p): the delta is shown but not established", c.Alpha))
			break
		}
	}
	for _, r := range c.Rows {
		if !r.Gated {
			f = append(f, fmt.Sprintf("info: not gated; its p is tested alone at %g, and a verdict there does not decide", c.Alpha))
			break
		}
	}
	if len(c.Warnings) > 0 && !md {
		f = append(f, "warnings of the runs (!N on a row: warning N concerns that row's op kind; the others concern every row):")
		for i, w := range c.Warnings {
			f = append(f, fmt.Sprintf("  %d. %s", i+1, w))
		}
	}
	if groups := c.warningGroups(); len(groups) > 0 && md {
		f = append(f, "warnings of the runs, one line a kind (!N on a row: warning N concerns that row's op kind; the others concern every row; each run's summary.md has them in full):")
		for i, g := range groups {
			f = append(f, fmt.Sprintf("  %d. %s", i+1, g.line))
		}
	}
	return f
}

// warningGroup is the runs' warnings of one kind, as a comparison's
// Markdown says them: on a shared runner both runs warn of the same
// things (threads share CPUs, an untimed stretch in every op kind), and a
// comment that lists each of them for each run ends every time with the
// same twenty lines. A kind is one line, said once for both runs.
type warningGroup struct {
	kind    string
	members []int // indices into Comparison.Warnings
	line    string
}

// warningGroups groups c.Warnings by kind, in the order the kinds first
// appear: each group's line names the runs that gave it ("both" where
// both did) and its text, the whole where it fits a line
// (results.TerminalLines), else its gist.
func (c *Comparison) warningGroups() []warningGroup {
	var groups []warningGroup
	ws := make([]results.Warning, len(c.Warnings))
	sides := make([]string, len(c.Warnings))
	for i, w := range c.Warnings {
		sides[i], w.Text, _ = strings.Cut(w.Text, ": ")
		// A result older than typed warnings has its warnings as text
		// alone: their meaning, what follows the fact's last ": ", is
		// what groups them.
		if w.Kind == results.WarnUnclassified && w.Means == "" {
			if k := strings.LastIndex(w.Text, ": "); k > 0 {
				w.Means = w.Text[k+2:]
			}
		}
		ws[i] = w
		key := w.Kind
		if w.Kind == results.WarnUnclassified {
			key += ": " + w.Means
		}
		j := slices.IndexFunc(groups, func(g warningGroup) bool { return g.kind == key })
		if j < 0 {
			groups = append(groups, warningGroup{kind: key})
			j = len(groups) - 1
		}
		groups[j].members = append(groups[j].members, i)
	}
	for i, g := range groups {
		var who []string
		// Said once for both runs: the same fact in each is one.
		var unique []results.Warning
		notices := true
		for _, m := range g.members {
			if !slices.Contains(who, sides[m]) {
				who = append(who, sides[m])
			}
			if !slices.ContainsFunc(unique, func(u results.Warning) bool { return u.Text == ws[m].Text }) {
				unique = append(unique, ws[m])
			}
			notices = notices && ws[m].Severity == results.SeverityNotice
		}
		label := strings.Join(who, ", ")
		if len(who) == 2 {
			label = "both"
		}
		if notices {
			label += " (notice)"
		}
		groups[i].line = results.TerminalLines(unique, label, MarkdownFile)[0]
	}
	return groups
}

// mdMarks are a row's warning marks in the Markdown: the groups
// (warningGroups) its warnings belong to.
func (c *Comparison) mdMarks(r CompareRow, groups []warningGroup) string {
	var s []string
	for i, g := range groups {
		for _, m := range r.Warned {
			if slices.Contains(g.members, m-1) {
				s = append(s, fmt.Sprint(i+1))
				break
			}
		}
	}
	if len(s) == 0 {
		return ""
	}
	return "!" + strings.Join(s, ",")
}

// WriteText writes c as an aligned table.
func (c *Comparison) WriteText(w io.Writer) error {
	t := textTable{
		header: c.header(), notesTitle: "differences (base → new):", notes: c.Notes,
		columns: []string{"op", "metric", "", "base", "new", "delta", "p", "verdict"},
		after:   c.footnotes(false), verdict: c.Verdict(),
	}
	marks := len(c.Warnings) > 0 // a column for the warning marks only when there are some
	if marks {
		t.columns = append(t.columns, "warnings")
	}
	for _, r := range c.Rows {
		row := []string{r.Kind, r.Metric, r.role(), r.ci(r.Base), r.ci(r.New), r.delta(), r.pValue(), r.Verdict}
		if marks {
			row = append(row, r.marks())
		}
		t.rows = append(t.rows, row)
	}
	return t.write(w)
}

// textTable is the text compare prints, two-way or N-way: the header
// lines, the differences under their title, the aligned table, the
// footnotes (and warnings), and the verdict last.
type textTable struct {
	header     []string
	notesTitle string
	notes      []string
	columns    []string
	rows       [][]string
	after      []string
	verdict    string
}

func (t textTable) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, h := range t.header {
		fmt.Fprintln(bw, h)
	}
	if len(t.notes) > 0 {
		fmt.Fprintln(bw, t.notesTitle)
		for _, n := range t.notes {
			fmt.Fprintln(bw, "  "+n)
		}
	}
	fmt.Fprintln(bw)
	tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.columns, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(bw)
	for _, f := range t.after {
		fmt.Fprintln(bw, f)
	}
	fmt.Fprintln(bw, "verdict: "+t.verdict)
	return bw.Flush()
}

// outcome is the one word a CI reader needs first: PASS, FAIL (a
// significant regression beyond the threshold in a gated metric) or
// UNDECIDED (too few repetitions for a gate to decide).
func (c *Comparison) outcome() string {
	switch {
	case c.Regressions > 0:
		return "FAIL"
	case c.TooFew:
		return "UNDECIDED"
	}
	return "PASS"
}

// WriteMarkdown writes c for a CI job summary ($GITHUB_STEP_SUMMARY, a
// GitLab MR note): the verdict on the first line, then the table, then the
// runs, gates, differences and footnotes collapsed in a <details> block,
// so a page of several jobs' summaries stays readable.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "**xrcbench compare %s: %s** — %s\n\n", mdText(c.Workload), c.outcome(), mdText(c.Verdict()))
	groups := c.warningGroups()
	fmt.Fprintln(bw, "| op | metric | role | base | new | delta | p | verdict | warnings |")
	fmt.Fprintln(bw, "|---|---|---|---:|---:|---:|---:|---|---|")
	for _, r := range c.Rows {
		v := mdText(r.Verdict)
		if r.Verdict == VerdictRegression && r.Gated {
			v = "**regression**"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(r.Kind), mdText(r.Metric), r.role(), r.ci(r.Base), r.ci(r.New), r.delta(), r.pValue(), v, c.mdMarks(r, groups))
	}
	// GitHub renders Markdown inside <details> only after a blank line.
	fmt.Fprint(bw, "\n<details><summary>runs, gates and notes</summary>\n\n")
	for _, h := range c.header() {
		fmt.Fprintf(bw, "- %s\n", mdText(strings.Replace(h, "  ", " ", 1)))
	}
	for _, n := range c.Notes {
		fmt.Fprintf(bw, "- **differs** (base → new): %s\n", mdText(n))
	}
	if f := c.footnotes(true); len(f) > 0 {
		fmt.Fprintln(bw)
		for _, line := range f {
			fmt.Fprintf(bw, "%s  \n", mdText(line)) // they quote the runs' warnings
		}
	}
	fmt.Fprint(bw, "\n</details>\n")
	return bw.Flush()
}

// WriteJSON writes c as JSON, with the verdict.
func (c *Comparison) WriteJSON(w io.Writer) error {
	return writeJSON(w, struct {
		*Comparison
		Verdict string `json:"verdict"`
	}{c, c.Verdict()})
}

// writeJSON writes v indented, as compare's --format json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
