package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// Metric is one number of an OpStats that reports and compare look at.
type Metric struct {
	Name string // as on the command line: p50, p99, ops_per_sec
	// BetterHigher is true for throughput, false for latencies.
	BetterHigher bool
	// Latency metrics are in nanoseconds and formatted as durations.
	Latency bool
	Get     func(results.OpStats) float64
	// Storm reads a storm's figure of repetition i instead (a metric of
	// stormMetrics, kind results.StormKind): false when it has none
	// there (the rank that did not finish, the teardown not measurable).
	Storm func(s *results.Storm, i int) (float64, bool)
}

// stormMetrics are a storm's own per-repetition figures, gated and
// compared as kind results.StormKind ("storm.makespan"): the makespan and
// the teardown's duration.
var stormMetrics = []Metric{
	{Name: "makespan", Latency: true, Storm: func(s *results.Storm, i int) (float64, bool) { return stormFigure(s.MakespanNS, i) }},
	{Name: "teardown", Latency: true, Storm: func(s *results.Storm, i int) (float64, bool) { return stormFigure(s.TeardownNS, i) }},
}

// stormFigure is repetition i's figure of a storm's per-repetition list;
// -1 (not finished) and absent are no figure.
func stormFigure(ns []int64, i int) (float64, bool) {
	if i >= len(ns) || ns[i] < 0 {
		return 0, false
	}
	return float64(ns[i]), true
}

// GateMetric is the metric a gate names: a storm's own (stormMetrics) for
// kind results.StormKind, an op kind's (allMetrics) for any other.
func GateMetric(g Gate) (Metric, bool) {
	list := allMetrics
	if g.Kind == results.StormKind {
		list = stormMetrics
	}
	for _, m := range list {
		if m.Name == g.Metric {
			return m, true
		}
	}
	return Metric{}, false
}

// gateKinds is the kinds a run's gates may name: its op kinds and, for a
// storm, results.StormKind.
func gateKinds(run *Run) []string {
	if run.Result.Storm != nil {
		return append(slices.Clone(run.Kinds), results.StormKind)
	}
	return run.Kinds
}

// allMetrics lists every metric by name.
var allMetrics = []Metric{
	{Name: "p50", Latency: true, Get: func(s results.OpStats) float64 { return float64(s.NS.P50) }},
	{Name: "p90", Latency: true, Get: func(s results.OpStats) float64 { return float64(s.NS.P90) }},
	{Name: "p99", Latency: true, Get: func(s results.OpStats) float64 { return float64(s.NS.P99) }},
	{Name: "p999", Latency: true, Get: func(s results.OpStats) float64 { return float64(s.NS.P999) }},
	{Name: "max", Latency: true, Get: func(s results.OpStats) float64 { return float64(s.NS.Max) }},
	{Name: "mean", Latency: true, Get: func(s results.OpStats) float64 { return s.NS.Mean }},
	{Name: "ops_per_sec", BetterHigher: true, Get: func(s results.OpStats) float64 { return s.OpsPerSec }},
	// An open loop's response times (--rate), from the intended starts;
	// 0 in a closed loop.
	{Name: "response_p50", Latency: true, Get: func(s results.OpStats) float64 { return responseOf(s, func(l *results.Latency) int64 { return l.P50 }) }},
	{Name: "response_p99", Latency: true, Get: func(s results.OpStats) float64 { return responseOf(s, func(l *results.Latency) int64 { return l.P99 }) }},
	{Name: "response_p999", Latency: true, Get: func(s results.OpStats) float64 {
		return responseOf(s, func(l *results.Latency) int64 { return l.P999 })
	}},
	{Name: "response_max", Latency: true, Get: func(s results.OpStats) float64 { return responseOf(s, func(l *results.Latency) int64 { return l.Max }) }},
}

func responseOf(s results.OpStats, f func(*results.Latency) int64) float64 {
	if s.ResponseNS == nil {
		return 0
	}
	return float64(f(s.ResponseNS))
}

