package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// A storm's headline is its makespan: how long the node took, from the
// storm's start, until every rank held all its QPs.

// finished returns the values that are not -1 (not reached).
func finished(xs []int64) []int64 {
	var out []int64
	for _, x := range xs {
		if x >= 0 {
			out = append(out, x)
		}
	}
	return out
}

// StormLine says in one line what a storm was and took: its makespan
// (the median over repetitions, with their range) and its teardown.
func StormLine(st *results.Storm) string {
	var b strings.Builder
	fmt.Fprintf(&b, "storm: %d nodes x %d ranks x %d rail(s), %d QPs, %d registrations: makespan %s",
		st.Nodes, st.Ranks, st.Rails, st.QPs, st.Registrations, spread(st.MakespanNS))
	switch {
	case len(st.TeardownNS) > 0:
		fmt.Fprintf(&b, "; teardown (%s) %s", st.Teardown, spread(st.TeardownNS))
	case st.TeardownNote != "":
		fmt.Fprintf(&b, "; teardown (%s) %s", st.Teardown, st.TeardownNote)
	}
	return b.String()
}

// spread is the median of per-repetition values, and their range when
// there are several.
func spread(xs []int64) string {
	ok := finished(xs)
	if len(ok) == 0 {
		return "not reached"
	}
	slices.Sort(ok)
	med := ok[(len(ok)-1)/2]
	s := fmtDur(med)
	if len(ok) > 1 {
		s = fmt.Sprintf("%s (median of %d repetitions, %s to %s)", s, len(ok), fmtDur(ok[0]), fmtDur(ok[len(ok)-1]))
	}
	if n := len(xs) - len(ok); n > 0 {
		s += fmt.Sprintf(", %d not finished", n)
	}
	return s
}

func fmtDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(ns)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}
