package results

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTerminalLines: one line per kind, at most TerminalWidth long with
// its label; a group that fits is said whole, else its facts with the
// kind, else the kind's gist with the repetitions and op kinds it
// concerns, the shorter forms naming where the whole text is.
func TestTerminalLines(t *testing.T) {
	long := strings.Repeat("a long fact ", 20)
	starved := func(rep int) Warning {
		return NewWarning(WarnCPUStarved, SeverityWarning, rep, "", "measured threads were runnable but not running for 90% of their working time (run queue, limit 25%)").
			WithMeans("the machine is busy, throughput is understated: run on an idle machine or with fewer --procs × --threads")
	}
	gap := func(op string) Warning {
		return NewWarning(WarnUntimedGap, SeverityWarning, 0, op, "an untimed stretch").WithMeans("a stall there is in no latency")
	}
	for _, tt := range []struct {
		name string
		ws   []Warning
		want []string
	}{
		{"fits whole", []Warning{NewWarning(WarnCPUShared, SeverityWarning, 0, "", "4 threads on 2 CPUs").WithMeans("threads share CPUs")},
			[]string{"warning: 4 threads on 2 CPUs: threads share CPUs"}},
		{"a kind folded, its facts fit", []Warning{gap("reg"), gap("unreg")},
			[]string{"warning: reg: an untimed stretch; unreg: an untimed stretch: a stall there is in no latency"}},
		{"facts with the kind", []Warning{NewWarning(WarnVersionUnknown, SeverityWarning, 0, "", "xrcbench version unknown: built without VCS information (-buildvcs=false)").
			WithMeans("the result cannot name the code that measured it; build with make build, which stamps the revision")},
			[]string{"warning: xrcbench version unknown: built without VCS information (-buildvcs=false) (version_unknown; detail in summary.md)"}},
		{"the gist, its repetitions", []Warning{starved(1), starved(2), starved(3), starved(5)},
			[]string{"warning: the machine was busy: throughput is understated (cpu_starved, repetitions 1-3, 5; detail in summary.md)"}},
		{"kinds apart, in order", []Warning{gap("reg"), starved(2), gap("create")},
			[]string{"warning: reg: an untimed stretch; create: an untimed stretch: a stall there is in no latency",
				"warning: repetition 2: measured threads were runnable but not running for 90% of their working time (run queue, limit 25%) (cpu_starved; detail in summary.md)"}},
		{"legacy warnings: their meaning", []Warning{
			{Kind: WarnUnclassified, Severity: SeverityWarning, Repetition: 2, Text: "repetition 2: measured 333ms: another span", Means: "another span"},
			{Kind: WarnUnclassified, Severity: SeverityWarning, Repetition: 4, Text: "repetition 4: measured 319ms, +6.4% from the requested 300ms (limit ±5%), " + long + ": another span", Means: "another span"}},
			[]string{"warning: another span (repetitions 2, 4; detail in summary.md)"}},
		{"a legacy warning: its fact cut", []Warning{LegacyWarning(long)},
			[]string{"warning: " + Shorten(long, TerminalWidth-len("warning:  (detail in summary.md)")) + " (detail in summary.md)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := TerminalLines(tt.ws, SeverityWarning, SummaryDetail)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, l := range got {
				if n := utf8.RuneCountInString(l); n > TerminalWidth {
					t.Errorf("%d characters: %s", n, l)
				}
			}
		})
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"one two three", 9, "one two…"},
		{"one, two three", 8, "one…"},
		{"abcdefghij", 5, "abcd…"},
		{"µµµµµµ", 4, "µµµ…"},
	} {
		if got := Shorten(tt.s, tt.n); got != tt.want || utf8.RuneCountInString(got) > tt.n {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// Every kind of warning has a gist, so its terminal line says what it
// means when its own text does not fit (firmware_failed once had none).
func TestEveryWarningKindHasAGist(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "warning.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		id, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, name := range id.Names {
			if !strings.HasPrefix(name.Name, "Warn") || name.Name == "WarnUnclassified" {
				continue
			}
			lit, ok := id.Values[0].(*ast.BasicLit)
			if len(id.Values) != len(id.Names) || !ok {
				continue
			}
			n++
			if kind := strings.Trim(lit.Value, `"`); gists[kind] == "" {
				t.Errorf("%s (%s) has no gist", name.Name, kind)
			}
		}
		return true
	})
	if n < 20 {
		t.Fatalf("found %d warning kinds in warning.go", n)
	}
}
