package qualify

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// judge evaluates every criterion of the plan. Absolute limits are judged
// on every repetition of the run: the worst repetition decides, and is
// named. Limits relative to the baseline use compare's test (each run's
// relative criteria are its gates, Holm-corrected together) and have three
// outcomes: pass when the measured change is within the limit, fail when
// it is beyond the limit and significant, inconclusive when it is beyond
// the limit but the test cannot confirm it.
func judge(o Options, base *Qualification, runs map[string]*report.Run) []Row {
	var rows []Row
	comparisons := map[string]*report.Comparison{}
	compareErr := map[string]error{}
	for _, c := range o.Plan.Criteria {
		start := time.Now()
		row := judgeOne(o, base, runs, c, comparisons, compareErr)
		row.Seconds = time.Since(start).Seconds()
		rows = append(rows, row)
	}
	return rows
}

func judgeOne(o Options, base *Qualification, runs map[string]*report.Run, c Criterion, comparisons map[string]*report.Comparison, compareErr map[string]error) Row {
	if c.Firmware {
		return firmwareRow(o, c, runs)
	}
	row := Row{Name: c.Name(), Run: c.Run, Evidence: []string{filepath.Join(RunsDir, c.Run)}}
	run := runs[c.Run]
	switch {
	case run == nil:
		row.Verdict, row.Message = Error, fmt.Sprintf("run %s did not measure: nothing to judge", c.Run)
		return row
	case !c.Relative:
		return absolute(c, run, row)
	case base == nil:
		row.Verdict, row.Message = Skipped, "no --baseline: a limit relative to the baseline is not judged"
		return row
	}
	cmp, ok := comparisons[c.Run]
	if !ok && compareErr[c.Run] == nil {
		cmp, compareErr[c.Run] = compareRun(o, c.Run, run)
		comparisons[c.Run] = cmp
	}
	if err := compareErr[c.Run]; err != nil {
		row.Verdict, row.Message = Error, err.Error()
		return row
	}
	row.Evidence = append(row.Evidence, filepath.Join(o.Baseline, RunsDir, c.Run))
	return relative(c, cmp, row)
}

// absolute judges a limit on every repetition of the run: a limit holds
// only if it holds in each, so the worst repetition decides and is named
// (a pooled figure over all repetitions can sit within the limit while one
// repetition is far beyond it). The pooled figure is shown beside it.
func absolute(c Criterion, run *report.Run, row Row) Row {
	s, ok := run.Result.Ops[c.Kind]
	if !ok || s.Count == 0 {
		row.Verdict, row.Message = Error, fmt.Sprintf("run %s measured no %s", c.Run, c.Kind)
		return row
	}
	pooled := c.Metric.Get(s)
	row.Pooled, row.Limit, row.Unit = &pooled, &c.Limit, unit(c.Metric)
	holds := func(v float64) bool {
		if c.Op == ">=" {
			return v >= c.Limit
		}
		return v <= c.Limit
	}
	// The limit as the plan writes it: "<= 2ms", ">= 100k".
	f := strings.Fields(c.Check)
	limit := c.Op + " " + f[len(f)-1]
	what := c.Kind + "." + c.Metric.Name
	rs := report.RepetitionStats(run.Result, c.Kind, c.Metric)
	if len(rs.Values) == 0 {
		// Only a result without per-repetition figures gets here: the
		// pooled figure is all there is, and the message says so.
		row.Value = &pooled
		row.Verdict = map[bool]string{true: Pass, false: Fail}[holds(pooled)]
		row.Message = fmt.Sprintf("%s %s %s over all repetitions (no repetition has its own figure, so the pooled one is judged): %s the limit %s",
			c.Kind, c.Metric.Name, c.Metric.Format(pooled), map[bool]string{true: "within", false: "beyond"}[holds(pooled)], limit)
		row.Brief = fmt.Sprintf("%s %s %s pooled (limit %s)", c.Run, what, c.Metric.Format(pooled), limit)
		return row
	}
	worst, beyond := 0, 0
	for i, v := range rs.Values {
		if !holds(v) {
			beyond++
		}
		// The worst is the one farthest on the limit's wrong side: the
		// highest latency, the lowest rate.
		if (c.Op == ">=" && v < rs.Values[worst]) || (c.Op != ">=" && v > rs.Values[worst]) {
			worst = i
		}
	}
	w, rep := rs.Values[worst], rs.Reps[worst]+1 // repetitions count from 1, as the engine's warnings and the plots do
	row.Value, row.Repetition = &w, &rep
	n := len(run.Result.Repetitions)
	measured := ""
	if len(rs.Values) < n {
		measured = fmt.Sprintf(", %d of the %d repetitions measured it", len(rs.Values), n)
	}
	if beyond == 0 {
		row.Verdict = Pass
		row.Message = fmt.Sprintf("%s %s within the limit %s in every repetition: worst repetition %d at %s (%d repetition(s)%s; %s over all repetitions)",
			c.Kind, c.Metric.Name, limit, rep, c.Metric.Format(w), len(rs.Values), measured, c.Metric.Format(pooled))
	} else {
		row.Verdict = Fail
		row.Message = fmt.Sprintf("%s %s beyond the limit %s in %d of %d repetition(s): worst repetition %d at %s (%s over all repetitions%s)",
			c.Kind, c.Metric.Name, limit, beyond, len(rs.Values), rep, c.Metric.Format(w), c.Metric.Format(pooled), measured)
	}
	row.Brief = fmt.Sprintf("%s %s %s in repetition %d (limit %s)", c.Run, what, c.Metric.Format(w), rep, limit)
	return row
}

