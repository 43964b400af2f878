package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// The critical path's known answer (issue 42, item 4): storms of 2, 8
// and 16 ranks with create=120us and reg=15us, on N = max(9, ranks+1)
// nodes: (N-1) x ranks QPs, each created once and registered by every
// other rank (round-robin: each rank creates N-1 and registers (N-1) x
// (ranks-1); elected: as the race falls). Every repetition's makespan is
// within +10% of the critical path result.json records for it (the plan
// replayed with the repetition's measured costs) plus the ranks'
// run-queue time, both measured by this run: a rank waiting for a CPU
// delays itself and, through the numbers it sends back, the others, so
// the bound adds every rank's run-queue time. On a busy machine that term
// widens the bound, as it should; what is left beyond it is the
// harness's (the report names it). The critical path is at least the
// busiest rank's own work and the cost model's work per rank. Where a CPU
// is left beside the ranks for the harness's own threads, no operation's
// p99 is beyond 1.5x its injected cost (on a 16-CPU host a create's p99
// was 1.16 ms for 120 us at 8 ranks, when the sim ran creates one at a
// time); with none left it is logged (TestStormPlacedKnownAnswer says
// why). A size needs a CPU per rank; on the 2-CPU VM only 2 ranks run.
//
// Elected storms are judged on their median repetition. Their ranks race
// for every slot, and when two numbers come back at about the same time
// the run and the replay (with mean costs) may serve them in either order,
// each choice a create's wait; on the 2-CPU VM their repetitions ran
// +0.5% to +12% over the replay less the run queue (median +5%), against
// -2.7% to +1.4% for round-robin storms, and one in 15-30 passed +10%.
// What part of the +5% is the harness's is not known.
func TestStormCriticalPathKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		median      bool // judge the median repetition, not each
	}{
		{"round-robin", "  arrival: burst\n  teardown: exit\n", false},
		// GASNet's: every rank elects on every slot; the replay takes
		// the run's winners.
		{"elect", "  arrival: burst\n  teardown: exit\n  creators: elect\n", true},
	} {
		for _, ranks := range []int{2, 8, 16} {
			t.Run(fmt.Sprintf("%s, %d ranks", tc.name, ranks), func(t *testing.T) {
				if cpus := len(host.AllowedCPUs()); ranks > cpus {
					t.Skipf("%d ranks on %d CPUs: each rank needs one", ranks, cpus)
				}
				nodes := max(9, ranks+1)
				stormCriticalPathKnown(t, fmt.Sprintf("  nodes: %d\n", nodes)+tc.block, ranks, nodes, tc.median)
			})
		}
	}
}

func stormCriticalPathKnown(t *testing.T, block string, ranks, nodes int, median bool) {
	const create, reg = 120 * time.Microsecond, 15 * time.Microsecond
	cfg := stormConfig(t, block, ranks, "create=120us,reg=15us")
	cfg.Repetitions = 5
	var res *results.Result
	load := testenv.MeasureLoad(t, func() { res = runOK(t, cfg) })
	st := res.Storm
	if st == nil || len(st.CriticalPathNS) != 5 || len(st.MakespanNS) != 5 || len(st.RankBusyNS) != 5 || len(st.RankRunQueueNS) != 5 {
		t.Fatalf("storm %+v: want 5 repetitions' makespans, critical paths, own work and run-queue times", st)
	}
	// The cost model's share of the work per rank, however the
	// elections fell.
	qps, regs := (nodes-1)*ranks, (nodes-1)*ranks*(ranks-1)
	if st.QPs != qps || st.Registrations != regs {
		t.Fatalf("storm of %d QPs and %d registrations, want %d and %d", st.QPs, st.Registrations, qps, regs)
	}
	work := (time.Duration(qps)*create + time.Duration(regs)*reg) / time.Duration(ranks)
	var missed, over []string
	var excess []float64 // makespan less the ranks' run queue, over the critical path
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
			t.Errorf("repetition %d: critical path %v, below the cost model's work per rank %v or the busiest rank's own work %v", i+1, cp, work, own)
		}
		excess = append(excess, float64(time.Duration(mk)-runq)/float64(cp)-1)
		if bound := cp*110/100 + runq; time.Duration(mk) > bound {
			over = append(over, fmt.Sprintf("repetition %d: makespan %v, more than +10%% over its critical path %v plus the ranks' run-queue time %v", i+1, time.Duration(mk), cp, runq))
		}
	}
	slices.Sort(excess)
	switch m := excess[len(excess)/2]; {
	case !median:
		missed = append(missed, over...)
	case m > 0.10:
		missed = append(missed, fmt.Sprintf("the median repetition's makespan less the ranks' run queue is %+.1f%% over its critical path, want at most +10%% (%d of %d repetitions over)",
			100*m, len(over), len(excess)))
	default:
		for _, o := range over {
			t.Logf("%s (judged on the median, %+.1f%%)", o, 100*m)
		}
	}
	for kind, cost := range map[string]time.Duration{"create": create, "reg": reg} {
		p99 := time.Duration(res.Ops[kind].NS.P99)
		switch cpus := len(host.AllowedCPUs()); {
		case cpus <= ranks:
			t.Logf("%s p99 %v for its injected %v: not judged, %d ranks on %d CPUs leave none to the harness", kind, p99, cost, ranks, cpus)
		case p99 > cost*3/2:
			missed = append(missed, fmt.Sprintf("%s p99 %v, beyond 1.5x its injected %v", kind, p99, cost))
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
