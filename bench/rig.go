package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Figures is what one thread of the engine did in a measurement of a Rig.
type Figures struct {
	Ops      int64
	WallNS   uint64
	CPUNS    uint64 // the thread's CPU time
	TimedNS  int64  // inside timed operations
	P50NS    int64
	Coverage float64 // TimedNS's share of the time the thread did not wait
}

// OpsPerCPUSecond is the thread's operations per second of its CPU time.
func (f Figures) OpsPerCPUSecond() float64 { return float64(f.Ops) / (float64(f.CPUNS) / 1e9) }

// OpsPerSecond is the thread's operations per second of wall time.
func (f Figures) OpsPerSecond() float64 { return float64(f.Ops) / (float64(f.WallNS) / 1e9) }

// threadCPUClock is the clock threadCPUNS reads: the calling thread's
// CPU time (a variable so that a test can name one that fails).
var threadCPUClock int32 = unix.CLOCK_THREAD_CPUTIME_ID

// threadCPUNS is the calling thread's CPU time. A clock that cannot be
// read is an error: a zero in its place would make every rate per
// CPU-second of the calibration a figure nobody measured.
func threadCPUNS() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(threadCPUClock, &ts); err != nil {
		return 0, fmt.Errorf("calibrate: reading the thread's CPU time: clock_gettime: %w", err)
	}
	return uint64(ts.Nano()), nil
}

// BareLoop runs the floor the engine's thread is held to for span:
// chained timer reads in C, stored, nothing else, in calls as long as the
// engine's programs. It returns the reads, the thread's CPU time and the
// wall time.
func BareLoop(span time.Duration) (reads, cpuNS, wallNS uint64, err error) {
	ns := make([]uint64, DefaultBatchOps)
	cpu0, err := threadCPUNS()
	if err != nil {
		return 0, 0, 0, err
	}
	start := verbs.Now()
	end := start + uint64(span)
	calls := 0
	now := start
	for now < end {
		verbs.BareTimerLoop(ns)
		calls++
		now = verbs.Now()
	}
	cpu1, err := threadCPUNS()
	if err != nil {
		return 0, 0, 0, err
	}
	return uint64(calls * len(ns)), cpu1 - cpu0, now - start, nil
}

// OpFloorLoop runs, for span, the floor of timing an operation behind a
// provider's table (verbs.BareOpLoop: chained timer reads around a call of
// the null provider, each duration counted as the hot loop counts it), in
// calls as long as the engine's programs, counting into f (cleared first,
// histCounts long: NewOpFloor). Its Figures: the reads (Ops), the thread's
// CPU time, the wall time, the durations' sum (TimedNS) and p50.
func OpFloorLoop(f *verbs.OpFloor, span time.Duration) (Figures, error) {
	if len(f.Counts) != histCounts {
		return Figures{}, fmt.Errorf("calibrate: an operation's floor of %d buckets, want %d (bench.NewOpFloor)", len(f.Counts), histCounts)
	}
	clear(f.Counts)
	f.Count, f.Sum = 0, 0
	cpu0, err := threadCPUNS()
	if err != nil {
		return Figures{}, err
	}
	start := verbs.Now()
	end := start + uint64(span)
	now := start
	for now < end {
		verbs.BareOpLoop(f, DefaultBatchOps)
		now = verbs.Now()
	}
	cpu1, err := threadCPUNS()
	if err != nil {
		return Figures{}, err
	}
	return Figures{Ops: int64(f.Count), WallNS: now - start, CPUNS: cpu1 - cpu0, TimedNS: int64(f.Sum),
		P50NS: histogramInto(results.NewHistogram(), f.Counts).ValueAtQuantile(50)}, nil
}

// NewOpFloor is a floor for OpFloorLoop: counts laid out as the hot
// loop's.
func NewOpFloor() *verbs.OpFloor { return verbs.NewOpFloor(histCounts) }

// Rig is one engine thread on a fresh device, with the QPs its workload
// needs, for xrcbench calibrate (internal/calibrate) and the Go
// benchmarks: the engine's hot path measured alone.
type Rig struct {
	workload, provider string
	th                 *thread
	undo               []func()
}

// Close tears the thread down and closes the device.
func (r *Rig) Close() {
	for i := len(r.undo) - 1; i >= 0; i-- {
		r.undo[i]()
	}
}