// compareRun compares the run with the baseline's run of the same name,
// gated on the run's relative criteria.
func compareRun(o Options, name string, run *report.Run) (*report.Comparison, error) {
	dir := filepath.Join(o.Baseline, RunsDir, name)
	b, err := report.LoadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("baseline run %s: %v", name, err)
	}
	var gates []report.Gate
	for _, c := range o.Plan.Criteria {
		if c.Run == name && c.Relative {
			g := report.Gate{Kind: c.Kind, Metric: c.Metric.Name}
			if !containsGate(gates, g) {
				gates = append(gates, g)
			}
		}
	}
	// The baseline ran the same plan; whether its settings may differ
	// (a sim cost standing in for firmware) is the qualification's own
	// question, not compare's refusal (report.ConfigDiff).
	cmp, err := report.Compare(b, run, report.CompareOptions{Threshold: 0, Alpha: o.Alpha, Metrics: nil, Gates: gates, AllowConfigDiff: true,
		FloorNS: float64(time.Duration(o.Plan.MinChange))})
	if err != nil {
		return nil, fmt.Errorf("comparing with baseline run %s: %v", name, err)
	}
	return cmp, nil
}

func containsGate(gs []report.Gate, g report.Gate) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

// relative judges a change against the baseline. Within the limit (the
// measured change, whatever the test says) passes: a significant change
// of +3% meets a 5% limit. Beyond it, a significant change fails; one the
// test cannot tell from noise is inconclusive, never a pass: the
// repetitions do not show the limit held. Only regressions count: an
// improvement of any size is within the limit. Repetitions too few for
// compare's test still give the change, so the limit decides first as
// ever; beyond it nothing can be significant, and the row is inconclusive
// and says how many repetitions a significant result needs (compare's
// one minimum, report.MinRepetitions).
func relative(c Criterion, cmp *report.Comparison, row Row) Row {
	var r *report.CompareRow
	for i := range cmp.Rows {
		if cmp.Rows[i].Kind == c.Kind && cmp.Rows[i].Metric == c.Metric.Name {
			r = &cmp.Rows[i]
		}
	}
	lim := c.Limit
	row.Limit, row.Unit = &lim, "%"
	switch {
	case r == nil:
		row.Verdict, row.Message = Error, fmt.Sprintf("%s is not in both the baseline's and this run", c.Kind)
		return row
	case r.DeltaPct == nil:
		// No change to judge: a side without per-repetition figures, or
		// a baseline median of 0.
		row.Verdict = Error
		row.Message = fmt.Sprintf("%s %s: no change can be measured (baseline %d, candidate %d repetition(s) with a figure, baseline median %s)",
			c.Kind, c.Metric.Name, r.Base.N, r.New.N, c.Metric.Format(r.Base.Median))
		return row
	case c.Metric.Latency && math.Abs(r.New.Median-r.Base.Median) < cmp.FloorNS:
		// Whatever the test and the repetitions: the timer cannot
		// resolve the change (report's floorTimerReads).
		d := *r.DeltaPct
		row.Value, row.Verdict = &d, Pass
		row.Message = fmt.Sprintf("%s %s %s → %s (%+.1f%%): a change under the floor of %s (plan min_change, or two timer reads), which the timer cannot resolve: not judged against the %g%% limit",
			c.Kind, c.Metric.Name, c.Metric.Format(r.Base.Median), c.Metric.Format(r.New.Median), d, c.Metric.Format(cmp.FloorNS), lim)
		row.Brief = fmt.Sprintf("%s %s.%s %+.1f%% under the %s floor", c.Run, c.Kind, c.Metric.Name, d, c.Metric.Format(cmp.FloorNS))
		return row
	case r.Verdict == report.VerdictTooFew || r.PAdj == nil:
		return tooFew(c, cmp, r, row)
	}
	d, p := *r.DeltaPct, *r.PAdj
	row.Value, row.P = &d, &p
	worse := regression(c, d)
	row.Verdict = relativeVerdict(worse, lim, r.Significant)
	how := "not significant"
	if r.Significant {
		how = "significant"
	}
	var judged string
	switch {
	case row.Verdict == Fail:
		judged = fmt.Sprintf("a regression beyond the %g%% limit", lim)
	case row.Verdict == Inconclusive:
		judged = fmt.Sprintf("beyond the %g%% limit, but the test cannot confirm the change: inconclusive (more repetitions may decide)", lim)
	case worse < 0:
		judged = fmt.Sprintf("an improvement, within the %g%% limit", lim)
	default:
		judged = fmt.Sprintf("within the %g%% limit", lim)
	}
	row.Message = fmt.Sprintf("%s %s %s → %s (%+.1f%%, Holm p %.3g, %s at alpha %g): %s",
		c.Kind, c.Metric.Name, c.Metric.Format(r.Base.Median), c.Metric.Format(r.New.Median), d, p, how, cmp.Alpha, judged)
	row.Brief = fmt.Sprintf("%s %s.%s %+.1f%% (limit %g%%, p %.2g)", c.Run, c.Kind, c.Metric.Name, d, lim, p)
	return row
}

