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
	// Confidence of the intervals around the medians (0.95 when zero).
	Confidence float64
}

// Verdicts of a CompareRow.
const (
	VerdictRegression  = "regression"
	VerdictImprovement = "improvement"
	VerdictSmall       = "below threshold" // significant, but smaller than the threshold
	VerdictSame        = "~"               // not significant
	VerdictTooFew      = "too few repetitions"
	VerdictNoData      = "no data"
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
	// TooFew is set when some row could not be tested for lack of
	// repetitions; NeedReps is then how many each run needs.
	TooFew   bool `json:"too_few_repetitions"`
	NeedReps int  `json:"repetitions_needed,omitempty"`
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
	P           *float64 `json:"p"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict"`
	metric      Metric
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
// refused with an error wrapping ErrInput.
func Compare(base, new *Run, opt CompareOptions) (*Comparison, error) {
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	b, n := base.Result, new.Result
	if b.Config.Workload != n.Config.Workload {
		return nil, inputErrorf("different workloads: base %s ran %q, new %s ran %q; compare runs of one workload",
			base.Dir, b.Config.Workload, new.Dir, n.Config.Workload)
	}
	if b.Config.WorkloadSpec != "" && n.Config.WorkloadSpec != "" && b.Config.WorkloadSpec != n.Config.WorkloadSpec {
		return nil, inputErrorf("workload %q differs between %s and %s (its spec text changed); compare runs of one workload",
			b.Config.Workload, base.Dir, new.Dir)
	}
	for _, run := range []*Run{base, new} {
		if run.Result.Status == results.StatusFailed {
			return nil, inputErrorf("%s: a failed run (%s) has nothing to compare", run.Dir, run.Result.Error)
		}
		var measured int64
		for _, s := range run.Result.Ops {
			measured += s.Count
		}
		if measured == 0 {
			return nil, inputErrorf("%s: no operation measured (ops is empty or all zero): nothing to compare", run.Dir)
		}
	}
	c := &Comparison{
		Workload: b.Config.Workload,
		Base:     runInfo(base), New: runInfo(new),
		Alpha: opt.Alpha, Threshold: opt.Threshold, CI: opt.Confidence,
		Notes: differences(base, new),
	}
	inBase, inNew := map[string]bool{}, map[string]bool{}
	for _, k := range base.Kinds {
		inBase[k] = true
	}
	for _, k := range new.Kinds {
		inNew[k] = true
	}
	var kinds []string
	for _, k := range base.Kinds {
		if inNew[k] {
			kinds = append(kinds, k)
		} else {
			c.Notes = append(c.Notes, fmt.Sprintf("%s only in base", k))
		}
	}
	for _, k := range new.Kinds {
		if !inBase[k] {
			c.Notes = append(c.Notes, fmt.Sprintf("%s only in new", k))
		}
	}
	thr := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	for _, kind := range kinds {
		for _, m := range opt.Metrics {
			row := CompareRow{Kind: kind, Metric: m.Name, metric: m}
			bv := RepetitionStats(b, kind, m).Values
			nv := RepetitionStats(n, kind, m).Values
			// NewSample sorts in place: give it copies.
			bs := benchmath.NewSample(append([]float64(nil), bv...), thr)
			ns := benchmath.NewSample(append([]float64(nil), nv...), thr)
			row.Base, row.New = center(bs, opt.Confidence), center(ns, opt.Confidence)
			if len(bv) == 0 || len(nv) == 0 {
				row.Verdict = VerdictNoData
				// Operations were counted but not per repetition: the test
				// has nothing to work on, which must not pass as "no
				// regression".
				if b.Ops[kind].Count > 0 || n.Ops[kind].Count > 0 {
					row.Verdict = VerdictTooFew
					c.TooFew = true
				}
				c.Rows = append(c.Rows, row)
				continue
			}
			if row.Base.Median != 0 {
				d := (row.New.Median/row.Base.Median - 1) * 100
				row.DeltaPct = &d
			}
			if minP := minUTestP(len(bv), len(nv)); minP > opt.Alpha {
				// Even completely separated samples could not reach
				// alpha: any verdict would be a guess.
				row.Verdict = VerdictTooFew
				c.TooFew = true
				c.Rows = append(c.Rows, row)
				continue
			}
			cmp := benchmath.AssumeNothing.Compare(bs, ns)
			p := cmp.P
			row.P = &p
			row.Significant = !(cmp.P > cmp.Alpha) // as benchmath.Comparison.FormatDelta
			switch {
			case !row.Significant:
				row.Verdict = VerdictSame
			case row.DeltaPct == nil:
				row.Verdict = VerdictSmall
			case worse(m, *row.DeltaPct, opt.Threshold):
				row.Verdict = VerdictRegression
				c.Regressions++
			case worse(m, -*row.DeltaPct, opt.Threshold):
				row.Verdict = VerdictImprovement
			default:
				row.Verdict = VerdictSmall
			}
			c.Rows = append(c.Rows, row)
		}
	}
	if c.TooFew {
		c.NeedReps = RepetitionsNeeded(opt.Alpha)
	}
	return c, nil
}

// worse reports whether a change of deltaPct in m is worse than threshold.
func worse(m Metric, deltaPct, threshold float64) bool {
	if m.BetterHigher {
		return deltaPct < -threshold
	}
	return deltaPct > threshold
}

func center(s *benchmath.Sample, confidence float64) Center {
	c := Center{N: len(s.Values)}
	if c.N == 0 {
		return c
	}
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	c.Median = sum.Center
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
		lo, hi := sum.Lo, sum.Hi
		c.Lo, c.Hi = &lo, &hi
	}
	return c
}

