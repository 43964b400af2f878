package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/loadavg"
	"github.com/xrcbench/xrcbench/internal/testenv"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// stormConfig is a storm of the given block on sim, one thread per process.
func stormConfig(t *testing.T, block string, ranks int, cost string) Config {
	t.Helper()
	spec, err := workloads.Parse([]byte("name: s\ndescription: d\nmode: storm\nstorm:\n"+block), "storm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Provider: "sim", Workload: spec, WorkloadArg: "storm.yaml", Procs: ranks, Threads: 1,
		Repetitions: 1, Interval: time.Second, Seed: 1, Out: filepath.Join(t.TempDir(), "run")}
	if cost != "" {
		if cfg.SimCost, err = verbs.ParseCost(cost); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func counts(res *results.Result) map[string]int64 {
	out := map[string]int64{}
	for k, s := range res.Ops {
		out[k] = s.Count
	}
	return out
}

func noLeaks(t *testing.T, res *results.Result) {
	t.Helper()
	if res.Leaks == nil || !res.Leaks.Checked || len(res.Leaks.Leaked) > 0 {
		t.Errorf("leak check %+v: want checked, nothing leaked", res.Leaks)
	}
}

// The known answer: 2 ranks, 9 nodes, 1 rail is 16 QPs, each rank
// creating 8 and registering 8 at once; with create=100us and reg=10us a
// rank's own work (its timed operations) is at least 8 x 100 + 8 x 10 =
// 880 us, and the makespan is within +10% of the larger rank's. On a
// machine busy with other work, a rank waiting on a run queue delays
// itself and the ranks waiting for its QP numbers: the bound widens by the
// ranks' run-queue time, measured, and by nothing else. Under a load of
// 25-45 on 2 CPUs, about one repetition in 70 still missed it by a few ms
// with ~100 ms of run-queue time on one rank and none on the other (not
// explained here: no swap, little steal time): two of the seven
// repetitions may miss, and are named; a harness that adds time to every
// storm fails them all.
func TestStormKnownAnswer(t *testing.T) {
	cfg := stormConfig(t, "  nodes: 9\n  arrival: burst\n  teardown: unreg\n", 2, "create=100us,reg=10us")
	cfg.Repetitions = 7
	var res *results.Result
	load := testenv.MeasureLoad(t, func() { res = runOK(t, cfg) })
	want := map[string]int64{"create": 7 * 16, "reg": 7 * 16, "unreg": 7 * 16, "unreg_last": 7 * 16}
	if got := counts(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("op counts %v, want %v (each QP created once, registered once, then two handles dropped, the last destroying it)", got, want)
	}
	st := res.Storm
	if st == nil {
		t.Fatal("no storm figures in result.json")
	}
	if st.QPs != 16 || st.Registrations != 16 || st.Nodes != 9 || st.Ranks != 2 || len(st.MakespanNS) != 7 ||
		len(st.RankDoneNS) != 7 || len(st.RankBusyNS) != 7 || len(st.RankRunQueueNS) != 7 {
		t.Fatalf("storm %+v", st)
	}
	if st.TeardownMethod != "ranks_unreg" || len(st.TeardownNS) != 7 || len(st.RankTeardownNS) != 7 {
		t.Errorf("teardown %v by %q, want 7 measured by ranks_unreg", st.TeardownNS, st.TeardownMethod)
	}
	noLeaks(t, res)
	const work = 880 * time.Microsecond
	var missed []string
	reps := map[int]bool{} // repetitions that missed a bound
	for i, makespan := range st.MakespanNS {
		var own, waits time.Duration
		for _, q := range st.RankRunQueueNS[i] {
			if q < 0 {
				t.Skip("this kernel does not report run-queue waits (/proc/thread-self/schedstat)")
			}
			waits += time.Duration(q)
		}
		for r, b := range st.RankBusyNS[i] {
			busy := time.Duration(b)
			// The cost model busy-waits: no less than its sum; more by
			// the operations' own code, and by a preemption inside one:
			// the rank's, or another's holding the device's lock it waits
			// for (asleep, in no run queue).
			if busy < work {
				t.Errorf("repetition %d rank %d: own work %v, less than the cost model's busy waits %v", i+1, r, busy, work)
			}
			if busy > work*110/100+waits {
				missed = append(missed, fmt.Sprintf("repetition %d rank %d: own work %v, more than +10%% over %v plus the ranks' run-queue waits %v", i+1, r, busy, work, waits))
				reps[i] = true
			}
			if d := time.Duration(st.RankDoneNS[i][r]); d < busy {
				t.Errorf("repetition %d rank %d: done after %v, before its own work %v", i+1, r, d, busy)
			}
			own = max(own, busy)
		}
		bound := own*110/100 + waits
		t.Logf("repetition %d: makespan %v, own work %v, run-queue waits %v: bound %v (ranks done %v, own %v, run queue %v)", i+1, time.Duration(makespan), own, waits, bound, st.RankDoneNS[i], st.RankBusyNS[i], st.RankRunQueueNS[i])
		// Ranks that ran one after the other (16 x 110 us) exceed it
		// unless the run queue took as long.
		if time.Duration(makespan) > bound {
			missed = append(missed, fmt.Sprintf("repetition %d: makespan %v, more than +10%% over the larger rank's own work %v plus the ranks' run-queue waits %v", i+1, time.Duration(makespan), own, waits))
			reps[i] = true
		}
	}
	for _, m := range missed {
		t.Log("missed: " + m)
	}
	if len(reps) > 2 {
		// Ranks bound to CPUs (the default) cannot leave one that the
		// machine's other work keeps busy with interrupts, whose time is
		// in no run queue: on a busy machine that is the machine's.
		testenv.FailOrSkip(t, load, []string{fmt.Sprintf("%d of 7 repetitions missed a bound, at most 2 may: %s", len(reps), strings.Join(missed, "; "))})
	}
}

// Reconnect: a quarter of the connections are torn down and re-wired
// mid-storm; a registration that finds its QP destroyed takes the restart
// path. Whatever the race's outcome, every restart follows a lost race,
// every planned registration either succeeds or loses, every rank ends
// holding one handle per connection, and nothing leaks.
func TestStormReconnect(t *testing.T) {
	cfg := stormConfig(t, "  nodes: 9\n  arrival: burst\n  teardown: unreg\n  reconnect: 0.25\n", 3, "create=100us,reg=10us")
	cfg.Repetitions = 3
	res := runOK(t, cfg)
	c := counts(res)
	const qps, rewired, regs, handles = 8 * 3, 6, 8 * 3 * 2, 8 * 3 * 3
	reps := int64(cfg.Repetitions)
	t.Logf("counts %v", c)
	if c["restart"] != c["reg_retry"] {
		t.Errorf("%d restarts for %d registrations that lost the race", c["restart"], c["reg_retry"])
	}
	if c["reg"]+c["reg_retry"] != reps*regs {
		t.Errorf("reg %d + reg_retry %d, want the %d planned registrations", c["reg"], c["reg_retry"], reps*regs)
	}
	if c["create"] != reps*(qps+rewired) {
		t.Errorf("create %d, want %d (every QP once, every re-wired one twice)", c["create"], reps*(qps+rewired))
	}
	if c["unreg"]+c["unreg_last"] != reps*(rewired+handles) {
		t.Errorf("unreg %d + unreg_last %d, want %d (the re-wires' drops, then one handle per rank and connection)", c["unreg"], c["unreg_last"], reps*(rewired+handles))
	}
	if e := res.Ops["reg_retry"].Expect; c["reg_retry"] > 0 && e != "EINVAL" {
		t.Errorf("reg_retry expect %q, want EINVAL", e)
	}
	for k, s := range res.Ops {
		if s.Errors != 0 {
			t.Errorf("%s: %d errors", k, s.Errors)
		}
	}
	noLeaks(t, res)
}

// Teardown exit: the ranks exit holding their handles and the coordinator
// times until the device shows none of the job's QPs.
func TestStormExit(t *testing.T) {
	cfg := stormConfig(t, "  nodes: 5\n  rails: 2\n  arrival: burst\n  teardown: exit\n", 2, "")
	cfg.Repetitions = 2
	res := runOK(t, cfg)
	if got, want := fmt.Sprint(counts(res)), fmt.Sprint(map[string]int64{"create": 2 * 16, "reg": 2 * 16}); got != want {
		t.Errorf("counts %s, want %s: no unreg with teardown exit", got, want)
	}
	st := res.Storm
	if st.TeardownMethod != "sim_inspect" || len(st.TeardownNS) != 2 || st.TeardownNote != "" {
		t.Errorf("teardown %v by %q (%s), want 2 by sim_inspect", st.TeardownNS, st.TeardownMethod, st.TeardownNote)
	}
	noLeaks(t, res)

	// Where the device cannot be inspected, the result says so, once.
	cfg = stormConfig(t, "  nodes: 3\n  arrival: burst\n  teardown: exit\n", 2, "")
	cfg.Provider, cfg.Repetitions = "null", 2
	res = runOK(t, cfg)
	if st := res.Storm; len(st.TeardownNS) != 0 || st.TeardownNote != "not measurable here: the null provider cannot count the device's live QPs" {
		t.Errorf("teardown on null: %v, note %q", st.TeardownNS, st.TeardownNote)
	}
}

// Poisson arrival: no rank can be done before its last contact arrives.
// The storm outlasts several intervals: its latencies go out as it runs,
// each operation in exactly one interval.
func TestStormPoisson(t *testing.T) {
	cfg := stormConfig(t, "  nodes: 5\n  arrival: poisson\n  window: 20ms\n  teardown: unreg\n", 2, "")
	cfg.Interval = 2 * time.Millisecond
	res := runOK(t, cfg)
	var crammed []string
	for _, kind := range []string{"create", "reg"} {
		var total int64
		var intervals int // that hold some of kind's operations: every interval has a line
		for _, h := range hlogIntervals(t, cfg.Out, kind) {
			total += h.TotalCount()
			if h.TotalCount() > 0 {
				intervals++
			}
		}
		if total != res.Ops[kind].Count {
			t.Errorf("%s: %d operations in the hlog, result %d: want all", kind, total, res.Ops[kind].Count)
		}
		if intervals < 3 {
			crammed = append(crammed, fmt.Sprintf("%s: %d operations in %d intervals of the hlog: want 3 or more 2ms intervals of a 20ms window", kind, total, intervals))
		}
	}
	// A rank the machine kept off its CPU past its contacts' arrivals runs
	// them all at once when it gets there: then the storm is not spread
	// over the window, by the machine's doing, and the measured wait says so.
	defer func() {
		if len(crammed) == 0 {
			return
		}
		var waited time.Duration
		for _, rep := range res.Storm.RankRunQueueNS {
			for _, ns := range rep {
				waited = max(waited, time.Duration(ns))
			}
		}
		if waited > cfg.Interval {
			t.Skipf("%s; a rank waited %v on the run queue (load average %.1f): the machine kept it from its arrivals", strings.Join(crammed, "; "), waited, loadavg.Read())
		}
		t.Errorf("%s (the longest run-queue wait of a rank: %v)", strings.Join(crammed, "; "), waited)
	}()
	plan := cfg.Workload.Storm.Plan(5, 2, cfg.Seed)
	for r, steps := range plan.Ranks {
		last := steps[len(steps)-1].Start
		if d := time.Duration(res.Storm.RankDoneNS[0][r]); d < last {
			t.Errorf("rank %d done after %v, before its last contact at %v", r, d, last)
		}
	}
	noLeaks(t, res)
}

// A storm that does not fit is refused before anything starts, with the
// numbers.
func TestStormRefused(t *testing.T) {
	tests := []struct {
		name  string
		block string
		ranks int
		set   func(*Config)
		want  string
	}{
		{"device too small", "  nodes: 9\n  arrival: burst\n  teardown: unreg\n", 2, func(c *Config) { c.SimMaxQPs = 10 },
			"needs up to 16 live QPs (16 receive QPs + 0 re-wired x 2 ranks), the sim device holds 10"},
		{"reconnect worst case", "  nodes: 9\n  arrival: burst\n  teardown: unreg\n  reconnect: 0.5\n", 2, func(c *Config) { c.SimMaxQPs = 20 },
			"needs up to 32 live QPs (16 receive QPs + 8 re-wired x 2 ranks)"},
		{"too many ranks", "  nodes: 2\n  arrival: burst\n  teardown: unreg\n", 129, nil, "storm of 129 ranks"},
		{"nodes flag", "  nodes: 9\n  arrival: burst\n  teardown: unreg\n", 2, func(c *Config) { c.Nodes = 1 }, "--nodes 1: want 2 to"},
		{"too many QPs", "  nodes: 9\n  rails: 16\n  arrival: burst\n  teardown: unreg\n", 1024, nil, "receive QPs on the node, at most 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stormConfig(t, tt.block, tt.ranks, "")
			if tt.set != nil {
				tt.set(&cfg)
			}
			opts, _ := testOptions(t)
			_, err := Run(context.Background(), cfg, opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	cfg := testConfig(t, "steady", "sim", 1, 1, 1)
	cfg.Iterations, cfg.Nodes = 1, 4
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--nodes applies to storm workloads only") {
		t.Errorf("--nodes on steady: %v", err)
	}
}

// The known answer for placement: a 9-node storm of 2 ranks
// (create=150us, reg=20us: 8 x 150 + 8 x 20 = 1.36 ms of work a rank), 20
// repetitions, ranks bound each to a CPU of its own by default. Every
// makespan is within +15% of the larger rank's own work plus its measured
// run-queue time, and the median within +10% of the work; with a CPU
// each and one to spare, no operation's p99 is beyond 1.5x its injected
// cost (issue 42:
// at 8 and 16 ranks on a 16-CPU host a create's p99 was 1.16 ms for a
// 120 µs cost). Unbound, the two ranks time-sliced one CPU in some runs
// (2.2-4.1 ms). A machine busy with other work (measured while the storms
// ran) moves the ranks' figures by more than a run-queue time can tell
// (one rank waits for the numbers of the other, delayed), so there a miss
// is named and skipped.
func TestStormPlacedKnownAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: 20 storms")
	}
	if n := len(host.AllowedCPUs()); n < 2 {
		t.Skipf("%d CPU allowed: two ranks cannot each have one", n)
	}
	cfg := stormConfig(t, "  nodes: 9\n  arrival: burst\n  teardown: unreg\n", 2, "create=150us,reg=20us")
	cfg.Repetitions = 20
	cfg.StormDefaults()
	var res *results.Result
	load := testenv.MeasureLoad(t, func() { res = runOK(t, cfg) })
	st := res.Storm
	if st == nil || len(st.MakespanNS) != 20 || len(st.RankBusyNS) != 20 || len(st.RankRunQueueNS) != 20 {
		t.Fatalf("storm %+v", st)
	}
	if !res.Config.Pin {
		t.Fatalf("ranks not bound by default: workers %+v", res.Workers)
	}
	var failures []string
	var makespans, works []float64
	for i, mk := range st.MakespanNS {
		k := 0
		if st.RankBusyNS[i][1] > st.RankBusyNS[i][0] {
			k = 1
		}
		work, runq := float64(st.RankBusyNS[i][k]), float64(max(0, st.RankRunQueueNS[i][k]))
		if float64(mk) > 1.15*(work+runq) {
			failures = append(failures, fmt.Sprintf("repetition %d: makespan %v, more than +15%% over the larger rank's work %v plus its run-queue time %v", i+1,
				time.Duration(mk), time.Duration(work), time.Duration(runq)))
		}
		makespans, works = append(makespans, float64(mk)), append(works, work)
	}
	slices.Sort(makespans)
	slices.Sort(works)
	if mk, w := makespans[len(makespans)/2], works[len(works)/2]; mk > 1.10*w {
		failures = append(failures, fmt.Sprintf("median makespan %v, more than +10%% over the median larger rank's work %v", time.Duration(mk), time.Duration(w)))
	}
	// The p99s need a CPU beyond the ranks' for the harness's own threads
	// (the coordinator, the workers' runtimes), as an open loop spins only
	// then: with two ranks bound to the two CPUs of a VM, reg's p99 was
	// 32-46 µs for its 20 µs, its p90 20.8 µs.
	for kind, cost := range map[string]time.Duration{"create": 150 * time.Microsecond, "reg": 20 * time.Microsecond} {
		p99 := time.Duration(res.Ops[kind].NS.P99)
		switch cpus := len(host.AllowedCPUs()); {
		case cpus <= st.Ranks:
			t.Logf("%s p99 %v for its injected %v: not judged, %d ranks on %d CPUs leave none to the harness", kind, p99, cost, st.Ranks, cpus)
		case p99 > cost*3/2:
			failures = append(failures, fmt.Sprintf("%s p99 %v, beyond 1.5x its injected %v", kind, p99, cost))
		}
	}
	testenv.FailOrSkip(t, load, failures)
}
