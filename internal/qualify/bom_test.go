package qualify

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// TestPlanAsRun: the plan is named as run, with its real lengths and
// repetitions: a file that keeps the default's name but shortens it does
// not read as the default.
func TestPlanAsRun(t *testing.T) {
	d200, d0 := results.Duration(200*time.Millisecond), results.Duration(0)
	shortened := strings.Replace(strings.Replace(string(DefaultPlan()), "duration: 10s", "duration: 2s", 1),
		"repetitions: 5 ", "repetitions: 3 ", 1)
	tests := []struct {
		name, file, text string
		soak             time.Duration
		over             Overrides
		origin, warmup   string
		reps             int
		length, soakLen  string
	}{
		{"embedded", "", string(DefaultPlan()), 0, Overrides{}, "default (the embedded default plan)", "1s", 5, "10s per repetition", "none"},
		{"default's text in a file", "p.yaml", string(DefaultPlan()), 0, Overrides{}, "default from p.yaml (the embedded default plan's text)", "1s", 5, "10s per repetition", "none"},
		{"shortened, same name", "short.yaml", shortened, time.Minute, Overrides{}, "default from short.yaml, changed from the embedded default of that name", "1s", 3, "2s per repetition", "1m0s"},
		{"a plan of its own", "tiny.yaml", "name: tiny\nrepetitions: 2\niterations: 20\nwarmup: 0s\nconformance: none\nruns:\n  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4}\ncriteria: []\n",
			0, Overrides{}, "tiny from tiny.yaml", "0s", 2, "20 iterations", "none"},
		// The command line's figures replace the plan's, and say so
		// (the page read "warm-up 1s" after --warmup 0s).
		{"overridden", "", string(DefaultPlan()), 0, Overrides{Duration: &d200, Repetitions: 2, Warmup: &d0},
			"default (the embedded default plan), with --duration 200ms, --repetitions 2, --warmup 0s replacing the plan's", "0s", 2, "200ms per repetition", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlan([]byte(tt.text), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			pr := planAsRun(Options{Provider: "sim", Plan: p, Out: t.TempDir(), Soak: tt.soak, Overrides: tt.over})
			r := pr.Runs[0]
			if pr.Warmup != tt.warmup {
				t.Errorf("warm-up %s, want %s", pr.Warmup, tt.warmup)
			}
			if pr.Origin != tt.origin || pr.Soak != tt.soakLen || r.Repetitions != tt.reps || r.Length != tt.length || r.Procs < 1 || r.Threads < 1 {
				t.Errorf("got origin %q soak %s, run %+v; want %q %s, %d repetitions of %s", pr.Origin, pr.Soak, r, tt.origin, tt.soakLen, tt.reps, tt.length)
			}
		})
	}
}

// TestPageBOM: qualification.html shows the bill of materials and the
// plan as run.
func TestPageBOM(t *testing.T) {
	q := &Qualification{Verdict: Pass, Plan: "default",
		BOM: &results.BOM{XrcbenchVersion: "abc", Device: results.DeviceBOM{BoardID: "MT_0000000222", LinkSpeed: results.Unreadable("permission")}},
		PlanAsRun: &PlanAsRun{Origin: "default from short.yaml, changed from the embedded default of that name", Warmup: "1s", Soak: "none",
			Runs: []PlanRunRun{{Name: "steady-1", Workload: "steady", Procs: 1, Threads: 1, QPs: 16, Repetitions: 3, Length: "2s per repetition"}}}}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, pageData{Qualification: q}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Bill of materials</h2>", "<tr><th>board_id (PSID)</th><td>MT_0000000222</td></tr>",
		"<tr><th>PCIe link speed</th><td>unreadable: permission</td></tr>",
		"<tr><th>plan</th><td>default from short.yaml, changed from the embedded default of that name</td></tr>",
		"<tr><td>steady-1</td><td>steady</td><td>1 × 1</td><td>16</td><td>3</td><td>2s per repetition</td></tr>"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	q.BOM = nil
	b.Reset()
	if err := pageTmpl.Execute(&b, pageData{Qualification: q}); err != nil || !strings.Contains(b.String(), "<p>Not recorded:") {
		t.Errorf("without a bill of materials: %v\n%s", err, b.String())
	}
}