// minUTestP is the smallest two-sided p-value the Mann-Whitney U test can
// give for samples of n1 and n2 values: all of one below all of the other,
// one arrangement of C(n1+n2, n1) in each direction.
func minUTestP(n1, n2 int) float64 {
	// C(n1+n2, n1) as a running product: exact in float64 for the sample
	// sizes of repetitions, and it saturates to +Inf rather than overflow.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// RepetitionsNeeded is the smallest number of repetitions per run with
// which the Mann-Whitney U test can reach alpha at all.
func RepetitionsNeeded(alpha float64) int {
	n := 1
	for minUTestP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

// medianCINeeded is the smallest number of repetitions for which the
// median has a finite confidence interval at level confidence: the
// interval [min, max] covers the median with probability 1 − 2·0.5ⁿ.
func medianCINeeded(confidence float64) int {
	n := 2
	for 1-2*math.Pow(0.5, float64(n)) < confidence && n < 1000 {
		n++
	}
	return n
}

func runInfo(run *Run) RunInfo {
	r := run.Result
	return RunInfo{
		Dir: run.Dir, Host: r.Environment.Host, Provider: r.Config.Provider,
		Device: deviceLine(r.Environment), Status: r.Status,
		Repetitions: len(r.Repetitions), Version: r.Environment.Version,
	}
}

// differences lists what differs between two runs of one workload: they
// may be compared, but the reader must know.
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
	for _, k := range []string{"name", "fw_ver", "hw_ver", "vendor_part_id", "driver"} {
		bv, bok := b.Environment.Device[k]
		nv, nok := n.Environment.Device[k]
		if bok || nok {
			diff("device "+k, orNone(bv, bok), orNone(nv, nok))
		}
	}
	diff("CPU", b.Environment.CPUModel, n.Environment.CPUModel)
	diff("kernel", b.Environment.Kernel, n.Environment.Kernel)
	diff("procs", b.Config.Procs, n.Config.Procs)
	diff("threads", b.Config.Threads, n.Config.Threads)
	diff("qps", b.Config.QPs, n.Config.QPs)
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
	for _, r := range c.Rows {
		if r.Verdict == VerdictRegression {
			regs = append(regs, fmt.Sprintf("%s %s %+.1f%% (p=%.3g)", r.Kind, r.Metric, *r.DeltaPct, *r.P))
		}
	}
	switch {
	case len(regs) > 0:
		return fmt.Sprintf("%d significant regression(s) beyond %g%%: %s", len(regs), c.Threshold, strings.Join(regs, "; "))
	case c.TooFew:
		return fmt.Sprintf("undecided: too few repetitions (base %d, new %d): the Mann-Whitney U test at alpha %g needs at least %d per run; rerun both with --repetitions %d or more",
			c.Base.Repetitions, c.New.Repetitions, c.Alpha, c.NeedReps, c.NeedReps)
	default:
		return fmt.Sprintf("no significant regression beyond %g%%", c.Threshold)
	}
}

func (r CompareRow) ci(c Center) string {
	if c.N == 0 {
		return "–"
	}
	s := r.metric.Format(c.Median)
	if c.Lo == nil {
		return s + " ±∞"
	}
	sum := benchmath.Summary{Center: c.Median, Lo: *c.Lo, Hi: *c.Hi}
	return s + " ±" + sum.PctRangeString()
}

func (r CompareRow) delta() string {
	if r.DeltaPct == nil {
		return "–"
	}
	if r.Verdict == VerdictSame {
		return "~"
	}
	return fmt.Sprintf("%+.1f%%", *r.DeltaPct)
}

func (r CompareRow) pValue() string {
	if r.P == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *r.P)
}

