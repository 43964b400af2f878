package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// TestWarningsOneLine: what the CLI warns of on the terminal is one line
// each, at most results.TerminalWidth long, the full text left to
// summary.md; a notice (outlier repetitions: the median holds) is said as
// a notice, with -v, never as a warning.
func TestWarningsOneLine(t *testing.T) {
	dir := t.TempDir()
	// labelled are stderr's warning and notice lines, each checked
	// against the bound.
	labelled := func(t *testing.T, stderr string) (warns, notices []string) {
		t.Helper()
		for _, l := range strings.Split(stderr, "\n") {
			warn, notice := strings.HasPrefix(l, "warning: "), strings.HasPrefix(l, "notice: ")
			if (warn || notice) && utf8.RuneCountInString(l) > results.TerminalWidth {
				t.Errorf("a line of %d characters, more than %d:\n%s", utf8.RuneCountInString(l), results.TerminalWidth, l)
			}
			switch {
			case warn:
				warns = append(warns, l)
			case notice:
				notices = append(notices, l)
			}
		}
		return warns, notices
	}

	t.Run("run", func(t *testing.T) {
		// An operation of 10µs due every µs: saturated for certain, and
		// saturation's warning is a paragraph in full.
		out := filepath.Join(dir, "run")
		code, _, stderr := runEngine(t, "run", "-v", "--workload", "steady", "--threads", "1", "--qps", "1",
			"--rate", "1000000", "--arrival", "fixed", "--sim-cost", "reg=10us,unreg=10us",
			"--duration", "200ms", "--warmup", "0s", "--repetitions", "2", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		warns, _ := labelled(t, stderr)
		res, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		summary, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		plain := strings.ReplaceAll(string(summary), `\`, "") // summary.md escapes Markdown
		saturated := false
		for _, w := range res.Warnings {
			saturated = saturated || w.Kind == results.WarnOpenLoopSaturated
			if !strings.Contains(plain, w.Text) {
				t.Errorf("summary.md lacks the full warning %q", w.Text)
			}
		}
		if !saturated {
			t.Fatalf("no %s warning in result.json: %v", results.WarnOpenLoopSaturated, res.Warnings)
		}
		said := false
		for _, l := range warns {
			said = said || strings.Contains(l, "open loop saturated")
		}
		if !said {
			t.Errorf("stderr does not warn of the saturation:\n%s", stderr)
		}
	})

	t.Run("report", func(t *testing.T) {
		// The noisy fixture's fifth repetition is three times the others:
		// outlier repetitions, whose median holds.
		code, _, stderr := runEngine(t, "report", "-v", fixture("noisy"), "--out", filepath.Join(dir, "report"))
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		warns, notices := labelled(t, stderr)
		for _, l := range warns {
			if strings.Contains(l, "outlier repetitions") {
				t.Errorf("outlier repetitions said as a warning: %s", l)
			}
		}
		n := 0
		for _, l := range notices {
			if strings.Contains(l, "outlier repetitions") {
				n++
			}
		}
		if n == 0 || len(warns) == 0 {
			t.Errorf("want warnings and outlier notices on stderr:\n%s", stderr)
		}
	})
}
