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
	shortened := strings.Replace(strings.Replace(string(DefaultPlan()), "duration: 10s", "duration: 2s", 1),
		"repetitions: 5 ", "repetitions: 3 ", 1)
	tests := []struct {
		name, file, text string
		soak             time.Duration
		origin           string
		reps             int
		length, soakLen  string
	}{
		{"embedded", "", string(DefaultPlan()), 0, "default (the embedded default plan)", 5, "10s per repetition", "none"},
		{"default's text in a file", "p.yaml", string(DefaultPlan()), 0, "default from p.yaml (the embedded default plan's text)", 5, "10s per repetition", "none"},
		{"shortened, same name", "short.yaml", shortened, time.Minute, "default from short.yaml, changed from the embedded default of that name", 3, "2s per repetition", "1m0s"},
		{"a plan of its own", "tiny.yaml", "name: tiny\nrepetitions: 2\niterations: 20\nwarmup: 0s\nconformance: none\nruns:\n  - {name: lc, workload: lifecycle, procs: 1, threads: 2, qps: 4}\ncriteria: []\n",
			0, "tiny from tiny.yaml", 2, "20 iterations", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlan([]byte(tt.text), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			pr := planAsRun(Options{Provider: "sim", Plan: p, Out: t.TempDir(), Soak: tt.soak})
			r := pr.Runs[0]
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
	if err := pageTmpl.Execute(&b, q); err != nil {
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
	if err := pageTmpl.Execute(&b, q); err != nil || !strings.Contains(b.String(), "<p>Not recorded:") {
		t.Errorf("without a bill of materials: %v\n%s", err, b.String())
	}
}
