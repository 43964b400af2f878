package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// The critical path's known answer (issue 42, item 4): a 9-node storm of
// 2 ranks with create=120us and reg=15us, 16 QPs each created once and
// registered once (round-robin: each rank creates 8 and registers 8;
// elected: as the race falls). Every repetition's makespan is within +10% of the
// critical path result.json records for it (the plan replayed with the
// repetition's measured costs) plus the ranks' run-queue time, both
// measured by this run: a rank waiting for a CPU delays itself and, through
// the numbers it sends back, the others, so the bound adds every rank's
// run-queue time. On a busy machine that term widens the bound, as it
// should; what is left beyond it is the harness's (the report names it). The critical path is
// at least the busiest rank's own work and half the cost model's work.
func TestStormCriticalPathKnownAnswer(t *testing.T) {
	for _, tc := range []struct{ name, block string }{
		{"round-robin", "  nodes: 9\n  arrival: burst\n  teardown: exit\n"},
		// GASNet's: both ranks elect on every slot; the replay takes
		// the run's winners.
		{"elect", "  nodes: 9\n  arrival: burst\n  teardown: exit\n  creators: elect\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { stormCriticalPathKnown(t, tc.block) })
	}
}

func stormCriticalPathKnown(t *testing.T, block string) {
	cfg := stormConfig(t, block, 2, "create=120us,reg=15us")
	cfg.Repetitions = 5
	var res *results.Result
	load := testenv.MeasureLoad(t, func() { res = runOK(t, cfg) })
	st := res.Storm
	if st == nil || len(st.CriticalPathNS) != 5 || len(st.MakespanNS) != 5 || len(st.RankBusyNS) != 5 || len(st.RankRunQueueNS) != 5 {
		t.Fatalf("storm %+v: want 5 repetitions' makespans, critical paths, own work and run-queue times", st)
	}
	// The cost model's share of the work: 16 creates and 16 registrations
	// between the two ranks, however the elections fell.
	const work = (16*120*time.Microsecond + 16*15*time.Microsecond) / 2
	var missed []string
	for i, mk := range st.MakespanNS {
		cp := time.Duration(st.CriticalPathNS[i])
		var runq, own time.Duration
		for r, q := range st.RankRunQueueNS[i] {
			if q < 0 {
				testenv.Skip(t, testenv.Kernel, "this kernel does not report run-queue waits (/proc/thread-self/schedstat)")
			}
			runq += time.Duration(q)
			own = max(own, time.Duration(st.RankBusyNS[i][r]))
		}
		t.Logf("repetition %d: makespan %v, critical path %v, ranks' run queue %v, busiest rank's own work %v (ranks done %v, own %v, run queue %v)",
			i+1, time.Duration(mk), cp, runq, own, st.RankDoneNS[i], st.RankBusyNS[i], st.RankRunQueueNS[i])
		// The replay gives each rank its measured mean cost per kind, so
		// its own work comes back to within the rounding of a mean.
		if cp < work || cp < own-time.Microsecond {
			t.Errorf("repetition %d: critical path %v, below half the cost model's work %v or the busiest rank's own work %v", i+1, cp, work, own)
		}
		if bound := cp*110/100 + runq; time.Duration(mk) > bound {
			missed = append(missed, fmt.Sprintf("repetition %d: makespan %v, more than +10%% over its critical path %v plus the ranks' run-queue time %v", i+1, time.Duration(mk), cp, runq))
		}
	}
	// A machine busy with other work also takes time the run queue does
	// not show (interrupts and their softirqs on a rank's CPU, charged to
	// it as running; under a load of 10 on 2 CPUs one storm of five took
	// 243 ms with 165 ms of run-queue time): on such a machine a miss is
	// named, not judged.
	testenv.FailOrSkip(t, load, missed)
}

// stormCriticalPath's costs: each rank's own mean per kind (timed_ns over
// count, unreg_last with unreg), the mean over all ranks for a kind a
// rank never ran, -1 for a rank that did not report or a plan past
// maxReplaySteps.
func TestStormCriticalPathCosts(t *testing.T) {
	create := func(c int) workloads.Step { return workloads.Step{Act: workloads.ActCreate, Conn: c} }
	reg := func(c int) workloads.Step { return workloads.Step{Act: workloads.ActReg, Conn: c} }
	elect := func(c int) workloads.Step { return workloads.Step{Act: workloads.ActElect, Conn: c} }
	kinds := func(kv ...any) map[string]kindResult {
		m := map[string]kindResult{}
		for i := 0; i < len(kv); i += 3 {
			m[kv[i].(string)] = kindResult{Count: int64(kv[i+1].(int)), TimedNS: int64(kv[i+2].(int))}
		}
		return m
	}
	// Rank 0 creates c0 and c1 at its mean 150 (100 and 200 measured):
	// 0..150, 150..300; rank 1 creates c2 in 0..50, registers c0 at 150..160
	// (its mean 10), c1 at 300..310. Rank 0 registers c2 at 300..320.
	plan := &workloads.StormPlan{QPs: 3, Ranks: [][]workloads.Step{{create(0), create(1), reg(2)}, {create(2), reg(0), reg(1)}}}
	threads := []threadResult{
		{Thread: 0, Kinds: kinds("create", 2, 300, "reg", 1, 20)},
		{Thread: 1, Kinds: kinds("create", 1, 50, "reg", 2, 20)},
	}
	if got := stormCriticalPath(plan, false, nil, threads, 2); got != 320 {
		t.Errorf("critical path %d, want 320", got)
	}
	// An election rank 1 won in the run: rank 0 never registered, so its
	// registration costs the mean over all ranks, 40/3 = 13.
	ep := &workloads.StormPlan{QPs: 1, Ranks: [][]workloads.Step{{elect(0)}, {elect(0)}}}
	et := []threadResult{
		{Thread: 0, Kinds: kinds("create", 0, 0, "reg", 0, 0)},
		{Thread: 1, Kinds: kinds("create", 1, 100, "reg", 3, 40)},
	}
	if got := stormCriticalPath(ep, false, []int{1}, et, 2); got != 113 {
		t.Errorf("elected: critical path %d, want 113 (rank 1 creates 0..100, rank 0 registers at the mean 13)", got)
	}
	if got := stormCriticalPath(plan, false, nil, threads[:1], 2); got != -1 {
		t.Errorf("a rank unreported: %d, want -1", got)
	}
	defer func(n int) { maxReplaySteps = n }(maxReplaySteps)
	maxReplaySteps = 5
	if got := stormCriticalPath(plan, false, nil, threads, 2); got != -1 {
		t.Errorf("6 steps past a bound of 5: %d, want -1", got)
	}
}