// NewRig sets up one engine thread of workload on qps QPs of a fresh
// device in dir, on the calling (locked) OS thread.
func NewRig(dir, workload, provider string, qps int, cost verbs.Cost) (_ *Rig, err error) {
	r := &Rig{workload: workload, provider: provider}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	spec, err := workloads.Get(workload)
	if err != nil {
		return nil, err
	}
	vo := verbs.Options{Provider: provider}
	if provider == "sim" {
		vo.Sim = verbs.SimOptions{Dir: filepath.Join(dir, "sim"), Cost: cost}
	}
	path := filepath.Join(dir, "domain")
	held := make([]uint32, qps)
	if provider == "sim" {
		dev, err := verbs.Open(vo)
		if err != nil {
			return nil, err
		}
		r.undo = append(r.undo, func() { dev.Close() })
		holder, err := dev.OpenDomain(path, true)
		if err != nil {
			return nil, err
		}
		r.undo = append(r.undo, func() { holder.Close() })
		for i := range held {
			if held[i], err = holder.CreateRcvQP(); err != nil {
				return nil, err
			}
			q := held[i]
			r.undo = append(r.undo, func() { holder.Unreg(q) })
		}
	} else {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			return nil, err
		}
		for i := range held {
			held[i] = uint32(0x100 + i)
		}
	}
	sh, err := createShm(filepath.Join(dir, "barrier"), 1, qps)
	if err != nil {
		return nil, err
	}
	r.undo = append(r.undo, func() { sh.close() })
	cfg := &workerConfig{Threads: 1, TotalThreads: 1, QPs: qps, Verbs: vo, Domain: path, Held: held, Interval: 1 << 62}
	r.th = newThread(cfg, spec, 0, sh)
	if err := r.th.setup(); err != nil {
		return nil, err
	}
	r.undo = append(r.undo, func() { r.th.teardown() })
	return r, nil
}

// Run runs the thread's programs for d, unmeasured.
func (r *Rig) Run(d time.Duration) error {
	end := verbs.Now() + uint64(d)
	r.th.loopEnd = end
	defer func() { r.th.loopEnd = 0 }()
	for verbs.Now() < end {
		if _, err := r.th.loopChunk(0); err != nil {
			return err
		}
	}
	return nil
}

// MeasureFor measures the thread's programs for d (see Measure).
func (r *Rig) MeasureFor(d time.Duration) (Figures, error) {
	end := verbs.Now() + uint64(d)
	return r.Measure(end, func(int64) bool { return verbs.Now() >= end })
}

// Measure starts afresh and runs the thread's programs, measured, until
// done says so (asked between calls into C, with the operations so far);
// end, if not 0, is when done will by the clock, so that a repeated
// program comes back to Go then.
func (r *Rig) Measure(end uint64, done func(ops int64) bool) (Figures, error) {
	var f Figures
	th := r.th
	for _, rec := range th.recs {
		rec.reset()
	}
	th.measuring, th.ivNext, th.loopEnd = true, never, end
	defer func() { th.loopEnd = 0 }()
	th.waitNS = 0
	th.started = verbs.Now()
	th.lastEnd = th.started
	cpu0, err := threadCPUNS()
	if err != nil {
		return f, err
	}
	ops := int64(0)
	for !done(ops) {
		if _, err := th.loopChunk(0); err != nil {
			return f, err
		}
		ops = 0
		for _, rec := range th.recs {
			ops += rec.count
		}
	}
	cpu1, err := threadCPUNS()
	if err != nil {
		return f, err
	}
	f.CPUNS = cpu1 - cpu0
	f.WallNS = verbs.Now() - th.started
	all := results.NewHistogram()
	for _, rec := range th.recs {
		f.Ops += rec.count
		f.TimedNS += rec.timedNS
		if rec.errors > 0 {
			return f, fmt.Errorf("calibrate: %s on %s: %d %s operations had unexpected outcomes %v", r.workload, r.provider, rec.errors, rec.kind, rec.errnos)
		}
		all.Merge(histogramInto(results.NewHistogram(), rec.iv))
	}
	f.P50NS = all.ValueAtQuantile(50)
	f.Coverage = float64(f.TimedNS) / float64(f.WallNS-th.waitNS)
	return f, nil
}
