package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// An interval benchstat would write as "±1275%" (reaching below zero,
// which a median of positive figures never does) is written as its
// bounds in the metric's unit; a tight one stays benchstat's ±percent.
func TestCenterCell(t *testing.T) {
	lat, _ := MetricByName("p50")
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name string
		c    Center
		want string
	}{
		{"nothing measured", Center{}, "–"},
		{"too few to bound", Center{N: 2, Median: 100}, "100ns ±∞"},
		{"tight: benchstat's ±", Center{N: 5, Median: 100, Lo: f(96), Hi: f(105)}, "100ns ±5%"},
		{"at the bound", Center{N: 5, Median: 100, Lo: f(50), Hi: f(200)}, "100ns ±100%"},
		{"wider: its bounds", Center{N: 5, Median: 110, Lo: f(80), Hi: f(591)}, "110ns [80ns, 591ns]"},
		{"far wider", Center{N: 5, Median: 1100, Lo: f(521), Hi: f(385000)}, "1.10µs [521ns, 385µs]"},
	} {
		if got := centerCell(lat, tt.c); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// On a shared runner both runs warn of the same things: the Markdown
// comment says each kind once, for both runs, in a line of bounded
// length, and a row's mark points at its kind's line; a notice neither
// marks rows nor casts doubt on a regression.
func TestCompareMarkdownWarningsOnce(t *testing.T) {
	base := synth{reps: 5, noise: 0.02, seed: 1}.run("base")
	new := synth{reps: 5, noise: 0.02, seed: 2, scale: map[string]float64{"reg": 1.25}}.run("new")
	shared := results.NewWarning(results.WarnCPUShared, results.SeverityWarning, 0, "", "4 threads on 2 CPUs").
		WithMeans("threads share CPUs, so latencies include time spent preempted")
	gap := func(op, d string) results.Warning {
		return results.NewWarning(results.WarnUntimedGap, results.SeverityWarning, 0, op, "an untimed stretch of "+d+" before one of its batches exceeds its p99.9 4µs").
			WithMeans("a stall there is in no latency (coordinated omission)")
	}
	late := results.NewWarning(results.WarnLateReports, results.SeverityNotice, 1, "", "3 interval report(s) came after their interval was written")
	base.Result.Warnings = []results.Warning{shared, gap("reg", "15.4ms"), gap("unreg", "40.9ms"), gap("unreg_last", "130ms")}
	new.Result.Warnings = []results.Warning{shared, gap("reg", "7.52ms"), gap("unreg", "75.9ms"), gap("unreg_last", "45.2ms"), late}
	c, err := Compare(base, new, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if n := strings.Count(out, "4 threads on 2 CPUs"); n != 1 {
		t.Errorf("the shared CPUs said %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{
		"1. both: 4 threads on 2 CPUs: threads share CPUs",
		"2. both: untimed stretches longer than the p99.9",
		"3. new (notice): repetition 1: 3 interval report(s)",
		"| reg | p50 | gate |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| reg |") && !strings.HasSuffix(l, "| !2 |") {
			t.Errorf("reg's row is not marked with its kind's line 2: %s", l)
		}
		if strings.HasPrefix(l, "  ") && len([]rune(strings.TrimSpace(l))) > results.TerminalWidth+4 {
			t.Errorf("a warning line of %d characters: %s", len([]rune(l)), l)
		}
	}
	// The runs' run-wide warning casts doubt on the regression; a notice
	// alone would not.
	if !strings.Contains(c.Verdict(), "the runs warned") {
		t.Errorf("verdict %q: want the runs' warnings named", c.Verdict())
	}
	base.Result.Warnings, new.Result.Warnings = nil, []results.Warning{late}
	if c, err = Compare(base, new, defaultOpts()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Verdict(), "the runs warned") {
		t.Errorf("verdict %q: a notice casts no doubt", c.Verdict())
	}
}
