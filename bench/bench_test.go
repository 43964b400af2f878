package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// The harness-overhead pair: the same reg/unreg operations on the null
// provider, by RunBatch alone and by the engine's thread loop (op programs,
// their bookkeeping and histogram recording). The
// engine's target is at least 0.8x the rate of RunBatch alone.
const benchQPs = 256

func nullDomain(b *testing.B) (*verbs.Device, *verbs.Domain, string) {
	dir := b.TempDir()
	path := filepath.Join(dir, "domain")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	dev, err := verbs.Open(verbs.Options{Provider: "null"})
	if err != nil {
		b.Fatal(err)
	}
	dom, err := dev.OpenDomain(path, false)
	if err != nil {
		b.Fatal(err)
	}
	return dev, dom, path
}

func BenchmarkRunBatchAlone(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, dom, _ := nullDomain(b)
	batch := verbs.NewBatch(benchQPs)
	for i := range batch.QPNs {
		batch.QPNs[i] = uint32(0x100 + i)
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += 2 * benchQPs {
		dom.RunBatch(verbs.OpReg, batch, benchQPs)
		dom.RunBatch(verbs.OpUnreg, batch, benchQPs)
	}
}

func BenchmarkEngineLoop(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spec, err := workloads.Get("steady")
	if err != nil {
		b.Fatal(err)
	}
	_, _, path := nullDomain(b)
	sh, err := createShm(filepath.Join(b.TempDir(), "barrier"), 1, benchQPs)
	if err != nil {
		b.Fatal(err)
	}
	held := make([]uint32, benchQPs)
	for i := range held {
		held[i] = uint32(0x100 + i)
	}
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: benchQPs, Verbs: verbs.Options{Provider: "null"},
		Domain: path, Held: held, Interval: 1 << 62}
	th := newThread(cfg, spec, 0, sh)
	if err := th.setup(); err != nil {
		b.Fatal(err)
	}
	th.measuring = true
	th.ivNext = never
	b.ResetTimer()
	for th.recs[0].count+th.recs[1].count < int64(b.N) {
		if _, err := th.loopChunk(0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if th.recs[0].count == 0 {
		b.Fatal("nothing recorded")
	}
}

// The engine's hot-path targets as Go benchmarks: each reports the figure
// that xrcbench calibrate holds to its target, measured the same way
// (Rig) and as a ratio to a figure of the same run, so it means the
// same on a loaded machine: ops per CPU-second against a bare C loop of
// chained timer reads (calibrate: >= 0.9) and p50 against one timer read
// (<= 1.1) on null, at 1 and 256 QPs; coverage (>= 0.95 at zero cost,
// >= 0.99 with a 2us cost); steady at 1 QP against 16 on sim (>= 0.9).
func BenchmarkEngineNull(b *testing.B) {
	for _, qps := range []int{1, 256} {
		b.Run(fmt.Sprintf("qps=%d", qps), func(b *testing.B) {
			rig, unlock := benchRig(b, "steady", "null", qps, verbs.Cost{})
			defer unlock()
			timer := verbs.TimerOverheadNS()
			reads, cpu, _, err := BareLoop(100 * time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			bare := float64(reads) / (float64(cpu) / 1e9)
			f := benchMeasure(b, rig)
			b.ReportMetric(f.OpsPerCPUSecond()/bare, "cpu-rate/bare")
			b.ReportMetric(float64(f.P50NS)/timer, "p50/timer")
			b.ReportMetric(f.Coverage, "coverage")
		})
	}
}

func BenchmarkEngineCoverage(b *testing.B) {
	for _, c := range []struct {
		provider string
		cost     time.Duration
	}{{"null", 0}, {"sim", 0}, {"sim", 2 * time.Microsecond}} {
		for _, workload := range []string{"steady", "sharded"} {
			for _, qps := range []int{1, 256} {
				b.Run(fmt.Sprintf("%s/%s/qps=%d/cost=%v", workload, c.provider, qps, c.cost), func(b *testing.B) {
					rig, unlock := benchRig(b, workload, c.provider, qps, verbs.Cost{Reg: c.cost, Unreg: c.cost})
					defer unlock()
					b.ReportMetric(benchMeasure(b, rig).Coverage, "coverage")
				})
			}
		}
	}
}

func BenchmarkSteadySim1QPvs16(b *testing.B) {
	var rate [2]float64
	for i, qps := range []int{1, 16} {
		rig, unlock := benchRig(b, "steady", "sim", qps, verbs.Cost{})
		rate[i] = benchMeasure(b, rig).OpsPerSecond()
		unlock()
	}
	b.ReportMetric(rate[0]/rate[1], "1qp/16qp-rate")
}

// benchRig is an engine thread on the benchmark's OS thread, warmed up;
// the function returned releases both.
func benchRig(b *testing.B, workload, provider string, qps int, cost verbs.Cost) (*Rig, func()) {
	runtime.LockOSThread()
	rig, err := NewRig(b.TempDir(), workload, provider, qps, cost)
	if err != nil {
		runtime.UnlockOSThread()
		b.Fatal(err)
	}
	if err := rig.Run(20 * time.Millisecond); err != nil {
		b.Fatal(err)
	}
	return rig, func() { rig.Close(); runtime.UnlockOSThread() }
}

// benchMeasure runs b.N operations, measured (whole programs: a few more).
func benchMeasure(b *testing.B, rig *Rig) Figures {
	b.ResetTimer()
	f, err := rig.Measure(0, func(ops int64) bool { return ops >= int64(b.N) })
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// The hot path allocates nothing: a thread's memory is its fixed
// histogram arrays and batch, whatever the run length.
func TestHotPathAllocatesNothing(t *testing.T) {
	// steady runs as a ring: one call per millisecond here, not per 100.
	defer func(d uint64) { repeatCallMax = d }(repeatCallMax)
	repeatCallMax = uint64(time.Millisecond)
	for _, w := range []string{"steady", "churn", "errors"} {
		t.Run(w, func(t *testing.T) {
			th := nullThread(t, w, 16, func(c *workerConfig) {
				c.Invalid, c.Foreign, c.Interval = c.Held, c.Held, 1<<62
			})
			th.measuring, th.ivNext = true, never
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := th.loopChunk(0); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per program run, want 0", allocs)
			}
		})
	}
}

// The destroy cross-check: an unreg_last that the device says did not
// destroy its QP (here because an outsider also registered with it) is an
// error of its kind, named not_destroyed.
func TestDestroyCrossCheck(t *testing.T) {
	spec, err := workloads.Get("churn")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vo := verbs.Options{Provider: "sim", Sim: verbs.SimOptions{Dir: filepath.Join(dir, "sim")}}
	outsider, err := verbs.Open(vo)
	if err != nil {
		t.Fatal(err)
	}
	defer outsider.Close()
	odom, err := outsider.OpenDomain(filepath.Join(dir, "domain"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer odom.Close()
	sh, err := createShm(filepath.Join(dir, "barrier"), 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.close()
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: 4, Verbs: vo, Domain: filepath.Join(dir, "domain"), Interval: 1 << 62, BatchOps: 8}
	th := newThread(cfg, spec, 0, sh)
	if err := th.setup(); err != nil {
		t.Fatal(err)
	}
	defer th.teardown()
	last := th.phases[1]
	// One program creates the four and unregs them; the outsider steps in
	// between the two halves.
	th.buildLoop()
	if th.prog.n != 8 {
		t.Fatalf("program of %d steps, want 8", th.prog.n)
	}
	if _, _, err := th.runSteps(0, 4); err != nil {
		t.Fatal(err)
	}
	var kept []uint32
	for _, st := range th.prog.p.Steps[:2] { // the outsider holds on to two of the four
		if err := odom.Reg(st.QPN); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, st.QPN)
	}
	if _, _, err := th.runSteps(4, 8); err != nil {
		t.Fatal(err)
	}
	if r := last.rec; r.count != 4 || r.errors != 2 || r.errnos[errNotDestroyed] != 2 {
		t.Errorf("unreg_last: count %d errors %d %v, want 4 with 2 not_destroyed", r.count, r.errors, r.errnos)
	}
	for _, q := range kept {
		if _, err := odom.Unreg(q); err != nil {
			t.Error(err)
		}
	}
}

// One cgo call runs a whole program: at most one per 1000 operations, at
// one QP as at 256 (the program's length does not follow the QP count).
func TestHotPathCgoCalls(t *testing.T) {
	for _, qps := range []int{1, 256} {
		t.Run(fmt.Sprint(qps), func(t *testing.T) {
			th := nullThread(t, "steady", qps, func(c *workerConfig) { c.BatchTime, c.Interval = time.Second, 1<<62 })
			th.measuring, th.ivNext = true, never
			calls0 := runtime.NumCgoCall()
			for th.recs[0].count < 500_000 {
				if _, err := th.loopChunk(0); err != nil {
					t.Fatal(err)
				}
			}
			ops := th.recs[0].count + th.recs[1].count
			if per := float64(runtime.NumCgoCall()-calls0) / float64(ops); per > 1.0/1000 {
				t.Errorf("%.5f cgo calls per operation, want <= 0.001", per)
			}
		})
	}
}

// A thread CPU clock that cannot be read fails the calibration's
// measurement instead of giving a rate per CPU-second of nothing.
func TestBareLoopClockUnreadable(t *testing.T) {
	defer func(c int32) { threadCPUClock = c }(threadCPUClock)
	threadCPUClock = 1 << 20 // no such clock: EINVAL
	reads, cpu, _, err := BareLoop(time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "clock_gettime") {
		t.Fatalf("BareLoop with an unreadable CPU clock: %d reads, %d ns CPU, error %v; want the clock's error", reads, cpu, err)
	}
	threadCPUClock = unix.CLOCK_THREAD_CPUTIME_ID
	if reads, cpu, _, err := BareLoop(time.Millisecond); err != nil || reads == 0 || cpu == 0 {
		t.Errorf("BareLoop: %d reads, %d ns CPU, %v", reads, cpu, err)
	}
}

// TestOpFloorLoop: the floor counts every read it times into a histogram
// of the hot loop's layout, within the time it ran, and refuses a floor of
// another layout or an unreadable CPU clock rather than give a rate
// nobody measured.
func TestOpFloorLoop(t *testing.T) {
	f := NewOpFloor()
	for range 2 { // a floor is reused: each call starts from nothing
		got, err := OpFloorLoop(f, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		var counted int64
		for _, c := range f.Counts {
			counted += c
		}
		if got.Ops <= 0 || counted != got.Ops || got.CPUNS == 0 || got.WallNS < uint64(time.Millisecond) {
			t.Errorf("OpFloorLoop: %+v, %d counted", got, counted)
		}
		if got.TimedNS <= 0 || uint64(got.TimedNS) > got.WallNS || got.P50NS <= 0 || got.P50NS > got.TimedNS/got.Ops*100 {
			t.Errorf("OpFloorLoop: %d ns timed, p50 %d ns, over %d ns", got.TimedNS, got.P50NS, got.WallNS)
		}
	}
	if _, err := OpFloorLoop(verbs.NewOpFloor(16), time.Millisecond); err == nil {
		t.Error("OpFloorLoop with a floor of 16 buckets: no error")
	}
	defer func(c int32) { threadCPUClock = c }(threadCPUClock)
	threadCPUClock = 1 << 20
	if _, err := OpFloorLoop(f, time.Millisecond); err == nil || !strings.Contains(err.Error(), "clock_gettime") {
		t.Errorf("OpFloorLoop with an unreadable CPU clock: %v, want the clock's error", err)
	}
}
