package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// headline is what a run's report says first: per op kind its p50 and p99,
// and for a run whose last unreg destroys the QP, what destruction adds.
type headline struct {
	// Kinds has one sentence per op kind that ran.
	Kinds []string
	// Destruction is the cost of destruction, nil unless the run has both
	// unreg and unreg_last.
	Destruction *destruction
	// Notes qualify the figures: a run stopped early, the test double,
	// steady's batches, all in a sentence each.
	Notes []string
}

// destruction is what the last unreg (the one that destroys the QP)
// costs beyond an ordinary unreg: unreg_last p50 − unreg p50.
type destruction struct {
	// AddsNS is unreg_last p50 − unreg p50 over all repetitions.
	AddsNS          float64
	LastNS, UnregNS float64
	// Diffs are the paired differences, one per repetition that ran both.
	Diffs []float64
	// The confidence interval of the median paired difference, by order
	// statistics (distribution-free, benchmath.AssumeNothing); valid when
	// HaveCI. Confidence is the level it reaches (≥ ciLevel).
	Lo, Hi, Confidence float64
	HaveCI             bool
	// NeedReps is how many repetitions a ciLevel interval needs; Rerun
	// how many the report asks for (rerunRepetitions), at least as many.
	NeedReps, Rerun int
}

// ciLevel is the confidence level of the headline's interval.
const ciLevel = 0.95

// newHeadline computes run's headline.
func newHeadline(run *Run) headline {
	r := run.Result
	var h headline
	// The workload's headline figure leads (results.Config.HeadlineOf).
	lead, _, _ := strings.Cut(r.Config.HeadlineOf(r.Storm != nil), ".")
	leadAt := -1
	for _, kind := range run.Kinds {
		s := r.Ops[kind]
		if s.Count == 0 {
			continue
		}
		if kind == lead {
			leadAt = len(h.Kinds)
		}
		name := kind
		if errno, _, ok := ExpectedFailures(kind, s); ok {
			name = fmt.Sprintf("%s (must fail with %s)", kind, errno)
		}
		if s.ResponseNS != nil {
			// An open loop asks how slow the device is at a rate: the
			// response time (from the intended start, the queue included)
			// answers it, the service time beside it says how much of it
			// the device's own work is.
			h.Kinds = append(h.Kinds, fmt.Sprintf("%s: response p50 %s, p99 %s; service p50 %s, p99 %s (%s, %s).",
				name, units.FormatNS(float64(s.ResponseNS.P50)), units.FormatNS(float64(s.ResponseNS.P99)),
				units.FormatNS(float64(s.NS.P50)), units.FormatNS(float64(s.NS.P99)), units.Plural(int(s.Count), "operation"), units.FormatRate(s.OpsPerSec)))
			continue
		}
		h.Kinds = append(h.Kinds, fmt.Sprintf("%s: p50 %s, p99 %s (%s, %s).",
			name, units.FormatNS(float64(s.NS.P50)), units.FormatNS(float64(s.NS.P99)), units.Plural(int(s.Count), "operation"), units.FormatRate(s.OpsPerSec)))
	}
	if leadAt > 0 {
		first := h.Kinds[leadAt]
		h.Kinds = slices.Insert(slices.Delete(h.Kinds, leadAt, leadAt+1), 0, first)
	}
	if ol := r.OpenLoop; ol != nil {
		h.Kinds = append([]string{openLoopSentence(ol)}, h.Kinds...)
	}
	if r.Storm != nil {
		h.Kinds = append([]string{stormSentence(r.Storm)}, h.Kinds...)
		h.Notes = append(h.Notes, stormNotes(r.Storm)...)
	}
	h.Destruction = destructionCost(r)
	if h.Destruction != nil {
		h.Destruction.Rerun = rerunRepetitions(r)
	}
	if IsTestDouble(r) {
		h.Notes = append(h.Notes, TestDoubleBanner)
	}
	if m := measuredNote(r); m != "" {
		h.Notes = append(h.Notes, m)
	}
	return h
}

// openLoopSentence is an open loop's verdict, first in its headline: the
// rate asked and the rate achieved, and whether the run kept up.
func openLoopSentence(ol *results.OpenLoop) string {
	s := fmt.Sprintf("Open loop at %s requested (%s arrivals), %s achieved: ", units.FormatRate(ol.RequestedOpsPerSec), ol.Arrival, units.FormatRate(ol.AchievedOpsPerSec))
	// Results before the sustained backlog was measured lack its limit.
	limit, over := units.FormatNS(float64(ol.BacklogLimitNS)), 100*ol.BacklogOverShare
	switch {
	case ol.Saturated && ol.BacklogLimitNS > 0:
		return s + fmt.Sprintf("saturated, it did not keep up (a thread was more than %s behind its schedule for %.0f%% of its measurement, %s at the end): the response times measure the queue.",
			limit, over, units.FormatNS(float64(ol.BacklogEndNS)))
	case ol.Saturated:
		return s + fmt.Sprintf("saturated, it did not keep up (%s behind at the end): the response times measure the queue.", units.FormatNS(float64(ol.BacklogEndNS)))
	case ol.BacklogLimitNS > 0:
		return s + fmt.Sprintf("it kept up (no thread more than %s behind its schedule for over %.0f%% of its measurement).", limit, over)
	}
	return s + "it kept up."
}

