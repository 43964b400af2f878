package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// row is one op kind of a run's summary table.
type row struct {
	Kind   string
	Stats  results.OpStats // over all repetitions
	P50Rep RepStats        // p50 across repetitions
	OpsRep RepStats        // ops/s across repetitions
}

// summaryRows computes the summary table of run.
func summaryRows(run *Run) []row {
	p50, _ := MetricByName("p50")
	ops, _ := MetricByName("ops_per_sec")
	var rows []row
	for _, kind := range run.Kinds {
		rows = append(rows, row{
			Kind:   kind,
			Stats:  run.Result.Ops[kind],
			P50Rep: RepetitionStats(run.Result, kind, p50),
			OpsRep: RepetitionStats(run.Result, kind, ops),
		})
	}
	return rows
}

// acrossReps formats a median over repetitions with its MAD as a share.
func acrossReps(rs RepStats) string {
	switch len(rs.Values) {
	case 0:
		return "–"
	case 1:
		return rs.Metric.Format(rs.Median) + " (1 rep)"
	}
	return fmt.Sprintf("%s ±%.1f%%", rs.Metric.Format(rs.Median), 100*rs.Variation)
}

// title is the one-line name of a run, with the state its QPs were in
// when registered and destroyed (--qp-state): it changes what destroy
// costs, so no figure is shown without it.
func title(r *results.Result) string {
	return fmt.Sprintf("%s on %s, %d×%d, %s in %s", r.Config.WorkloadLabel(), r.Config.Provider, r.Config.Procs, r.Config.Threads,
		units.Plural(r.Config.QPs, "QP"), strings.ToUpper(r.Config.QPStateOf()))
}

// deviceLine names the device, its firmware and hardware version, if known.
func deviceLine(env results.Environment) string {
	var parts []string
	for _, f := range env.Device.IdentityFacts() {
		parts = append(parts, f[0]+" "+f[1])
	}
	return strings.Join(parts, ", ")
}

// runLength describes how long the run ran: what was measured, when that
// is less than what was asked for.
func runLength(r *results.Result) string {
	c := r.Config
	if stoppedEarly(r) {
		asked := units.Plural(c.Repetitions, "repetition")
		switch {
		case c.Duration > 0:
			asked += " of " + time.Duration(c.Duration).String()
		case c.Iterations > 0:
			asked += fmt.Sprintf(" of %d iterations", c.Iterations)
		}
		return fmt.Sprintf("%s, %s measured in all (stopped early: %s requested)", units.Plural(len(r.Repetitions), "repetition"), roundDuration(measured(r)), asked)
	}
	var per string
	switch {
	case c.Duration > 0:
		per = " of " + time.Duration(c.Duration).String()
	case c.Iterations > 0:
		per = fmt.Sprintf(" of %d iterations", c.Iterations)
	}
	return units.Plural(len(r.Repetitions), "repetition") + per
}

// WriteMarkdown writes summary.md: per run, the summary table and the
// warnings, fit for a CI job summary or a pull-request comment.
func WriteMarkdown(w io.Writer, runs []*Run) error {
	bw := bufio.NewWriter(safetext.NewWriter(w))
	for i, run := range runs {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		r := run.Result
		fmt.Fprintf(bw, "## xrcbench: %s — %s\n\n", mdText(title(r)), mdText(r.Status))
		writeHeadlineMarkdown(bw, run)
		if r.Storm != nil {
			writeStormMarkdown(bw, r.Storm)
		}
		env := r.Environment
		fmt.Fprintf(bw, "Host %s, %s × %d CPUs, kernel %s", mdCode(env.Host), mdText(env.CPUModel), env.CPUs, mdText(env.Kernel))
		if d := deviceLine(env); d != "" {
			fmt.Fprintf(bw, "; device %s", mdText(d))
		}
		fmt.Fprintf(bw, ". %s, xrcbench %s. Folder %s.\n\n", runLength(r), mdText(env.Version), mdCode(run.Dir))
		if len(r.Labels) > 0 {
			fmt.Fprintf(bw, "Labels: %s.\n\n", mdText(results.LabelString(r.Labels)))
		}
		exp := anyExpected(run)
		head, rule := "| op | count | errors (unexpected) |", "|---|---:|---:|"
		if exp {
			head, rule = head+" expected failures |", rule+"---:|"
		}
		fmt.Fprintln(bw, head+" ops/s | p50 | p90 | p99 | p99.9 | max | mean | p50 across reps | ops/s across reps |")
		fmt.Fprintln(bw, rule+"---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, row := range summaryRows(run) {
			s := row.Stats
			fmt.Fprintf(bw, "| %s | %d | %d |", mdText(row.Kind), s.Count, s.Errors)
			if exp {
				fmt.Fprintf(bw, " %s |", mdText(expectedCell(row.Kind, s)))
			}
			fmt.Fprintf(bw, " %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				units.FormatRate(s.OpsPerSec),
				units.FormatNS(float64(s.NS.P50)), units.FormatNS(float64(s.NS.P90)), units.FormatNS(float64(s.NS.P99)),
				units.FormatNS(float64(s.NS.P999)), units.FormatNS(float64(s.NS.Max)), units.FormatNS(s.NS.Mean),
				acrossReps(row.P50Rep), acrossReps(row.OpsRep))
		}
		fmt.Fprintln(bw, "\n“across reps”: median over repetitions ± median absolute deviation as a share of it.")
		if w := r.Harness.Waits; w != nil {
			fmt.Fprintf(bw, "\nThe threads' working time went %s.\n", mdText(waitsText(w)))
		}
		writeOpenLoop(bw, run)
		for _, n := range firmwareNotes(r) {
			fmt.Fprintf(bw, "\n%s.\n", mdText(n))
		}
		if ws := warningLines(run); len(ws) > 0 {
			fmt.Fprintf(bw, "\n**Warnings**\n\n")
			for _, w := range ws {
				fmt.Fprintf(bw, "- %s\n", mdText(w))
			}
		}
	}
	return bw.Flush()
}