// regression is the change d (in percent) in the direction that is a
// regression: up for a latency, down for a rate.
func regression(c Criterion, d float64) float64 {
	if c.Metric.BetterHigher {
		return -d
	}
	return d
}

// tooFew judges a change whose repetitions are too few for compare's
// test: within the limit it passes, as any change within it does; beyond
// it no test could confirm it, so it is inconclusive, naming the
// repetitions per run that a significant result needs.
func tooFew(c Criterion, cmp *report.Comparison, r *report.CompareRow, row Row) Row {
	d, lim := *r.DeltaPct, c.Limit
	row.Value = &d
	worse := regression(c, d)
	row.Verdict = relativeVerdict(worse, lim, false)
	reps := fmt.Sprintf("baseline %d, candidate %d repetition(s), too few for compare's test", r.Base.N, r.New.N)
	var judged string
	switch {
	case row.Verdict == Inconclusive:
		judged = fmt.Sprintf("beyond the %g%% limit, but too few repetitions to confirm the change: inconclusive (a significant result needs %d repetitions per run)",
			lim, cmp.NeedReps)
	case worse < 0:
		judged = fmt.Sprintf("an improvement, within the %g%% limit", lim)
	default:
		judged = fmt.Sprintf("within the %g%% limit", lim)
	}
	row.Message = fmt.Sprintf("%s %s %s → %s (%+.1f%%, %s): %s",
		c.Kind, c.Metric.Name, c.Metric.Format(r.Base.Median), c.Metric.Format(r.New.Median), d, reps, judged)
	row.Brief = fmt.Sprintf("%s %s.%s %+.1f%% (limit %g%%, %d repetitions: %d needed)", c.Run, c.Kind, c.Metric.Name, d, lim,
		min(r.Base.N, r.New.N), cmp.NeedReps)
	return row
}