// destructionCost is nil unless r measured both unreg and unreg_last.
func destructionCost(r *results.Result) *destruction {
	last, lok := r.Ops[results.OpUnregLast]
	unreg, uok := r.Ops[results.OpUnreg]
	if !lok || !uok || last.Count == 0 || unreg.Count == 0 {
		return nil
	}
	d := &destruction{LastNS: float64(last.NS.P50), UnregNS: float64(unreg.NS.P50)}
	d.AddsNS = d.LastNS - d.UnregNS
	for _, rep := range r.Repetitions {
		l, u := rep.Ops[results.OpUnregLast], rep.Ops[results.OpUnreg]
		if l.Count > 0 && u.Count > 0 {
			d.Diffs = append(d.Diffs, float64(l.NS.P50)-float64(u.NS.P50))
		}
	}
	d.NeedReps = stats.MedianCINeeded(ciLevel)
	d.Rerun = d.NeedReps
	if len(d.Diffs) >= 2 {
		if iv := stats.MedianInterval(d.Diffs, ciLevel); iv.Finite {
			d.Lo, d.Hi, d.Confidence, d.HaveCI = iv.Lo, iv.Hi, iv.Confidence, true
		}
	}
	return d
}

// sentence is the headline's sentence about destruction.
func (d *destruction) sentence() string {
	s := fmt.Sprintf("Destruction adds %s (unreg_last p50 %s − unreg p50 %s)",
		units.FormatNS(d.AddsNS), units.FormatNS(d.LastNS), units.FormatNS(d.UnregNS))
	n := len(d.Diffs)
	switch {
	case d.HaveCI:
		return s + fmt.Sprintf(", %.0f%% CI [%s, %s] across %d repetitions.", 100*ciLevel, units.FormatNS(d.Lo), units.FormatNS(d.Hi), n)
	case n >= 2:
		lo, hi := slices.Min(d.Diffs), slices.Max(d.Diffs)
		return s + fmt.Sprintf("; across the %d repetitions it ranged [%s, %s], a %.1f%% confidence interval: a %.0f%% CI needs %d repetitions or more (rerun with --repetitions %d).",
			n, units.FormatNS(lo), units.FormatNS(hi), 100*(1-2*math.Pow(0.5, float64(n))), 100*ciLevel, d.NeedReps, d.Rerun)
	}
	return s + fmt.Sprintf("; a confidence interval needs repetitions (%s here): rerun with --repetitions %d or more.",
		units.Plural(n, "repetition"), d.Rerun)
}

// TestDoubleBanner is what every report of a run through the libibverbs
// test double says first.
const TestDoubleBanner = "Measured through the libibverbs test double (fakeverbs), not RDMA hardware: " + TestDoubleMeans

// TestDoubleMeans is what the banner's fact means for the figures.
const TestDoubleMeans = "these figures say how the harness and the double behave, nothing about an adapter."

// IsTestDouble reports whether r ran through the libibverbs test double.
func IsTestDouble(r *results.Result) bool {
	d := r.Environment.Device
	return d != nil && d.TestDouble
}

// ExpectedFailures says whether the operations of kind must fail, with
// which errno, and how many did so (the rest, Errors, are unexpected
// outcomes). Results that predate OpStats.Expect name no errno: their
// reg_invalid and reg_foreign kinds expected EINVAL, the only outcome the
// engine then allowed them.
func ExpectedFailures(kind string, s results.OpStats) (errno string, n int64, ok bool) {
	errno = s.Expect
	if errno == "" && (kind == results.OpRegInvalid || kind == results.OpRegForeign) {
		errno = "EINVAL"
	}
	if errno == "" {
		return "", 0, false
	}
	return errno, s.Count - s.Errors, true
}

// expectedCell is the "expected" column of a summary table.
func expectedCell(kind string, s results.OpStats) string {
	if errno, n, ok := ExpectedFailures(kind, s); ok {
		return fmt.Sprintf("expected %s: %d", errno, n)
	}
	return "–"
}

// anyExpected reports whether some kind of run must fail, so tables show
// the "expected" column only where it says something.
func anyExpected(run *Run) bool {
	for _, k := range run.Kinds {
		if _, _, ok := ExpectedFailures(k, run.Result.Ops[k]); ok {
			return true
		}
	}
	return false
}

// measured is the wall time the repetitions measured, in all.
func measured(r *results.Result) time.Duration {
	var d time.Duration
	for _, rep := range r.Repetitions {
		d += rep.Duration.D()
	}
	return d
}

// stoppedEarly reports whether r measured less than it was asked to: fewer
// repetitions, or a duration run whose repetition ended more than 5% short.
func stoppedEarly(r *results.Result) bool {
	c := r.Config
	if c.Repetitions > 0 && len(r.Repetitions) < c.Repetitions {
		return true
	}
	if c.Duration <= 0 {
		return false
	}
	for _, rep := range r.Repetitions {
		if rep.Duration.D() < c.Duration.D()*95/100 {
			return true
		}
	}
	return false
}

// measuredNote says what a run stopped early measured, "" otherwise.
func measuredNote(r *results.Result) string {
	if !stoppedEarly(r) {
		return ""
	}
	c := r.Config
	asked := units.Plural(c.Repetitions, "repetition")
	if c.Duration > 0 {
		asked += " of " + c.Duration.D().String()
	}
	return fmt.Sprintf("Stopped early: %s measured %s in all, of %s requested; the figures cover only what was measured.",
		units.Plural(len(r.Repetitions), "repetition"), roundDuration(measured(r)), asked)
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}