func (c *Comparison) header() []string {
	h := []string{
		fmt.Sprintf("base: %s (%s on %s, %s)", c.Base.Dir, c.Base.Provider, c.Base.Host, plural(c.Base.Repetitions, "repetition")),
		fmt.Sprintf("new:  %s (%s on %s, %s)", c.New.Dir, c.New.Provider, c.New.Host, plural(c.New.Repetitions, "repetition")),
	}
	switch {
	case c.Base.Device == c.New.Device && c.Base.Device != "":
		h = append(h, "device (both): "+c.Base.Device)
	case c.Base.Device != c.New.Device:
		h = append(h, fmt.Sprintf("device: base %s; new %s", orDash(c.Base.Device), orDash(c.New.Device)))
	}
	h = append(h, fmt.Sprintf("workload %s; medians over repetitions ± %.0f%% confidence interval; p: Mann-Whitney U; alpha %g, threshold %g%%",
		c.Workload, 100*c.CI, c.Alpha, c.Threshold))
	return h
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// footnotes explain the marks in the table.
func (c *Comparison) footnotes() []string {
	var f []string
	for _, r := range c.Rows {
		if (r.Base.N > 0 && r.Base.Lo == nil) || (r.New.N > 0 && r.New.Lo == nil) {
			f = append(f, fmt.Sprintf("±∞: a %.0f%% confidence interval of a median needs at least %d repetitions", 100*c.CI, medianCINeeded(c.CI)))
			break
		}
	}
	for _, r := range c.Rows {
		if r.Verdict == VerdictSame {
			f = append(f, fmt.Sprintf("~: no significant difference (p > %g)", c.Alpha))
			break
		}
	}
	return f
}

// WriteText writes c as an aligned table.
func (c *Comparison) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, h := range c.header() {
		fmt.Fprintln(bw, h)
	}
	if len(c.Notes) > 0 {
		fmt.Fprintln(bw, "differences (base → new):")
		for _, n := range c.Notes {
			fmt.Fprintln(bw, "  "+n)
		}
	}
	fmt.Fprintln(bw)
	tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tmetric\tbase\tnew\tdelta\tp\tverdict")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.Metric, r.ci(r.Base), r.ci(r.New), r.delta(), r.pValue(), r.Verdict)
	}
	tw.Flush()
	fmt.Fprintln(bw)
	for _, f := range c.footnotes() {
		fmt.Fprintln(bw, f)
	}
	fmt.Fprintln(bw, "verdict: "+c.Verdict())
	return bw.Flush()
}

// WriteMarkdown writes c as a Markdown table, for CI job summaries.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## xrcbench compare: %s\n\n", mdText(c.Workload))
	for _, h := range c.header() {
		fmt.Fprintf(bw, "- %s\n", mdText(strings.Replace(h, "  ", " ", 1)))
	}
	for _, n := range c.Notes {
		fmt.Fprintf(bw, "- **differs** (base → new): %s\n", mdText(n))
	}
	fmt.Fprintln(bw, "\n| op | metric | base | new | delta | p | verdict |")
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---|")
	for _, r := range c.Rows {
		v := r.Verdict
		if v == VerdictRegression {
			v = "**regression**"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %s |\n", mdText(r.Kind), mdText(r.Metric), r.ci(r.Base), r.ci(r.New), r.delta(), r.pValue(), v)
	}
	fmt.Fprintln(bw)
	for _, f := range c.footnotes() {
		fmt.Fprintf(bw, "%s  \n", f)
	}
	fmt.Fprintf(bw, "**Verdict:** %s\n", c.Verdict())
	return bw.Flush()
}

// WriteJSON writes c as JSON, with the verdict.
func (c *Comparison) WriteJSON(w io.Writer) error {
	out := struct {
		*Comparison
		Verdict string `json:"verdict"`
	}{c, c.Verdict()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