// relativeVerdict is the rule for a limit relative to the baseline, given
// the change in the regression's direction (positive: worse), the limit
// in percent and whether compare's test found the change significant.
func relativeVerdict(worse, limit float64, significant bool) string {
	switch {
	case worse <= limit:
		return Pass
	case significant:
		return Fail
	}
	return Inconclusive
}

func unit(m report.Metric) string {
	if m.Latency {
		return "ns"
	}
	return "ops/s"
}

// verdict is the whole qualification's verdict and its one-line summary:
// fail when a check failed or could not be judged or a run failed, else
// inconclusive when a check was, else pass; then how many checks had each
// verdict, and every check that did not pass with its magnitude.
func verdict(q *Qualification) (string, string) {
	count, named, n, bad := tally(q)
	v := Pass
	switch {
	case len(bad) > 0:
		// A run failed or was stopped (^C): the qualification failed,
		// whether or not what it measured was also disturbed (a run cut
		// short is "disturbed" in its duration).
		v = Fail
	case len(q.Disturbed) > 0 && !q.AcceptedDisturbed:
		v = NotJudged
	case count[Fail]+count[Error] > 0:
		v = Fail
	case count[Inconclusive] > 0:
		v = Inconclusive
	}
	// What the verdict stands on, said before anything else: a baseline
	// taken despite its own verdict, runs judged despite being disturbed.
	var notes []string
	if v == NotJudged {
		notes = append(notes, fmt.Sprintf("the runs were disturbed beyond the plan's quality thresholds (%s), so the figures are the machine's, not the firmware's; --accept-disturbed judges them anyway",
			firstN(q.Disturbed, 3)))
	}
	if q.AcceptedDisturbed && len(q.Disturbed) > 0 {
		notes = append(notes, fmt.Sprintf("judged with --accept-disturbed although the runs were disturbed (%s)", firstN(q.Disturbed, 3)))
	}
	if b := q.Baseline; b != nil && b.Accepted {
		notes = append(notes, fmt.Sprintf("against a baseline whose own verdict was %s, accepted with --accept-baseline", verdictWord(b.Verdict)))
	}
	s := verdictWord(v)
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	s += fmt.Sprintf(": %d checks: %d passed, %d failed, %d inconclusive", n, count[Pass], count[Fail], count[Inconclusive])
	if count[Error] > 0 {
		s += fmt.Sprintf(", %d could not be judged", count[Error])
	}
	if count[Skipped] > 0 {
		s += fmt.Sprintf(", %d not judged", count[Skipped])
	}
	s += "."
	for _, d := range notPassedLines(q, named, bad) {
		s += " " + d
	}
	return v, s
}

// tally counts q's checks by verdict and names those that did not pass
// (their brief, by verdict), with how many checks there are and the runs
// that were not ok.
func tally(q *Qualification) (count map[string]int, named map[string][]string, n int, bad []string) {
	count, named = map[string]int{}, map[string][]string{}
	for _, set := range [][]Row{q.Conformance, q.Criteria, q.Soak} {
		for _, r := range set {
			n++
			count[r.Verdict]++
			if r.Verdict != Pass {
				b := r.Brief
				if b == "" {
					b = r.Name
				}
				named[r.Verdict] = append(named[r.Verdict], b)
			}
		}
	}
	for _, r := range q.Runs {
		if r.Status != results.StatusOK {
			bad = append(bad, r.Name+" "+r.Status)
		}
	}
	return count, named, n, bad
}

