package results

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// TerminalWidth is the longest line, label included, that a warning or
// notice takes on the terminal. A warning there is read between progress
// lines and the summary table, often in a CI log: a paragraph of 1,400
// characters is skipped. The full text is in result.json and summary.md
// (and report.html), which the line names.
const TerminalWidth = 160

// SummaryDetail is where a run's warnings are said in full.
const SummaryDetail = "summary.md"

// gists say what a kind of warning means in a few words: the line a group
// of them gets on the terminal when their own text does not fit.
var gists = map[string]string{
	WarnCPUShared:          "threads share CPUs, so latencies include time spent preempted",
	WarnCPUStarved:         "the machine was busy: throughput is understated",
	WarnStartSkew:          "threads did not start together: the figures mix loads",
	WarnDuration:           "measured length departs from the requested duration",
	WarnLatencyCount:       "latencies were lost between threads and result: a harness fault",
	WarnTimerDrift:         "the timer's overhead moved: the machine changed during the run",
	WarnCoverage:           "too little of the working time was timed: stalls may be in no latency",
	WarnUntimedGap:         "untimed stretches longer than the p99.9: a stall there is in no latency",
	WarnOpenLoopSaturated:  "open loop saturated: response times measure the queue; lower --rate",
	WarnOpenLoopEndStall:   "open loop stalled at the end: operations due were not run",
	WarnLateReports:        "interval reports came after their interval was written",
	WarnHolderRelease:      "releasing a holder failed: its QPs may outlive the run",
	WarnTestDouble:         "measured through the libibverbs test double, not an adapter",
	WarnSimOnDisk:          "the sim device is on a disk file system: set TMPDIR to /dev/shm",
	WarnVersionUnknown:     "xrcbench version unknown: build with make build",
	WarnLeak:               "QPs outlived the run",
	WarnDestroyUnconfirmed: "the device still lists QPs whose destroy returned 0",
	WarnCPUSetup:           "the CPUs are not set for measuring (governor, turbo, SMT siblings)",
	WarnFleetLate:          "a fleet node started after the common start",
	WarnFirmwareFailed:     "firmware commands failed: the device may hold what the run counts as gone",
}

// TerminalLines are ws as the terminal shows them, each line starting
// with label ("warning", "notice") and at most TerminalWidth long: one
// line per kind, in the order the kinds first appear. A group whose
// text fits is said whole, as summary.md says it; else its facts with
// the kind; else the kind's gist (for a legacy result's unclassified
// warnings, the meaning their text ends with) with the repetitions and op
// kinds it concerns. The two shorter forms name detail (summary.md),
// where the whole text is.
func TerminalLines(ws []Warning, label, detail string) []string {
	var kinds []string
	groups := map[string][]Warning{}
	for _, w := range ws {
		if _, ok := groups[w.Kind]; !ok {
			kinds = append(kinds, w.Kind)
		}
		groups[w.Kind] = append(groups[w.Kind], w)
	}
	var out []string
	for _, k := range kinds {
		g := groups[k]
		head := label + ": "
		if full := FoldWarnings(g); len(full) == 1 && fits(head+full[0]) {
			out = append(out, head+full[0])
			continue
		}
		// tail names the kind (a legacy result's warnings have none to
		// name), what else is given, and where the whole text is.
		named := k != WarnUnclassified && k != ""
		tail := func(more ...string) string {
			parts := more
			if named {
				parts = append([]string{k}, more...)
			}
			if len(parts) == 0 {
				return " (detail in " + detail + ")"
			}
			return " (" + strings.Join(parts, ", ") + "; detail in " + detail + ")"
		}
		facts := make([]string, len(g))
		for i, w := range g {
			facts[i] = w.Fact()
		}
		// Facts alone say what a warning means only beside its kind's
		// name, which a legacy result's warnings lack.
		if l := head + strings.Join(facts, "; ") + tail(); fits(l) && named {
			out = append(out, l)
			continue
		}
		gist, ok := gists[k]
		switch {
		case ok:
		case g[0].Means != "": // unclassified: what its text says it means
			gist = g[0].Means
		default:
			gist = g[0].Fact()
		}
		t := tail(scope(g)...)
		out = append(out, head+Shorten(gist, TerminalWidth-utf8.RuneCountInString(head+t))+t)
	}
	return out
}

func fits(line string) bool { return utf8.RuneCountInString(line) <= TerminalWidth }

// scope names the repetitions and op kinds a group concerns, none for
// the run as a whole.
func scope(g []Warning) []string {
	var reps []int
	var ops, out []string
	for _, w := range g {
		if w.Repetition > 0 && !slices.Contains(reps, w.Repetition) {
			reps = append(reps, w.Repetition)
		}
		if w.Op != "" && !slices.Contains(ops, w.Op) {
			ops = append(ops, w.Op)
		}
	}
	if len(reps) > 0 {
		slices.Sort(reps)
		noun := "repetition "
		if len(reps) > 1 {
			noun = "repetitions "
		}
		out = append(out, noun+Ranges(reps))
	}
	return append(out, ops...)
}

// Ranges writes sorted numbers with runs of three or more as ranges:
// "1-3, 5".
func Ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		default:
			for _, n := range ns[i : j+1] {
				parts = append(parts, fmt.Sprint(n))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Shorten is s cut to at most n runes at a word boundary, "…" marking
// the cut.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	r := []rune(s)[:n-1]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		r = []rune(strings.TrimRight(string(r)[:i], " ,;:"))
	}
	return string(r) + "…"
}