// MetricByName returns the metric called name.
func MetricByName(name string) (Metric, bool) {
	for _, m := range allMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames lists the names of allMetrics, for error messages.
func MetricNames() string {
	var names []string
	for _, m := range allMetrics {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// Format formats v in the metric's unit.
func (m Metric) Format(v float64) string {
	if m.Latency {
		return units.FormatNS(v)
	}
	return units.FormatRate(v)
}

// Unit names what the metric measures and in what: latencies are
// written with their own SI prefix (units.FormatNS), rates in operations per
// second.
func (m Metric) Unit() string {
	if m.Latency {
		return "latency"
	}
	return "ops/s"
}

// Thresholds above which the report warns. They are judgement calls,
// named here so the report can say which limit was crossed.
const (
	// highVariation: MAD/median across repetitions. Above 10% the
	// repetitions disagree enough that one run's figure is not the figure.
	highVariation = 0.10
	// timerOverheadShare: the timer's own cost relative to a kind's p50.
	// Above 10% the timer is a visible part of what is measured.
	timerOverheadShare = 0.10
	// timerDominates: above it the timer is most of what a kind's p50 is,
	// which the report warns of; between the two it notes it.
	timerDominates = 0.5
)

// RepStats summarises one metric of one op kind across repetitions.
type RepStats struct {
	Kind   string
	Metric Metric
	// Values by repetition, in repetition order; Reps are their indices.
	Values []float64
	Reps   []int
	Median float64
	MAD    float64
	// Variation is MAD/Median (0 when the median is 0).
	Variation float64
	// Outliers are repetition indices outside Tukey's fences: below
	// Q1 - 1.5 IQR or above Q3 + 1.5 IQR.
	Outliers []int
}

// RepetitionStats computes RepStats of kind and m over r's repetitions
// that ran the kind at all.
func RepetitionStats(r *results.Result, kind string, m Metric) RepStats {
	rs := RepStats{Kind: kind, Metric: m}
	if m.Storm != nil || kind == results.StormKind {
		stormValues(&rs, r)
		return rs.summarise()
	}
	_, inRun := r.Ops[kind]
	for _, rep := range r.Repetitions {
		s, ok := rep.Ops[kind]
		if !ok || s.Count == 0 {
			// A repetition in which a kind the run has stalled did 0
			// ops/s: dropping it would hide the stall from compare. It
			// has no latency to count.
			if inRun && !m.Latency {
				rs.Values = append(rs.Values, 0)
				rs.Reps = append(rs.Reps, rep.Index)
			}
			continue
		}
		rs.Values = append(rs.Values, m.Get(s))
		rs.Reps = append(rs.Reps, rep.Index)
	}
	return rs.summarise()
}

// stormValues fills rs with a storm metric's figure in each repetition
// that has one; nothing for a run that is not a storm, or a metric that
// is not a storm's.
func stormValues(rs *RepStats, r *results.Result) {
	if r.Storm == nil || rs.Metric.Storm == nil || rs.Kind != results.StormKind {
		return
	}
	for i := range r.Storm.MakespanNS {
		if v, ok := rs.Metric.Storm(r.Storm, i); ok {
			rs.Values = append(rs.Values, v)
			rs.Reps = append(rs.Reps, i)
		}
	}
}

// summarise sets the median, MAD, variation and outliers of rs.Values.
func (rs RepStats) summarise() RepStats {
	if len(rs.Values) == 0 {
		return rs
	}
	rs.Median, rs.MAD = stats.Median(rs.Values), stats.MAD(rs.Values)
	if rs.Median != 0 {
		rs.Variation = rs.MAD / math.Abs(rs.Median)
	}
	// Fewer than 4 values have no fences (TukeyOutliers): no repetition is
	// called an outlier.
	bad := map[float64]bool{}
	for _, v := range stats.TukeyOutliers(rs.Values) {
		bad[v] = true
	}
	for i, v := range rs.Values {
		if bad[v] {
			rs.Outliers = append(rs.Outliers, rs.Reps[i])
		}
	}
	return rs
}

// summaryMetrics are the metrics the report's variation table shows.
var summaryMetrics = []string{"p50", "p99", "ops_per_sec"}

// warningLines lists what the reader of run's report must know: status, errors,
// leaks, the engine's own warnings, variation and outliers across
// repetitions, start skew, timer overhead, and problems reading the folder.
func warningLines(run *Run) []string {
	var out []string
	for _, f := range warnings(run, true) {
		out = append(out, f.text)
	}
	return out
}

// finding is one of warningLines: a notice is a fact about how the figures
// were measured that does not change what they mean (a tail's spread
// over short repetitions, a repetition a percent off the others); the
// report's summary lists every finding, its stderr only the warnings.
type finding struct {
	text   string
	notice bool
	// gist is text in a few words, for the terminal when text is longer
	// than a line there (results.TerminalWidth).
	gist string
}

// stderrLines are the findings report says on stderr, the warnings and the
// notices apart, and not the run's own, which the run said when it ran:
// each its text, or where that is longer than a terminal line its gist
// and where the text is (summary.md); prefix (a run's label) goes first.
func stderrLines(run *Run, prefix string) (warns, notices []string) {
	for _, f := range warnings(run, false) {
		l := terminalText(prefix+f.text, prefix+f.gist, "warning: ")
		if f.notice {
			notices = append(notices, l)
		} else {
			warns = append(warns, l)
		}
	}
	return warns, notices
}

// terminalText is text, or where label+text is longer than a terminal
// line (results.TerminalWidth), gist and where text is said in full.
func terminalText(text, gist, label string) string {
	room := results.TerminalWidth - utf8.RuneCountInString(label)
	if utf8.RuneCountInString(text) <= room {
		return text
	}
	tail := " (detail in " + MarkdownFile + ")"
	return results.Shorten(gist, room-utf8.RuneCountInString(tail)) + tail
}

// warnings are warningLines' findings, the engine's own (the run's
// result.json) among them only when engine is set.
func warnings(run *Run, engine bool) []finding {
	r := run.Result
	var w []finding
	add := func(notice bool, gist, format string, args ...any) {
		w = append(w, finding{fmt.Sprintf(format, args...), notice, gist})
	}
	switch r.Status {
	case results.StatusPartial:
		add(false, "partial run: the figures cover what was measured before it stopped", "partial run: %s; the figures cover what was measured before it stopped", r.Error)
	case results.StatusFailed:
		add(false, "failed run: nothing here is trustworthy", "failed run: %s; nothing here is trustworthy", r.Error)
	}
	for _, kind := range run.Kinds {
		s := r.Ops[kind]
		if s.Errors > 0 {
			msg := fmt.Sprintf("%s: %s in %s (%.2g%%)", kind, units.Plural(int(s.Errors), "error"), units.Plural(int(s.Count), "operation"), 100*float64(s.Errors)/float64(s.Count))
			if len(s.ErrnoCounts) > 0 {
				var parts []string
				for _, e := range slices.Sorted(maps.Keys(s.ErrnoCounts)) {
					parts = append(parts, fmt.Sprintf("%s %d", e, s.ErrnoCounts[e]))
				}
				msg += ": " + strings.Join(parts, ", ")
			}
			add(false, fmt.Sprintf("%s: %s: failed operations timed failures, not operations", kind, units.Plural(int(s.Errors), "error")), "%s: a failed operation timed a failure, not the operation; find its cause before reading the figures (xrcbench conform checks the device)", msg)
		}
	}
	if r.Leaks != nil && len(r.Leaks.Leaked) > 0 {
		add(false, units.Plural(len(r.Leaks.Leaked), "QP")+" outlived the run", "%s outlived the run (leak check by %s): %v: the device holds them until their domain closes, and the next run starts beside them; look with xrcbench devices", units.Plural(len(r.Leaks.Leaked), "QP"), r.Leaks.Method, r.Leaks.Leaked)
	}
	for _, e := range r.Warnings {
		if engine {
			add(e.Severity == results.SeverityNotice, "engine: "+e.Fact(), "engine: %s", e.Text)
		}
	}
	if s := tooFewRepetitions(r, run.Kinds); s != "" {
		add(false, fmt.Sprintf("%s: too few to compare; rerun with --repetitions %d or more", units.Plural(len(r.Repetitions), "repetition"), rerunRepetitions(r)), "%s", s)
	}
	// The figures that vary across repetitions, one line per severity:
	// a line each said the same meaning a dozen times.
	var varies [2][]string // [0] warnings, [1] notices (tails)
	fewest, most := 0, 0   // repetitions of the varying figures
	for _, kind := range run.Kinds {
		for _, name := range summaryMetrics {
			m, _ := MetricByName(name)
			rs := RepetitionStats(r, kind, m)
			// A tail (p99) spreads over repetitions of a second or two as a
			// matter of course: a notice; the median and the rate are what
			// compare gates on, and their spread is a warning.
			tail := name == "p99"
			if len(rs.Values) >= 2 && rs.Variation > highVariation {
				i := 0
				if tail {
					i = 1
				}
				varies[i] = append(varies[i], fmt.Sprintf("%s %s %.1f%% of %s", kind, name, 100*rs.Variation, m.Format(rs.Median)))
				if fewest == 0 || len(rs.Values) < fewest {
					fewest = len(rs.Values)
				}
				most = max(most, len(rs.Values))
			}
			if len(rs.Outliers) > 0 {
				var vals []string
				for _, i := range rs.Outliers {
					vals = append(vals, fmt.Sprintf("#%d %s", i+1, m.Format(rs.Values[indexOf(rs.Reps, i)])))
				}
				// An outlier is a notice however far it lies, as its text
				// says: the figures are medians, which one repetition
				// does not move; a wide spread of the repetitions is the
				// variation's warning below.
				add(true, fmt.Sprintf("%s %s: outlier repetitions %s; the median holds", kind, name, strings.Join(vals, ", ")), "%s %s: outlier repetitions (more than 1.5 IQR below Q1 or above Q3; median %s): %s: they met another state of the machine; the median holds, a mean would not",
					kind, name, m.Format(rs.Median), strings.Join(vals, ", "))
			}
		}
	}
	over := fmt.Sprint(most)
	if fewest != most {
		over = fmt.Sprintf("%d-%d", fewest, most)
	}
	for i, items := range varies {
		if len(items) > 0 {
			add(i == 1, "varying across repetitions: "+strings.Join(items, ", "), "varying across repetitions (MAD as a share of the median, over %s repetitions, limit %.0f%%): %s: one figure does not describe them; run on a quieter machine, with --pin, or with more repetitions",
				over, 100*highVariation, strings.Join(items, ", "))
		}
	}
	if skew := r.Harness.StartSkewNS; skew > 0 {
		if shortest := shortestRepetition(r); shortest > 0 && float64(skew) > results.StartSkewShare*shortest {
			add(false, fmt.Sprintf("start skew %s: threads did not start together", units.FormatNS(float64(skew))), "start skew %s is %.1f%% of the shortest repetition (%s): threads did not start together, and some ran alone; run again on a quieter machine",
				units.FormatNS(float64(skew)), 100*float64(skew)/shortest, units.FormatNS(shortest))
		}
	}
	if oh := r.Harness.TimerOverheadNS; oh > 0 {
		for _, kind := range run.Kinds {
			p50 := float64(r.Ops[kind].NS.P50)
			if r.Ops[kind].Count > 0 && p50 > 0 && oh > timerOverheadShare*p50 {
				// Every latency includes one timer read, the same in
				// both runs of a comparison: a notice, a warning where it
				// is most of the figure.
				add(oh < timerDominates*p50, fmt.Sprintf("%s: the timer is %.0f%% of its p50", kind, 100*oh/p50), "%s: timer overhead %s (%s) is %.0f%% of its p50 %s: the timer is part of what is measured",
					kind, units.FormatNS(oh), r.Harness.Timer, 100*oh/p50, units.FormatNS(p50))
			}
		}
	}
	for _, n := range run.Notes {
		add(false, n, "%s", n)
	}
	return w
}

func indexOf(xs []int, x int) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// shortestRepetition is the wall time of the shortest repetition in ns, or
// the configured duration when no repetition recorded one.
func shortestRepetition(r *results.Result) float64 {
	var ds []float64
	for _, rep := range r.Repetitions {
		if rep.Duration > 0 {
			ds = append(ds, float64(rep.Duration))
		}
	}
	if len(ds) == 0 {
		return float64(r.Config.Duration)
	}
	sort.Float64s(ds)
	return ds[0]
}

// rerunRepetitions is the one count of repetitions a report of r asks
// for when it has fewer: compare's (MinRepetitions) and, where the
// headline has a destruction cost, its interval's (repsForCI), the larger
// of the two, so that the headline's advice and the warning's name the
// same figure (they once said 6 and 5 for one run).
func rerunRepetitions(r *results.Result) int {
	need := MinRepetitions(DefaultAlpha, DefaultConfidence, len(DefaultGates(r, results.KindsOf(r))))
	if d := destructionCost(r); d != nil {
		need = max(need, d.NeedReps)
	}
	return need
}

// TooFewRepetitions is tooFewRepetitions of r's own op kinds: what run
// says on stderr after a run compare could not judge ("" when enough).
func TooFewRepetitions(r *results.Result) string {
	if len(r.Repetitions) == 0 {
		return ""
	}
	return tooFewRepetitions(r, results.KindsOf(r))
}

// tooFewRepetitions says, when r has fewer repetitions than its report
// needs, what needs more and how many to rerun with (rerunRepetitions).
func tooFewRepetitions(r *results.Result, kinds []string) string {
	n := len(r.Repetitions)
	gates := len(DefaultGates(r, kinds))
	compare := MinRepetitions(DefaultAlpha, DefaultConfidence, gates)
	need := rerunRepetitions(r)
	var whys []string
	if n < 2 {
		whys = append(whys, "no estimate of run-to-run variation")
	}
	if n < compare {
		whys = append(whys, fmt.Sprintf("compare needs at least %d per run (the Mann-Whitney U test at alpha %g over the workload's %s, Holm, and a %.0f%% interval of the median)",
			compare, DefaultAlpha, units.Plural(gates, "gated metric"), 100*DefaultConfidence))
	}
	if d := destructionCost(r); d != nil && n < d.NeedReps {
		whys = append(whys, fmt.Sprintf("the headline's %.0f%% interval of what destruction adds needs %d", 100*ciLevel, d.NeedReps))
	}
	// Enough for compare, short of the destruction interval's: the
	// headline gives the range and its confidence instead, and asks for
	// the count itself (Destruction.Rerun), so a warning would only say
	// it twice.
	if n >= need || n >= compare {
		return ""
	}
	return fmt.Sprintf("%s: %s; rerun with --repetitions %d or more", units.Plural(n, "repetition"), strings.Join(whys, "; "), need)
}
