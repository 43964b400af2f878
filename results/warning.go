package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Warning is one thing a result's reader must know about its figures: what
// kind of thing it is, how much it matters, which repetition and op kind
// it concerns, and the sentence that says it. A report reads the fields;
// nothing parses the text.
type Warning struct {
	Kind     string `json:"kind"`     // one of the Warn* kinds
	Severity string `json:"severity"` // SeverityWarning or SeverityNotice
	// Repetition is the repetition it concerns, counting from 1 as the
	// text does; 0: the run as a whole.
	Repetition int `json:"repetition,omitempty"`
	// Op is the op kind it concerns ("reg"); "": every kind.
	Op   string `json:"op,omitempty"`
	Text string `json:"text"`
	// Means, where set, is the part of Text after its fact (Text ends
	// ": " + Means): what the fact means for the figures and what to do,
	// shared by the warnings of one kind, so a list of them says it once.
	Means string `json:"means,omitempty"`
}

// WithMeans is w with means, what its fact means and what to do, added
// to its text.
func (w Warning) WithMeans(means string) Warning {
	w.Text += ": " + means
	w.Means = means
	return w
}

// Fact is the warning's text without its Means.
func (w Warning) Fact() string {
	if w.Means == "" {
		return w.Text
	}
	return strings.TrimSuffix(w.Text, ": "+w.Means)
}

// FoldWarnings gives each group of warnings of one kind and one Means a
// line of its own, its facts joined and its meaning said once: five op
// kinds' untimed stretches with one remedy are one line, not five.
func FoldWarnings(ws []Warning) []string {
	var out []string
	for i := 0; i < len(ws); {
		w := ws[i]
		j := i + 1
		for j < len(ws) && w.Means != "" && ws[j].Kind == w.Kind && ws[j].Means == w.Means {
			j++
		}
		if j == i+1 {
			out = append(out, w.Text)
		} else {
			facts := make([]string, 0, j-i)
			for _, f := range ws[i:j] {
				facts = append(facts, f.Fact())
			}
			out = append(out, strings.Join(facts, "; ")+": "+w.Means)
		}
		i = j
	}
	return out
}

// Severities. A notice is a fact about how the run was measured that does
// not change what its figures mean (a report may keep it for -v); a
// warning does.
const (
	SeverityWarning = "warning"
	SeverityNotice  = "notice"
)

// Warning kinds.
const (
	WarnCPUShared          = "cpu_shared"          // more threads than CPUs
	WarnCPUStarved         = "cpu_starved"         // workers got much less CPU time than they could use
	WarnStartSkew          = "start_skew"          // a repetition's threads did not start together
	WarnDuration           = "duration"            // a repetition's measured length departs from --duration
	WarnLatencyCount       = "latency_count"       // latencies recorded and operations counted disagree
	WarnTimerDrift         = "timer_drift"         // the timer's overhead moved during the run
	WarnCoverage           = "coverage"            // too little of the working time was timed
	WarnUntimedGap         = "untimed_gap"         // an untimed stretch longer than the kind's p99.9
	WarnOpenLoopSaturated  = "open_loop_saturated" // the device did not keep up with --rate
	WarnOpenLoopEndStall   = "open_loop_end_stall" // a backlog at the end only: a stall, not saturation
	WarnLateReports        = "late_reports"        // interval reports written to the .hlog after their interval
	WarnHolderRelease      = "holder_release"      // releasing a repetition's holder failed
	WarnTestDouble         = "test_double"         // measured through the libibverbs test double
	WarnSimOnDisk          = "sim_on_disk"         // the sim device's file is on a disk file system
	WarnVersionUnknown     = "version_unknown"     // built without VCS information
	WarnLeak               = "leak"                // QPs outlived the run
	WarnDestroyUnconfirmed = "destroy_unconfirmed" // the device still lists QPs whose destroy returned 0
	WarnCPUSetup           = "cpu_setup"           // the CPU check: governor, turbo/boost, busy SMT siblings
	WarnFleetLate          = "fleet_late"          // a fleet node started after the common start
	WarnFirmwareFailed     = "firmware_failed"     // firmware commands failed during the run (mlx5 debugfs)
	// WarnUnclassified is a warning read from a result that predates
	// typed warnings (a plain string): its repetition and op kind are
	// what its text starts with.
	WarnUnclassified = "unclassified"
)

// NewWarning is a warning of kind and severity about repetition rep (from
// 1; 0: the run) and op kind op ("": all), its text prefixed as results
// have always said it: "repetition 2: reg: " + text.
func NewWarning(kind, severity string, rep int, op, text string) Warning {
	prefix := ""
	if rep > 0 {
		prefix = fmt.Sprintf("repetition %d: ", rep)
	}
	if op != "" {
		prefix += op + ": "
	}
	return Warning{Kind: kind, Severity: severity, Repetition: rep, Op: op, Text: prefix + text}
}

// String is the warning's text.
func (w Warning) String() string { return w.Text }

// UnmarshalJSON reads a warning as an object or, as results that predate
// typed warnings wrote it, a string (LegacyWarning).
func (w *Warning) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*w = LegacyWarning(s)
		return nil
	}
	type plain Warning
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Warning(p)
	if w.Severity == "" {
		w.Severity = SeverityWarning
	}
	return nil
}

// LegacyWarning is a warning of a result that predates typed warnings: its
// text, the repetition it starts with ("repetition 2: ") and the op kind
// that follows ("reg: "), unclassified.
func LegacyWarning(text string) Warning {
	w := Warning{Kind: WarnUnclassified, Severity: SeverityWarning, Text: text}
	rest := text
	if after, ok := strings.CutPrefix(rest, "repetition "); ok {
		if n, tail, ok := strings.Cut(after, ": "); ok {
			if rep, err := strconv.Atoi(n); err == nil && rep > 0 {
				w.Repetition, rest = rep, tail
			}
		}
	}
	if head, _, ok := strings.Cut(rest, ":"); ok && slices.Contains(OpKinds, head) {
		w.Op = head
	}
	return w
}

// WarningTexts are the warnings' texts, in order.
func WarningTexts(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}
