package report

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/results/resultstest"
)

func testStorm() *results.Storm {
	return &results.Storm{Nodes: 9, Ranks: 2, Rails: 1, QPs: 16, Registrations: 16, Arrival: "burst", Teardown: "unreg",
		TeardownMethod: "ranks_unreg",
		MakespanNS:     []int64{900_000, 1_200_000, -1},
		RankDoneNS:     [][]int64{{880_000, 900_000}, {1_200_000, 950_000}, {890_000, -1}},
		RankRunQueueNS: [][]int64{{0, 0}, {100_000, 0}, {0, 0}},
		RankBusyNS:     [][]int64{{870_000, 850_000}, {900_000, 940_000}, {880_000, 10_000}},
		CriticalPathNS: []int64{880_000, 950_000, 890_000},
		TeardownNS:     []int64{20_000, 30_000, 25_000}}
}

func TestStormText(t *testing.T) {
	st := testStorm()
	if got := spread(st.MakespanNS); !strings.HasPrefix(got, "1.05ms") {
		t.Errorf("spread %q: want the median of the finished repetitions, 1.05ms", got)
	}
	if got := spread(st.MakespanNS); !strings.Contains(got, "median of 2 repetitions, 900µs to 1.2ms") || !strings.Contains(got, "1 not finished") {
		t.Errorf("spread %q", got)
	}
	if got := spread([]int64{-1}); got != "not reached" {
		t.Errorf("spread of nothing finished: %q", got)
	}
	line := StormLine(st)
	for _, want := range []string{"9 nodes x 2 ranks x 1 rail(s), 16 QPs, 16 registrations", "makespan 1.05ms", "teardown (unreg) 25µs"} {
		if !strings.Contains(line, want) {
			t.Errorf("StormLine %q lacks %q", line, want)
		}
	}
	var b bytes.Buffer
	writeStormMarkdown(&b, st)
	for _, want := range []string{
		// makespan, critical path, over it, the ranks' run queue, over it
		// and the run queue, busiest rank's own work, first, median, teardown
		"| 1 | 900µs | 880µs | +2.3% | 0ns | +2.3% | 870µs | 880µs | 890µs | 20µs |",
		"| 2 | 1.2ms | 950µs | +26.3% | 100µs | +15.8% | 940µs | 950µs | 1.07ms | 30µs |",
		"| 3 | not reached | 890µs | – | 0ns | – | 880µs | 890µs | 890µs | 25µs |",
		// per rank, the median over the repetitions it finished: done,
		// own, waiting (done - own - run queue), run queue
		"| 0 | 890µs | 880µs | 10µs | 0ns |",
		"| 1 | 925µs | 895µs | 30µs | 0ns |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	// A result from before rank_busy_ns and critical_path_ns has no own
	// work and no critical path to show, and no parts per rank.
	st.RankBusyNS, st.CriticalPathNS = nil, nil
	b.Reset()
	writeStormMarkdown(&b, st)
	if want := "| 1 | 900µs | – | – | 0ns | – | – | 880µs | 890µs | 20µs |"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown without own work lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "three parts") {
		t.Errorf("parts per rank without own work:\n%s", b.String())
	}
}

// TestStormLineIsTheGatesMedian holds the storm's line to the figure its
// gates and compare use (RepetitionStats): one median, for odd and even
// counts of finished repetitions.
func TestStormLineIsTheGatesMedian(t *testing.T) {
	for _, ms := range [][]int64{
		{2_000_000, 3_000_000, 2_000_000, 3_000_000}, // the audit's: 2ms said, the gate's 2.5ms
		{900_000, 1_200_000, -1},
		{1_000_000, 4_000_000, 2_000_000},
		{7_000_000},
	} {
		st := &results.Storm{Nodes: 3, Ranks: 2, Rails: 1, MakespanNS: ms}
		r := &results.Result{Storm: st}
		m, _ := GateMetric(Gate{Kind: results.StormKind, Metric: "makespan"})
		want := "makespan " + fmtDur(int64(RepetitionStats(r, results.StormKind, m).Median))
		if got := StormLine(st); !strings.Contains(got, want) {
			t.Errorf("makespans %v: StormLine %q, want %q", ms, got, want)
		}
	}
}

// The run-queue note appears only when a rank's wait is a visible share of
// its completion time.
func TestStormRunQueueNote(t *testing.T) {
	st := testStorm()
	notes := strings.Join(stormNotes(st), "\n")
	if !strings.Contains(notes, "A rank waited 100µs on a run queue") || !strings.Contains(notes, "8%") {
		t.Errorf("notes %q: want the 100µs of 1.2ms", notes)
	}
	if !strings.Contains(notes, "Teardown (unreg): 25µs") {
		t.Errorf("notes %q: want the teardown", notes)
	}
	st.RankRunQueueNS[1][0] = 1000
	if notes := strings.Join(stormNotes(st), "\n"); strings.Contains(notes, "on a run queue (runnable") {
		t.Errorf("notes %q: a wait of 0.1%% is no note", notes)
	}
	st.TeardownNS, st.TeardownNote = nil, "not measurable here: the rdma provider cannot count the device's live QPs"
	if notes := strings.Join(stormNotes(st), "\n"); !strings.Contains(notes, "not measurable here") {
		t.Errorf("notes %q: want why the teardown is missing", notes)
	}
}