// notPassedLines are the sentences naming what did not pass, the runs not
// ok, the test double and the warnings: the summary's tail, and the
// terminal's lines under the verdict line.
func notPassedLines(q *Qualification, named map[string][]string, bad []string) []string {
	var out []string
	for _, part := range []struct{ verdict, label string }{
		{Fail, "Failed"}, {Inconclusive, "Inconclusive"}, {Error, "Could not be judged"}, {Skipped, "Not judged"},
	} {
		if len(named[part.verdict]) > 0 {
			out = append(out, part.label+": "+strings.Join(named[part.verdict], "; ")+".")
		}
	}
	if len(bad) > 0 {
		out = append(out, "Runs not ok: "+strings.Join(bad, ", ")+".")
	}
	if len(q.TestDouble) > 0 {
		out = append(out, "Not hardware: measured through the libibverbs test double.")
	}
	// Notices (late interval reports) say how a run was measured, not
	// that its figures mean less: they are not counted as warnings.
	w := 0
	for _, x := range q.Warnings {
		if x.Severity != results.SeverityNotice {
			w++
		}
	}
	if w > 0 {
		out = append(out, fmt.Sprintf("%d warning(s) from the runs.", w))
	}
	return out
}

// MaxHeadline is the most characters the verdict line takes: one line of
// a terminal, one line of the page's first screen.
const MaxHeadline = 100

// Headline is the verdict in one short line, the page's and the
// terminal's first: the verdict, what it was judged despite, the counts,
// and the labels compared, "FAIL: 7 of 42 checks failed, 1 inconclusive
// (fw=1.0 → fw=1.1)". What failed and why is under it (Details, the
// page's criteria table), the whole in Summary.
func Headline(q *Qualification) string {
	count, _, n, bad := tally(q)
	s := verdictWord(q.Verdict)
	var despite []string
	if q.AcceptedDisturbed {
		despite = append(despite, "--accept-disturbed")
	}
	if b := q.Baseline; b != nil && b.Accepted {
		despite = append(despite, verdictWord(b.Verdict)+" baseline, --accept-baseline")
	}
	if len(despite) > 0 {
		s += " (" + strings.Join(despite, "; ") + ")"
	}
	if q.Verdict == NotJudged {
		s += fmt.Sprintf(": the runs were disturbed (%d reason(s)), %d checks not judged", len(q.Disturbed), n)
	} else {
		switch {
		case count[Fail] > 0:
			s += fmt.Sprintf(": %d of %d checks failed", count[Fail], n)
		case count[Pass] == 0 && count[Inconclusive] > 0:
			s += fmt.Sprintf(": %d of %d checks inconclusive", count[Inconclusive], n)
		default:
			s += fmt.Sprintf(": %d of %d checks passed", count[Pass], n)
		}
		for _, e := range []struct {
			verdict, word string
			show          bool
		}{
			{Inconclusive, "inconclusive", count[Fail] > 0 || count[Pass] > 0},
			{Error, "could not be judged", true},
			{Skipped, "skipped", true},
		} {
			if e.show && count[e.verdict] > 0 {
				s += fmt.Sprintf(", %d %s", count[e.verdict], e.word)
			}
		}
		if len(bad) > 0 {
			s += fmt.Sprintf(", %d run(s) not ok", len(bad))
		}
	}
	// The labels compared, shortened to fit: the line stays one line.
	cand := labelText(q.Labels)
	base := ""
	if q.Baseline != nil {
		base = labelText(q.Baseline.Labels)
	}
	room := MaxHeadline - utf8.RuneCountInString(s)
	var what string
	switch {
	case q.Baseline != nil && (base != "" || cand != ""):
		b, c := or(base, "baseline"), or(cand, "candidate")
		if n := room - utf8.RuneCountInString(" ( → )"); utf8.RuneCountInString(b+c) > n && n >= 8 {
			b, c = clip(b, n/2), clip(c, n-n/2)
		}
		what = " (" + b + " → " + c + ")"
	case cand != "":
		if n := room - len(" ()"); utf8.RuneCountInString(cand) > n && n >= 4 {
			cand = clip(cand, n)
		}
		what = " (" + cand + ")"
	}
	if utf8.RuneCountInString(what) <= room {
		s += what
	}
	return s
}

