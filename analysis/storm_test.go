package analysis

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// stormResult is a storm's result (report's tests' stormRun) with reps repetitions of makespan about
// makespanNS (noise: the repetitions' spread) and a teardown of a tenth
// of it; gates nil is a result that predates declared gates.
func stormResult(reps int, makespanNS, noise float64, seed uint64, gates []string) *results.Result {
	rng := rand.New(rand.NewPCG(seed, 7))
	r := &results.Result{
		Schema: results.Schema, Status: results.StatusOK,
		Config: results.Config{Workload: "storm", Provider: "sim", Procs: 1, Threads: 4, QPs: 32, WorkloadSpec: "name: storm\nmode: storm\n",
			Gates: gates},
		Ops:   map[string]results.OpStats{},
		Storm: &results.Storm{Nodes: 9, Ranks: 4, Rails: 1, QPs: 32, Registrations: 96, Arrival: "burst", Teardown: "unreg", TeardownMethod: "ranks_unreg"},
	}
	for i := range reps {
		mk := makespanNS * (1 + noise*rng.NormFloat64())
		r.Storm.MakespanNS = append(r.Storm.MakespanNS, int64(mk))
		r.Storm.RankDoneNS = append(r.Storm.RankDoneNS, []int64{int64(mk), int64(mk * 0.9), int64(mk * 0.8), int64(mk * 0.95)})
		r.Storm.TeardownNS = append(r.Storm.TeardownNS, int64(mk/10))
		// The operations are the same in every run: only the wiring's
		// length moves.
		rep := results.Repetition{Index: i, Ops: map[string]results.OpStats{
			results.OpReg: {Count: 96, OpsPerSec: 1e5, NS: results.Latency{Min: 1000, P50: 2000, P90: 4000, P99: 6000, P999: 7000, Max: 8000, Mean: 2500}}}}
		r.Repetitions = append(r.Repetitions, rep)
		r.Ops[results.OpReg] = rep.Ops[results.OpReg]
	}
	return r
}

// History follows a storm's makespan and finds the step in it.
func TestHistoryStormMakespan(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 24 {
		level := 1e6
		if i >= 14 {
			level = 1.1e6
		}
		r := stormResult(5, level, 0.01, uint64(10+i), []string{"storm.makespan", "storm.teardown"})
		r.Started = t0.Add(time.Duration(i) * time.Hour)
		r.Finished = r.Started.Add(time.Minute)
		dir := filepath.Join(root, fmt.Sprintf("run-%02d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	h, err := BuildHistory([]string{root}, HistoryOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(h.Series, func(s Series) bool { return s.Kind == results.StormKind && s.Metric == "makespan" })
	if i < 0 {
		t.Fatalf("series %+v: no storm.makespan", h.Series)
	}
	s := h.Series[i]
	if len(s.Points) != 24 || len(s.ChangePoints) != 1 || !s.ChangePoints[0].Regression || s.ChangePoints[0].Index < 13 || s.ChangePoints[0].Index > 15 {
		t.Errorf("makespan series: %d points, change points %+v; want one regression at run 14±1", len(s.Points), s.ChangePoints)
	}
	if !h.Regressed() {
		t.Error("Regressed() false after a +10% makespan step")
	}
}
