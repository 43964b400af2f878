package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/internal/analysis"
	"github.com/xrcbench/xrcbench/internal/qualify"
	"github.com/xrcbench/xrcbench/results"
)

// decodeOne decodes stdout as exactly one JSON document into v: nothing
// but white space may follow it.
func decodeOne(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s", err, stdout)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON document (%v): %s", err, extra)
	}
}

// --json on run and sweep: stdout is one JSON document whose figures are
// the run folders' own; progress, warnings and the points' lines stay on
// stderr.
func TestJSONRunSweep(t *testing.T) {
	engineBinary(t) // skips under -short
	dir := t.TempDir()
	threads := fmt.Sprint(runtime.NumCPU() + 1) // a warning, known before the start
	cpuWarning := fmt.Sprintf("warning: %s threads on %d CPUs", threads, runtime.NumCPU())

	t.Run("run", func(t *testing.T) {
		out := filepath.Join(dir, "run")
		code, stdout, stderr := runEngine(t, "run", "--json", "--progress", "always", "--workload", "lifecycle",
			"--threads", threads, "-n", "30", "--warmup", "0s", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		var doc runJSON
		decodeOne(t, stdout, &doc)
		res, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Schema != jsonSchema || doc.Command != "run" || doc.Status != results.StatusOK || doc.Folder != out || !doc.Written || doc.Error != "" {
			t.Errorf("document %+v: want schema %s, command run, status ok, folder %s, written", doc, jsonSchema, out)
		}
		if doc.RunID == "" || doc.RunID != res.RunID || doc.Config == nil || !reflect.DeepEqual(*doc.Config, res.Config) {
			t.Errorf("run_id %q, config %+v: want result.json's %q and its config", doc.RunID, doc.Config, res.RunID)
		}
		if len(doc.Ops) < 3 || !reflect.DeepEqual(doc.Ops, res.Ops) {
			t.Errorf("ops %v, want result.json's %v", doc.Ops, res.Ops)
		}
		if !reflect.DeepEqual(doc.Warnings, res.Warnings) || !reflect.DeepEqual(doc.Leaks, res.Leaks) {
			t.Errorf("warnings %q leaks %+v, want result.json's %q %+v", doc.Warnings, doc.Leaks, res.Warnings, res.Leaks)
		}
		for _, want := range []string{cpuWarning, "repetition 1/1"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stdout, "run folder:") || strings.Contains(stderr, "run folder:") {
			t.Errorf("the table was printed too:\n%s\n%s", stdout, stderr)
		}
	})

	t.Run("run failed", func(t *testing.T) {
		// null succeeds where the errors workload must fail: exit 1,
		// status partial, and the document still has the figures and
		// the error, which stderr says too.
		out := filepath.Join(dir, "failed")
		code, stdout, stderr := runEngine(t, "run", "--json", "--provider", "null", "--workload", "errors",
			"-n", "10", "--qps", "4", "--warmup", "0s", "--out", out)
		var doc runJSON
		decodeOne(t, stdout, &doc)
		res, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if code != exitFailed || doc.Status != results.StatusPartial || !doc.Written || !reflect.DeepEqual(doc.Ops, res.Ops) ||
			!strings.Contains(doc.Error, "unexpected_success") || !strings.Contains(stderr, "xrcbench: ") || !strings.Contains(stderr, "unexpected_success") {
			t.Errorf("exit %d, document %+v, stderr %q: want exit 1, status partial, written, result.json's ops, the error in both", code, doc, stderr)
		}
	})

	t.Run("failed before the start", func(t *testing.T) {
		// No RDMA here: the provider is not available (exit 1). A script
		// still gets its document, status failed, with the error.
		if _, err := os.Stat("/sys/class/infiniband_verbs"); err == nil {
			t.Skip("this machine has RDMA in its kernel")
		}
		for _, args := range [][]string{
			{"run", "--json", "--provider", "rdma", "-n", "5", "--out", filepath.Join(dir, "nordma")},
			{"sweep", "--json", "--provider", "rdma", "--threads", "1,2", "-n", "5", "--out", filepath.Join(dir, "nordma-sweep")},
		} {
			code, stdout, stderr := runEngine(t, args...)
			var doc struct {
				envelope
				Written bool                       `json:"written"`
				Ops     map[string]results.OpStats `json:"ops"`
				Points  []sweepPointJSON           `json:"points"`
			}
			decodeOne(t, stdout, &doc)
			if code != exitFailed || doc.Schema != jsonSchema || doc.Command != args[0] || doc.Status != results.StatusFailed ||
				!strings.Contains(doc.Error, "not available") || !strings.Contains(stderr, "not available") {
				t.Errorf("%v: exit %d, document %+v, stderr %q: want exit 1, status failed and the error in both", args, code, doc, stderr)
			}
		}
	})

	t.Run("bad usage", func(t *testing.T) {
		// Refused before running (exit 2): one line on stderr, no document.
		code, stdout, stderr := runEngine(t, "run", "--json", "--workload", "steady", "-n", "5", "--qps", "8", "--sim-max-qp", "2")
		if code != exitUsage || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q: want exit 2, nothing on stdout, one line", code, stdout, stderr)
		}
	})

	t.Run("sweep", func(t *testing.T) {
		out := filepath.Join(dir, "sweep")
		code, stdout, stderr := runEngine(t, "sweep", "--json", "--workload", "steady", "--procs", "1", "--threads", "1,"+threads,
			"-n", "20", "--warmup", "0s", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		var doc sweepJSON
		decodeOne(t, stdout, &doc)
		if doc.Schema != jsonSchema || doc.Command != "sweep" || doc.Status != results.StatusOK || doc.Folder != out || len(doc.Points) != 2 {
			t.Fatalf("document %+v: want command sweep, status ok, folder %s, 2 points", doc, out)
		}
		for _, p := range doc.Points {
			// A point's folder is named as the document's own is: a path.
			res, err := results.Load(p.Folder)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(p.Folder) != out || p.Status != res.Status || len(p.Ops) == 0 || !reflect.DeepEqual(p.Ops, res.Ops) {
				t.Errorf("point %s: status %s, ops %v; want a folder in %s, result.json's %s, %v", p.Folder, p.Status, p.Ops, out, res.Status, res.Ops)
			}
		}
		for _, want := range []string{"== point 1/2: 1 procs x 1 threads", "== point 2/2: 1 procs x " + threads + " threads", cpuWarning} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
}

// qualify --json: the verdicts on stdout, the steps on stderr.
func TestJSONQualify(t *testing.T) {
	judgesNoTime(t)
	out := filepath.Join(t.TempDir(), "q")
	code, stdout, stderr := runEngine(t, "qualify", "--json", "--plan", writePlan(t, tinyPlan), "--out", out, "--sim-cost", "destroy=20us")
	var doc qualifyJSON
	decodeOne(t, stdout, &doc)
	q, err := qualify.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	wantCode := map[bool]int{true: 0, false: 1}[q.Verdict == qualify.Pass]
	if code != wantCode || doc.Schema != jsonSchema || doc.Command != "qualify" || doc.Status != q.Verdict || doc.Summary != q.Summary || doc.Headline != q.Headline || doc.Folder != out {
		t.Errorf("exit %d, document %+v; want exit %d, qualification.json's verdict %s and summary %q", code, doc, wantCode, q.Verdict, q.Summary)
	}
	if len(doc.Criteria) != 2 || len(doc.Conformance) == 0 || !reflect.DeepEqual(doc.Criteria, q.Criteria) || !reflect.DeepEqual(doc.Conformance, q.Conformance) {
		t.Errorf("criteria %+v, conformance %d rows; want qualification.json's", doc.Criteria, len(doc.Conformance))
	}
	if !strings.Contains(stderr, "qualify: conformance on sim") || !strings.Contains(stderr, "qualify: run lc: xrcbench run ") ||
		strings.Contains(stdout, "qualification folder:") {
		t.Errorf("the steps belong on stderr, the folder line nowhere:\nstdout %s\nstderr %s", stdout, stderr)
	}
}

// history --json: history.json on stdout, warnings on stderr, status
// regressed with exit 1 after a regression.
func TestJSONHistory(t *testing.T) {
	tests := []struct {
		name   string
		level  func(int) float64
		status string
		code   int
	}{
		{"flat", func(int) float64 { return 1 }, "ok", 0},
		{"slower from run 7", func(i int) float64 { return map[bool]float64{true: 1.2, false: 1}[i >= 6] }, "regressed", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := historyRuns(t, 12, tt.level)
			var stdout, stderr bytes.Buffer
			code := run(&stdout, &stderr, []string{"history", "--json", runs})
			var doc historyJSON
			decodeOne(t, stdout.String(), &doc)
			written, err := os.ReadFile(filepath.Join(runs, analysis.HistoryJSONFile))
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(doc.History, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(written, &want); err != nil {
				t.Fatal(err)
			}
			if code != tt.code || doc.Schema != jsonSchema || doc.Command != "history" || doc.Status != tt.status || doc.Folder != runs || !reflect.DeepEqual(got, want) {
				t.Errorf("exit %d, document {%s %s %s}; want exit %d, status %s, folder %s, history.json's content", code, doc.Command, doc.Status, doc.Folder, tt.code, tt.status, runs)
			}
			if tt.code != 0 && !strings.Contains(stderr.String(), "latest run sits after a regression") {
				t.Errorf("stderr lacks the regression: %s", stderr.String())
			}
		})
	}
}

// TestHistoryTooFewSaid: a history too short to look for a change point
// exits 0, as one without a regression does, so stderr says which metric
// was not looked at and how many runs a step needs (8 runs with a +25%
// step from run 5 once said nothing of it).
func TestHistoryTooFewSaid(t *testing.T) {
	runs := historyRuns(t, 8, func(i int) float64 { return map[bool]float64{true: 1.25, false: 1}[i >= 4] })
	var stdout, stderr bytes.Buffer
	code := run(&stdout, &stderr, []string{"history", runs})
	if code != 0 || !strings.Contains(stderr.String(), "warning: reg p50: no change point looked for: 8 runs: a step needs at least") {
		t.Errorf("exit %d, stderr %q: want exit 0 and a warning naming reg p50 and the runs a step needs", code, stderr.String())
	}
}