// Details are the lines under the verdict line on the terminal: why it
// was not judged or judged despite, what did not pass with its
// magnitude, the runs not ok, the test double, the warnings.
func Details(q *Qualification) []string {
	_, named, _, bad := tally(q)
	var out []string
	if len(q.Disturbed) > 0 {
		head := "Not judged: the runs were disturbed beyond the plan's quality thresholds (--accept-disturbed judges them anyway): "
		if q.AcceptedDisturbed {
			head = "Judged with --accept-disturbed although the runs were disturbed: "
		}
		out = append(out, head+firstN(q.Disturbed, 3)+".")
	}
	if b := q.Baseline; b != nil && b.Accepted {
		out = append(out, fmt.Sprintf("Judged against a baseline whose own verdict was %s, accepted with --accept-baseline: %s", verdictWord(b.Verdict), b.Dir))
	}
	return append(out, notPassedLines(q, named, bad)...)
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// clip shortens s to n characters, the last an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// firstN joins up to n of items, saying how many more there are.
func firstN(items []string, n int) string {
	if len(items) > n {
		return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
	}
	return strings.Join(items, "; ")
}

// firmwareRow judges FirmwareCheck on the criterion's run, or on every
// run of the plan when it names none: it fails when any firmware command
// failed during a run, naming the run, the commands and how many; it
// passes when the counters of every run that has them say none failed; it
// is skipped, with why, where no run's counters could say (the sim and
// null have no firmware, a driver other than mlx5 has no counters,
// debugfs is root-only, a kernel before the failure counters has n and
// average only): not applicable is not a pass.
func firmwareRow(o Options, c Criterion, runs map[string]*report.Run) Row {
	row := Row{Name: c.Name(), Run: c.Run}
	names := []string{c.Run}
	if c.Run == "" {
		names = nil
		for _, s := range o.Plan.Runs {
			names = append(names, s.Name)
		}
	}
	var failed, unknown []string
	judged := 0
	for _, name := range names {
		run := runs[name]
		if run == nil {
			unknown = append(unknown, name+": did not measure")
			continue
		}
		row.Evidence = append(row.Evidence, filepath.Join(RunsDir, name))
		fw := run.Result.Environment.Firmware
		switch {
		case fw == nil:
			unknown = append(unknown, fmt.Sprintf("%s: provider %s has no firmware to ask", name, run.Result.Config.Provider))
			continue
		case fw.NotReadable != "":
			unknown = append(unknown, name+": "+fw.NotReadable)
			continue
		case !fw.FailuresKnown():
			unknown = append(unknown, name+": the kernel keeps no failure counters (mlx5 debugfs has n and average only)")
			continue
		}
		judged++
		f := fw.Failed()
		var parts []string
		for _, cmd := range slices.Sorted(maps.Keys(f)) {
			parts = append(parts, fmt.Sprintf("%s %d", cmd, f[cmd]))
		}
		if len(parts) > 0 {
			failed = append(failed, name+": "+strings.Join(parts, ", "))
		}
	}
	switch {
	case len(failed) > 0:
		row.Verdict = Fail
		row.Message = "firmware commands failed during the run (mlx5 debugfs failed counters): " + strings.Join(failed, "; ") +
			"; the run's report gives the last errno, mailbox status and syndrome"
		row.Brief = "firmware commands failed: " + strings.Join(failed, "; ")
	case judged == 0:
		row.Verdict = Skipped
		row.Message = "not applicable: no run's firmware failure counters could be read: " + strings.Join(unknown, "; ")
	default:
		row.Verdict = Pass
		row.Message = fmt.Sprintf("no firmware command failed in %s (mlx5 debugfs failed counters)", units.Plural(judged, "run"))
		if len(unknown) > 0 {
			row.Message += "; not known for " + strings.Join(unknown, "; ")
		}
	}
	return row
}
