package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

// The run folders of the report package's tests.
const fixtures = "../../report/testdata/runs"

func fixture(name string) string { return filepath.Join(fixtures, name) }

// runCLI runs the CLI in-process.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(&o, &e, args)
	return code, o.String(), e.String()
}

// scaled writes a copy of the lifecycle fixture whose kind's latencies are
// multiplied by f in every repetition (and its throughput divided by f),
// as a slower implementation would measure.
func scaled(t *testing.T, kind string, f float64) string {
	t.Helper()
	r, err := results.Load(fixture("lifecycle"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range append(r.Repetitions, results.Repetition{Ops: r.Ops}) {
		s := rep.Ops[kind]
		l := &s.NS
		for _, v := range []*int64{&l.Min, &l.P50, &l.P90, &l.P99, &l.P999, &l.Max} {
			*v = int64(float64(*v) * f)
		}
		l.Mean *= f
		l.Stddev *= f
		s.OpsPerSec /= f
		rep.Ops[kind] = s
	}
	dir := t.TempDir()
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rewritten writes a copy of the lifecycle fixture's result.json after f.
func rewritten(t *testing.T, f func([]byte) []byte) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture("lifecycle"), results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.FileName), f(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkOneLine: bad input is one clear line on stderr, never a panic.
func checkOneLine(t *testing.T, stderr string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "xrcbench: ") || strings.Contains(stderr, "goroutine") {
		t.Errorf("stderr is not one line starting xrcbench: %q", stderr)
	}
}

// compareCase is one command line of compare and what it must do.
type compareCase struct {
	name    string
	args    []string
	code    int
	stdout  []string // substrings
	stderr  string   // substring; "" means stderr must be empty
	oneLine bool
}

// runCompareCases runs each case as a subtest of t.
func runCompareCases(t *testing.T, tests []compareCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runEngine(t, append([]string{"compare"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if tt.stderr == "" && stderr != "" {
				t.Errorf("stderr not empty: %q", stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q: %q", tt.stderr, stderr)
			}
			if tt.oneLine {
				checkOneLine(t, stderr)
			}
		})
	}
}

func TestCompareCLI(t *testing.T) {
	lc := fixture("lifecycle")
	slow := scaled(t, "reg", 1.25)
	tests := []compareCase{
		{"A/A", []string{lc, lc}, 0, []string{"verdict: no significant regression beyond 5%"}, "warning: the same run", false},
		{"reg +25%", []string{lc, slow}, 1, []string{"regression", "+25.", "verdict: 1 significant regression(s) beyond 5%: reg p50"}, "", false},
		{"reg +25% md", []string{lc, slow, "--format", "md"}, 1, []string{"| reg | p50 |", "**regression**"}, "significant regression", true},
		{"reg +25% under a 30% threshold", []string{lc, slow, "--threshold", "30"}, 0, []string{"below threshold", "beyond 30%"}, "", false},
		{"threshold with %", []string{lc, slow, "--threshold", "30%"}, 0, []string{"beyond 30%"}, "", false},
		{"ops/s only", []string{lc, slow, "--metric", "ops_per_sec"}, 1, []string{"reg         ops_per_sec"}, "", false},
		{"improvement is no regression", []string{slow, lc}, 0, []string{"improvement"}, "", false},
		{"missing folder", []string{lc, filepath.Join(t.TempDir(), "gone")}, 2, nil, "no such run folder", true},
		{"truncated result.json", []string{lc, rewritten(t, func(b []byte) []byte { return b[:len(b)/3] })}, 2, nil, "not a complete result.json", true},
		{"another schema", []string{lc, rewritten(t, func(b []byte) []byte {
			return bytes.Replace(b, []byte(results.Schema), []byte("xrcbench.result/v2"), 1)
		})}, 2, nil, `schema "xrcbench.result/v2"`, true},
		{"different workloads", []string{lc, fixture("noisy")}, 2, nil, "different workloads", true},
		{"too few repetitions", []string{fixture("tiny"), copyDir(t, fixture("tiny"))}, 2, []string{"too few repetitions"}, "need at least 5 per run; rerun both with --repetitions 5 or more", true},
		{"one folder", []string{lc}, 2, nil, "needs BASE_DIR and NEW_DIR", true},
		{"gate on reg p99", []string{lc, slow, "--gate", "reg.p99"}, 1, []string{"verdict: 1 significant regression(s) beyond 5%: reg p99 +25."}, "", false},
		{"unreg_last gated: reg +25% is information", []string{lc, slow, "--gate", "unreg_last.p50"}, 0, []string{"info", "no significant regression beyond 5% in unreg_last.p50"}, "", false},
		{"bad gate", []string{lc, lc, "--gate", "reg.p42"}, 2, nil, `unknown metric "p42"`, true},
		{"gate on a kind not run", []string{lc, copyDir(t, lc), "--gate", "reg_invalid.p50"}, 2, nil, "not in both runs", true},
		{"bad threshold", []string{lc, lc, "--threshold", "five"}, 2, nil, "--threshold", true},
		{"negative threshold", []string{lc, lc, "--threshold", "-5%"}, 2, nil, "0 or more", true},
		{"bad alpha", []string{lc, lc, "--alpha", "1.5"}, 2, nil, "--alpha", true},
		{"bad metric", []string{lc, lc, "--metric", "p50,p42"}, 2, nil, `"p42"`, true},
		{"bad format", []string{lc, lc, "--format", "xml"}, 2, nil, "--format", true},
	}
	runCompareCases(t, tests)
}

func TestCompareCLIJSON(t *testing.T) {
	code, stdout, _ := runCLI("compare", fixture("lifecycle"), scaled(t, "unreg_last", 1.5), "--format", "json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var c struct {
		Regressions int `json:"regressions"`
		Rows        []struct {
			Kind, Metric, Verdict string
			DeltaPct              float64 `json:"delta_pct"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if c.Regressions != 1 {
		t.Errorf("%d regressions, want 1 (unreg_last p50, gated; p99 and ops/s are information)", c.Regressions)
	}
	for _, r := range c.Rows {
		if (r.Verdict == "regression") != (r.Kind == "unreg_last") {
			t.Errorf("%s %s: verdict %s", r.Kind, r.Metric, r.Verdict)
		}
	}
}

func TestReportCLI(t *testing.T) {
	copyOf := func(name string) string {
		dst := t.TempDir()
		for _, f := range []string{results.FileName, "reg.hlog", "create.hlog", "unreg.hlog", "unreg_last.hlog"} {
			data, err := os.ReadFile(filepath.Join(fixture(name), f))
			if err != nil {
				continue // fixtures without some logs
			}
			os.WriteFile(filepath.Join(dst, f), data, 0o644)
		}
		return dst
	}
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		name    string
		args    []string
		code    int
		wrote   string // folder that must now hold report.html
		stderr  string
		oneLine bool
	}{
		{"into the run folder", []string{copyOf("lifecycle")}, 0, "$1", "", false},
		{"warnings to stderr", []string{copyOf("noisy")}, 0, "$1", "warning: partial run", false},
		{"several with --out", []string{fixture("lifecycle"), fixture("tiny"), "--out", out}, 0, out, "warning: tiny: 1 repetition", false},
		{"several without --out", []string{fixture("lifecycle"), fixture("tiny")}, 2, "", "--out", true},
		{"no folder", nil, 2, "", "at least one RUN_DIR", true},
		{"missing folder", []string{filepath.Join(t.TempDir(), "gone")}, 2, "", "no such run folder", true},
		{"unknown flag", []string{fixture("lifecycle"), "--bogus"}, 2, "", "unknown flag", true},
		{"log counts", []string{copyOf("lifecycle"), "--counts", "log"}, 0, "$1", "", false},
		{"bad counts", []string{fixture("lifecycle"), "--counts", "logarithmic"}, 2, "", `--counts: count scale "logarithmic": want auto, log or linear`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runEngine(t, append([]string{"report"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if tt.stderr == "" && stderr != "" {
				t.Errorf("stderr not empty: %q", stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q: %q", tt.stderr, stderr)
			}
			if tt.oneLine {
				checkOneLine(t, stderr)
			}
			if tt.wrote != "" {
				dir := tt.wrote
				if dir == "$1" {
					dir = tt.args[0]
				}
				for _, f := range []string{"report.html", "summary.md", "bench.txt"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Errorf("%v", err)
					}
				}
				if svgs, _ := filepath.Glob(filepath.Join(dir, "plots", "*workers.svg")); len(svgs) == 0 {
					t.Errorf("no worker plot in %s/plots", dir)
				}
				if !strings.Contains(stdout, "wrote "+dir) {
					t.Errorf("stdout %q does not say where the report went", stdout)
				}
			}
		})
	}
}

// TestReportCounts: --counts reaches the histograms: log makes every
// count axis logarithmic (four kinds and the overlay), linear none.
func TestReportCounts(t *testing.T) {
	for counts, want := range map[string]int{"log": 5, "linear": 0} {
		t.Run(counts, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if code, _, stderr := runEngine(t, "report", fixture("lifecycle"), "--out", out, "--counts", counts); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			html, err := os.ReadFile(filepath.Join(out, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(html), "The count axis is logarithmic"); n != want {
				t.Errorf("--counts %s: %d logarithmic count axes, want %d", counts, n, want)
			}
		})
	}
}

// labelled writes a copy of run folder dir's result.json with labels.
func labelled(t *testing.T, dir string, labels map[string]string) string {
	t.Helper()
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Labels = labels
	out := t.TempDir()
	if err := results.Write(out, r); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompareManyCLI(t *testing.T) {
	lc := fixture("lifecycle")
	slow := scaled(t, "reg", 1.25)
	a1 := labelled(t, lc, map[string]string{"fw": "1.0"})
	a2 := labelled(t, lc, map[string]string{"fw": "1.0", "board": "b7"})
	b := labelled(t, slow, map[string]string{"fw": "2.0"})
	// Another build of the firmware, labelled as the first.
	otherBuild := labelled(t, lc, map[string]string{"fw": "1.0"})
	r, err := results.Load(otherBuild)
	if err != nil {
		t.Fatal(err)
	}
	r.Environment.Device.FWVer += ".1"
	if err := results.Write(otherBuild, r); err != nil {
		t.Fatal(err)
	}
	plots := filepath.Join(t.TempDir(), "plots")
	tests := []compareCase{
		{"three folders", []string{lc, lc, slow}, 1, []string{"the baseline", "+25.", "regression", "verdict: 1 significant regression(s) beyond 5% against lifecycle#1: "}, "is given 2 times", false},
		{"A/A/A", []string{lc, lc, lc}, 0, []string{"verdict: no significant regression beyond 5% against lifecycle#1"}, "is given 3 times", false},
		{"by fw pooling two builds", []string{"--by", "fw", a1, b, otherBuild}, 2, nil,
			"set fw=1.0 pools different device builds: " + a1 + " and " + otherBuild + " differ in fw_ver sim-1.0 vs sim-1.0.1;", true},
		{"by fw", []string{"--by", "fw", a1, b, a2}, 1, []string{"fw=1.0: " + a1 + " " + a2 + " (10 repetitions", "sets grouped by label fw", "fw=2.0"}, "", false},
		{"by fw md", []string{"--by", "fw", a1, b, "--format", "md"}, 1, []string{"| op | metric | role | fw=1.0", "**"}, "significant regression", true},
		{"by a label one folder lacks", []string{"--by", "board", a1, a2}, 2, nil, "has no label board (it has: fw=1.0)", true},
		{"by a label all share", []string{"--by", "fw", a1, a2}, 2, nil, "one set: nothing to compare", true},
		{"plots", []string{lc, slow, "--plots", plots}, 1, []string{"regression"}, "", false},
	}
	runCompareCases(t, tests)
	for _, f := range []string{"compare-reg-p50.svg", "compare-reg-p50.png", "compare-unreg_last-p50.png"} {
		if st, err := os.Stat(filepath.Join(plots, f)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
}