// writeHeadlineMarkdown writes the run's headline: the test-double
// banner, a sentence per op kind, what destruction adds, the notes, and
// the op-kind overlay plots when the report has them.
func writeHeadlineMarkdown(w io.Writer, run *Run) {
	h := newHeadline(run)
	for _, n := range h.Notes {
		if n == TestDoubleBanner {
			fmt.Fprintf(w, "> **Not hardware.** %s\n\n", n)
		}
	}
	fmt.Fprintln(w, "**Headline**")
	fmt.Fprintln(w)
	for _, k := range h.Kinds {
		fmt.Fprintf(w, "- %s\n", mdText(k))
	}
	if h.Destruction != nil {
		fmt.Fprintf(w, "- **%s**\n", mdText(h.Destruction.sentence()))
	}
	fmt.Fprintln(w)
	for _, n := range h.Notes {
		if n != TestDoubleBanner {
			fmt.Fprintf(w, "%s\n\n", mdText(n))
		}
	}
	// Named, not embedded: summary.md is often shown away from its folder
	// (a CI job summary), where a relative image would be a broken one.
	if len(run.overlayPlots) > 0 {
		var names []string
		for _, p := range run.overlayPlots {
			names = append(names, mdCode(p))
		}
		fmt.Fprintf(w, "Every op kind on one axis: %s (in %s, under the headline).\n\n", strings.Join(names, ", "), HTMLFile)
	}
}

// writeOpenLoop adds an open loop's response times beside the service
// times of the summary table, and what became of its schedule.
func writeOpenLoop(bw io.Writer, run *Run) {
	ol := run.Result.OpenLoop
	if ol == nil {
		return
	}
	fmt.Fprintf(bw, "\nOpen loop: %s arrivals, %s requested, %s achieved", mdText(ol.Arrival), units.FormatRate(ol.RequestedOpsPerSec), units.FormatRate(ol.AchievedOpsPerSec))
	if ol.Saturated {
		fmt.Fprint(bw, ", **saturated**")
	}
	fmt.Fprintf(bw, "; %s.\n\n", openLoopSchedule(ol))
	fmt.Fprintln(bw, "| op | time | p50 | p90 | p99 | p99.9 | max |")
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---:|")
	for _, row := range responseRows(run) {
		l := row.Lat
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %s |\n", mdText(row.Kind), row.What,
			units.FormatNS(float64(l.P50)), units.FormatNS(float64(l.P90)), units.FormatNS(float64(l.P99)),
			units.FormatNS(float64(l.P999)), units.FormatNS(float64(l.Max)))
	}
	fmt.Fprintf(bw, "\n%s\n", responseNote)
}

// responseNote says what the two times of an open loop are.
const responseNote = "Service time: from an operation's actual start; response time: from its intended start, so time behind the schedule counts."

// openLoopSchedule says what became of an open loop's schedule: its
// backlog, and its waits for intended starts.
func openLoopSchedule(ol *results.OpenLoop) string {
	s := fmt.Sprintf("backlog at the end %s (at most %s)", units.FormatNS(float64(ol.BacklogEndNS)), units.FormatNS(float64(ol.BacklogMaxNS)))
	if ol.BacklogLimitNS > 0 {
		s += fmt.Sprintf(", beyond %s for %.0f%% of a thread's measurement at most", units.FormatNS(float64(ol.BacklogLimitNS)), 100*ol.BacklogOverShare)
	}
	how := map[string]string{"spin": " (spinning)", "sleep": " (sleeping when far)"}[ol.Wait] // "": not recorded
	return s + fmt.Sprintf("; %d waits for an intended start%s, woken %s late on average (at most %s)",
		ol.Waits, how, units.FormatNS(ol.WakeLateMeanNS), units.FormatNS(float64(ol.WakeLateMaxNS)))
}

// responseRow is one line of an open loop's table: a kind's service or
// response time.
type responseRow struct {
	Kind, What string // What: "service" or "response"
	Lat        results.Latency
}

// responseRows are the service and response times of each kind of run
// that has both, the service time first.
func responseRows(run *Run) []responseRow {
	var rows []responseRow
	for _, row := range summaryRows(run) {
		s := row.Stats
		if s.ResponseNS == nil {
			continue
		}
		rows = append(rows, responseRow{row.Kind, "service", s.NS}, responseRow{row.Kind, "response", *s.ResponseNS})
	}
	return rows
}
