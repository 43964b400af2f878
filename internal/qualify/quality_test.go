package qualify

import (
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/report"
	"github.com/xrcbench/xrcbench/results"
)

// TestDisturbed holds the gate's known answers: one repetition of a run
// on 2 CPUs of 1 s plus 0.5 s warm-up, 2 threads (3 CPU-seconds usable),
// measured by time (1 s asked), its workers' CPU time and measured length
// and warnings set case by case.
func TestDisturbed(t *testing.T) {
	starved := results.NewWarning(results.WarnCPUStarved, results.SeverityWarning, 1, "", "workers got 0.4 CPU-seconds of the 3.0")
	gap := results.NewWarning(results.WarnUntimedGap, results.SeverityWarning, 1, "reg", "an untimed stretch of 3ms")
	tests := []struct {
		name     string
		workload string
		cpu      []float64 // per worker
		wall     time.Duration
		warnings []results.Warning
		quality  Quality
		want     []string // each reason's start, in order
	}{
		{"undisturbed", "steady", []float64{1.4, 1.4}, time.Second, nil, DefaultQuality(), nil},
		{"starved: 1.2 of 3 CPU-seconds", "steady", []float64{0.6, 0.6}, time.Second, nil, DefaultQuality(),
			[]string{"s repetition 1: the workers got 40% of the CPU time their threads could use (1.2 of 3.0 CPU-seconds; min_cpu_share 50%)"}},
		{"starved, and warned so: said once", "steady", []float64{0.6, 0.6}, time.Second, []results.Warning{starved}, DefaultQuality(),
			[]string{"s repetition 1: the workers got 40%"}},
		{"at 60% only the engine's warning", "steady", []float64{0.9, 0.9}, time.Second, []results.Warning{starved}, DefaultQuality(),
			[]string{"s: cpu_starved: repetition 1: workers got 0.4 CPU-seconds"}},
		{"min_cpu_share 0% and no warnings: off", "steady", []float64{0.1, 0.1}, time.Second, []results.Warning{starved},
			Quality{MaxDurationDeparture: 25}, nil},
		{"a rounds workload waits at barriers: no share", "lifecycle", []float64{0.1, 0.1}, time.Second, nil, DefaultQuality(), nil},
		{"2.43 s of 1 s", "steady", []float64{2, 2}, 2430 * time.Millisecond, nil, DefaultQuality(),
			[]string{"s repetition 1: measured 2.43s of the asked 1s (+143%; max_duration_departure 25%)"}},
		{"1.2 s of 1 s is within 25%", "steady", []float64{1.6, 1.6}, 1200 * time.Millisecond, nil, DefaultQuality(), nil},
		{"0.7 s of 1 s", "steady", []float64{1.2, 1.2}, 700 * time.Millisecond, nil, DefaultQuality(),
			[]string{"s repetition 1: measured 700ms of the asked 1s (-30%"}},
		{"a kind not listed", "steady", []float64{1.4, 1.4}, time.Second, []results.Warning{gap}, DefaultQuality(), nil},
		{"a kind listed", "steady", []float64{1.4, 1.4}, time.Second, []results.Warning{gap},
			Quality{MinCPUShare: 50, MaxDurationDeparture: 25, Warnings: []string{results.WarnUntimedGap}},
			[]string{"s: untimed_gap: repetition 1: reg: an untimed stretch of 3ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Result{Warnings: tt.warnings}
			r.Config.Procs, r.Config.Threads = 1, 2
			r.Config.Duration, r.Config.Warmup = results.Duration(time.Second), results.Duration(500*time.Millisecond)
			r.Environment.CPUs = 2
			r.Repetitions = []results.Repetition{{Index: 0, Duration: results.Duration(tt.wall)}}
			for i, c := range tt.cpu {
				r.Workers = append(r.Workers, results.Worker{Index: i, Repetition: 0, CPUSeconds: c})
			}
			got := disturbed(tt.quality, []RunStep{{Name: "s", Workload: tt.workload}}, map[string]*report.Run{"s": {Result: r}})
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.HasPrefix(got[i], tt.want[i])
			}
			if !ok {
				t.Errorf("reasons %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPlanQuality: a plan's quality: overlays the defaults key by key,
// and its values are checked.
func TestPlanQuality(t *testing.T) {
	const head = "name: q\nrepetitions: 1\niterations: 5\nruns:\n  - {name: s, workload: steady, procs: 1, threads: 1, qps: 1}\n"
	tests := []struct {
		text    string
		want    Quality
		wantErr string
	}{
		{"", DefaultQuality(), ""},
		{"quality: {min_cpu_share: 80%}\n", Quality{MinCPUShare: 80, MaxDurationDeparture: 25, Warnings: []string{results.WarnCPUStarved}}, ""},
		{"quality: {warnings: [], max_duration_departure: 0%}\n", Quality{MinCPUShare: 50, Warnings: []string{}}, ""},
		{"quality: {min_cpu_share: 150%}\n", Quality{}, "plan:6: quality min_cpu_share 150%: want 0% (off) to 100%"},
		{"quality: {warnings: [cpu_stravred]}\n", Quality{}, `plan:6: quality warnings: unknown warning kind "cpu_stravred"`},
		{"quality: {min_cpu_share: 50}\n", Quality{}, `want a percentage`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			p, err := ParsePlan([]byte(head+tt.text), "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := p.Quality
			if q.MinCPUShare != tt.want.MinCPUShare || q.MaxDurationDeparture != tt.want.MaxDurationDeparture || strings.Join(q.Warnings, ",") != strings.Join(tt.want.Warnings, ",") {
				t.Errorf("quality %+v, want %+v", q, tt.want)
			}
		})
	}
}

// TestByKind: the page's warnings come grouped by kind, in the order each
// kind first came, counted, with the runs that gave them.
func TestByKind(t *testing.T) {
	ws := []RunWarning{
		{Runs: []string{"churn"}, Kind: results.WarnDuration, Text: "repetition 1: measured 4.87s"},
		{Runs: []string{"steady-cpus", "sharded-cpus"}, Kind: results.WarnCPUStarved, Text: "repetition 2: workers got 0.4"},
		{Runs: []string{"errors"}, Kind: results.WarnDuration, Text: "repetition 3: measured 2.3s"},
		{Runs: []string{"churn"}, Kind: results.WarnDuration, Text: "repetition 4: measured 2.2s"},
		{Runs: []string{"old"}, Text: "a plain string"},
	}
	got := byKind(ws)
	want := []struct {
		kind  string
		count int
		runs  string
	}{{results.WarnDuration, 3, "churn errors"}, {results.WarnCPUStarved, 1, "steady-cpus sharded-cpus"}, {results.WarnUnclassified, 1, "old"}}
	if len(got) != len(want) {
		t.Fatalf("%d groups %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if g := got[i]; g.Kind != w.kind || g.Count != w.count || len(g.Warnings) != w.count || strings.Join(g.Runs, " ") != w.runs {
			t.Errorf("group %d: %s ×%d from %v, want %s ×%d from %s", i, g.Kind, g.Count, g.Runs, w.kind, w.count, w.runs)
		}
	}
}

// TestFmtValue: the criteria table's figures in their units, durations to
// three significant figures.
func TestFmtValue(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		v    *float64
		unit string
		want string
	}{
		{nil, "ns", ""},
		{f(2123775), "ns", "2.12ms"},
		{f(80), "ns", "80ns"},
		{f(1234), "ns", "1.23µs"},
		{f(14.29), "%", "+14.3%"},
		{f(-3), "%", "-3.0%"},
		{f(150000.4), "ops/s", "150000 ops/s"},
	}
	for _, tt := range tests {
		if got := fmtValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("fmtValue(%v, %s) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
	if got := fmtLimit(f(5), "%"); got != "≤ 5% worse" {
		t.Errorf("fmtLimit(5%%) = %q", got)
	}
}