func TestStormFigures(t *testing.T) {
	figs, err := stormFigures(testStorm(), "x-", Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 || figs[0].Name != "x-storm-wired-cdf" || figs[1].Name != "x-storm-makespan" || figs[2].Name != "x-storm-rank-parts" {
		t.Fatalf("figures %v", figs)
	}
	for _, f := range figs {
		if len(f.PNG) == 0 || !bytes.Contains(f.SVG, []byte("<svg")) {
			t.Errorf("%s: empty", f.Name)
		}
	}
	for _, want := range []string{"own operations", "waiting for a peer (and the harness)", "run queue"} {
		if !bytes.Contains(figs[2].SVG, []byte(want)) {
			t.Errorf("parts figure lacks %q in its legend", want)
		}
	}
	// A result from before rank_busy_ns has no parts to draw.
	st := testStorm()
	st.RankBusyNS = nil
	if figs, err := stormFigures(st, "x-", Stamp{}); err != nil || len(figs) != 2 {
		t.Errorf("without own work: %d figures, %v; want the two", len(figs), err)
	}
}

// The critical path's notes: the makespan's excess over it, and the
// harness named for a repetition past it plus the ranks' run queue by
// more than 10%: repetition 2's 1.2ms is 250µs over its 950µs, 150µs
// (15.8%) beyond its 100µs of run queue; repetition 1's 900µs is 20µs
// (2.3%) over its 880µs.
func TestStormCriticalNotes(t *testing.T) {
	st := testStorm()
	notes := strings.Join(stormNotes(st), "\n")
	for _, want := range []string{"exceeded it by +14.3% (median of 2 repetitions; +2.3% to +26.3%)",
		"In repetition 2 the makespan exceeded the critical path plus the ranks' run-queue time by more than 10% (at most by 150µs, 16% of the critical path)",
		"the harness's share"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "elected creators") {
		t.Errorf("round-robin notes speak of elections:\n%s", notes)
	}
	creators := st.Creators
	st.Creators = "elect"
	if notes := strings.Join(stormNotes(st), "\n"); !strings.Contains(notes, "With elected creators the replay also takes its own order") {
		t.Errorf("elected storm's notes do not say the replay may order numbers otherwise:\n%s", notes)
	}
	st.Creators = creators
	// 100µs more run queue on rank 1 explains repetition 2: no harness.
	st.RankRunQueueNS[1][1] = 100_000
	if notes := strings.Join(stormNotes(st), "\n"); strings.Contains(notes, "harness") || !strings.Contains(notes, "Critical path") {
		t.Errorf("notes with the run queue explaining the excess:\n%s", notes)
	}
	// More run queue than excess: the table says the run queue accounts
	// for it all.
	st.RankRunQueueNS[1][1] = 300_000
	var b bytes.Buffer
	writeStormMarkdown(&b, st)
	if want := "| 2 | 1.2ms | 950µs | +26.3% | 400µs | within |"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, b.String())
	}
	// Results from before critical_path_ns: no note.
	st.CriticalPathNS = nil
	if notes := strings.Join(stormNotes(st), "\n"); strings.Contains(notes, "Critical path") {
		t.Errorf("notes without critical paths:\n%s", notes)
	}
}

// A storm sweep over nodes gets makespan against nodes with the linear
// reference; a sweep of one node count has nothing to draw.
func TestStormSweepFigure(t *testing.T) {
	run := func(nodes int, ms int64) *Run {
		st := testStorm()
		st.Nodes, st.MakespanNS, st.RankDoneNS = nodes, []int64{ms}, [][]int64{{ms, ms / 2}}
		return &Run{Result: &results.Result{Storm: st}}
	}
	sr := &sweepReport{Workload: "storm", Runs: []*Run{run(3, 1e6), run(5, 2e6), run(9, 5e6)}}
	f, ok, err := stormSweepFigure(sr)
	if err != nil || !ok || f.Name != "sweep-storm-makespan" || len(f.PNG) == 0 {
		t.Fatalf("figure %v, %v, %v", f.Name, ok, err)
	}
	if !bytes.Contains(f.SVG, []byte("linear from the first point")) {
		t.Error("no linear-scaling line in the legend")
	}
	sr.Runs = sr.Runs[:1]
	if _, ok, err := stormSweepFigure(sr); ok || err != nil {
		t.Errorf("one node count: drawn %v, %v", ok, err)
	}
}

// A teardown exit says how it was watched: the sim device, or the
// kernel's RDMA netlink.
func TestStormTeardownMethod(t *testing.T) {
	for _, tt := range []struct{ method, want string }{
		{"ranks_unreg", "the slowest rank's unregistrations"},
		{"sim_inspect", "until the device showed none of the job's QPs"},
		{"netlink", "until the kernel's RDMA netlink listed none of the job's QPs"},
	} {
		st := testStorm()
		st.TeardownMethod = tt.method
		if notes := strings.Join(stormNotes(st), "\n"); !strings.Contains(notes, tt.want) {
			t.Errorf("%s: notes %q lack %q", tt.method, notes, tt.want)
		}
	}
}

// summary.md and report.html both carry the storm's tables: each
// repetition's critical path and excess, and each rank's three parts.
func TestStormTablesInReports(t *testing.T) {
	dir := t.TempDir()
	r := resultstest.Storm(3, 1e6, 0.02, 1, nil)
	st := r.Storm
	for _, mk := range st.MakespanNS {
		st.CriticalPathNS = append(st.CriticalPathNS, mk*100/105) // the makespan +5% over it
		st.RankBusyNS = append(st.RankBusyNS, []int64{mk / 2, mk / 2, mk / 2, mk / 2})
		st.RankRunQueueNS = append(st.RankRunQueueNS, []int64{0, 0, 0, 0})
	}
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Generate([]string{dir}, out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{HTMLFile, "summary.md"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		text := html.UnescapeString(string(b)) // html/template writes + as &#43;
		for _, want := range []string{"critical path", "+5.0%", "waiting for a peer (and the harness)", "own operations"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}
