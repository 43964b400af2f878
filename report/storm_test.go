package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xrcbench/xrcbench/results"
)

func testStorm() *results.Storm {
	return &results.Storm{Nodes: 9, Ranks: 2, Rails: 1, QPs: 16, Registrations: 16, Arrival: "burst", Teardown: "unreg",
		TeardownMethod: "ranks_unreg",
		MakespanNS:     []int64{900_000, 1_200_000, -1},
		RankDoneNS:     [][]int64{{880_000, 900_000}, {1_200_000, 950_000}, {890_000, -1}},
		RankRunQueueNS: [][]int64{{0, 0}, {100_000, 0}, {0, 0}},
		RankBusyNS:     [][]int64{{870_000, 850_000}, {900_000, 940_000}, {880_000, 10_000}},
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
	for _, want := range []string{"| 1 | 900µs | 870µs | 880µs | 890µs | 20µs |", "| 2 | 1.2ms | 940µs | 950µs | 1.07ms | 30µs |", "| 3 | not reached | 880µs | 890µs | 890µs | 25µs |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	// A result from before rank_busy_ns has no own work to show.
	st.RankBusyNS = nil
	b.Reset()
	writeStormMarkdown(&b, st)
	if want := "| 1 | 900µs | – | 880µs | 890µs | 20µs |"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown without own work lacks %q:\n%s", want, b.String())
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
	if notes := strings.Join(stormNotes(st), "\n"); strings.Contains(notes, "run queue") {
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
	if len(figs) != 2 || figs[0].Name != "x-storm-wired-cdf" || figs[1].Name != "x-storm-makespan" {
		t.Fatalf("figures %v", figs)
	}
	for _, f := range figs {
		if len(f.PNG) == 0 || !bytes.Contains(f.SVG, []byte("<svg")) {
			t.Errorf("%s: empty", f.Name)
		}
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
