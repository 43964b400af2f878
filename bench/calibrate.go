package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// calibrationSpan is how long each engine measurement of Calibrate runs.
const calibrationSpan = 300 * time.Millisecond

// engineFigures is what one thread of the engine did in a calibration
// measurement.
type engineFigures struct {
	ops      int64
	wallNS   uint64
	cpuNS    uint64
	timedNS  int64
	p50NS    int64
	coverage float64
}

func (f engineFigures) opsPerCPUSecond() float64 { return float64(f.ops) / (float64(f.cpuNS) / 1e9) }
func (f engineFigures) opsPerSecond() float64    { return float64(f.ops) / (float64(f.wallNS) / 1e9) }

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

// Calibrate measures the engine's hot path against its targets on this
// machine, each as a ratio to a figure measured in the same run: one
// thread on the null provider against a bare C loop of chained timer reads
// (ops per CPU-second), its p50 against one timer read, the share of its
// time inside timed operations (coverage) for steady and sharded on null
// and sim, and steady's rate at 1 QP against 16. dir holds the scratch
// devices and domains.
func Calibrate(dir string) ([]verbs.Measurement, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out []verbs.Measurement
	add := func(name string, v float64, unit, target string, ok bool, detail string) {
		out = append(out, verbs.Measurement{Name: name, Value: v, Unit: unit, Target: target, OK: ok, Detail: detail})
	}
	timer := verbs.TimerOverheadNS()
	n := 0
	measure := func(workload, provider string, qps int, cost verbs.Cost) (engineFigures, error) {
		n++
		return engineMeasure(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), workload, provider, qps, cost, calibrationSpan)
	}
	for _, qps := range []int{1, 256} {
		n++
		f, bare, r, err := engineVsBare(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), qps)
		if err != nil {
			return nil, err
		}
		add(fmt.Sprintf("engine_null_%dqp_ops_per_cpu_vs_bare", qps), r, "x", ">= 0.9", r >= 0.9,
			fmt.Sprintf("steady on null, 1 thread: %.3g ops per CPU-second, a bare loop of chained timer reads %.3g; the median of %d alternating slices' ratios",
				f.opsPerCPUSecond(), bare, cpuRateSlices))
		if qps == 1 {
			p := float64(f.p50NS) / timer
			add("engine_null_p50_per_timer_read", p, "x", "<= 1.1", p <= 1.1,
				fmt.Sprintf("p50 %d ns, one timer read %.1f ns", f.p50NS, timer))
		}
	}
	for _, c := range []struct {
		provider string
		cost     time.Duration
		min      float64
	}{{"null", 0, 0.95}, {"sim", 0, 0.95}, {"sim", 2 * time.Microsecond, 0.99}} {
		for _, workload := range []string{"steady", "sharded"} {
			for _, qps := range []int{1, 256} {
				f, err := measure(workload, c.provider, qps, verbs.Cost{Reg: c.cost, Unreg: c.cost})
				if err != nil {
					return nil, err
				}
				name := fmt.Sprintf("coverage_%s_%s_%dqp", workload, c.provider, qps)
				what := "no cost"
				if c.cost > 0 {
					name += fmt.Sprintf("_%v", c.cost)
					what = fmt.Sprintf("reg and unreg cost %v", c.cost)
				}
				add(name, f.coverage, "share", fmt.Sprintf(">= %g", c.min), f.coverage >= c.min,
					fmt.Sprintf("timed share of the thread's time, %s", what))
			}
		}
	}
	// The pair is measured in alternating slices, so a change in the
	// machine's load during calibrate falls on both alike.
	var rig [2]*engineRig
	for i, qps := range []int{1, 16} {
		n++
		var err error
		if rig[i], err = newEngineRig(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), "steady", "sim", qps, verbs.Cost{}); err != nil {
			return nil, err
		}
		defer rig[i].close()
		if err := rig[i].run(calibrationSpan / 10); err != nil {
			return nil, err
		}
	}
	var ops [2]int64
	var wall [2]uint64
	for range calibrationSlices {
		for i := range rig {
			f, err := rig[i].measureFor(calibrationSpan / calibrationSlices)
			if err != nil {
				return nil, err
			}
			ops[i] += f.ops
			wall[i] += f.wallNS
		}
	}
	one, sixteen := float64(ops[0])/(float64(wall[0])/1e9), float64(ops[1])/(float64(wall[1])/1e9)
	r := one / sixteen
	add("steady_sim_1qp_vs_16qp_ops", r, "x", ">= 0.9", r >= 0.9,
		fmt.Sprintf("ops/s at 1 QP %.3g, at 16 QPs %.3g (%d alternating slices each)", one, sixteen, calibrationSlices))
	return out, nil
}

// calibrationSlices: a pair of figures compared as a ratio is measured in
// this many alternating slices, so that a change in the machine's load or
// clock speed during calibrate falls on both alike.
const calibrationSlices = 7

// cpuRateSlices: the engine's ops per CPU-second against the bare loop's
// are measured in this many alternating slices of 20 ms each, and the
// ratio is their median. On a virtual machine the host's other guests
// slow a CPU by ~10% for tens of ms at a time, the engine's loop (more
// instructions per timer read) more than the bare one: a few slices show
// it, the median does not.
const cpuRateSlices = 15

// engineVsBare measures steady on null at qps QPs, one engine thread,
// against the bare loop, in alternating slices. It returns the engine's
// operations, CPU time and p50 (the median of the slices'), the bare
// loop's ops per CPU-second over all slices, and the median of the
// slices' ratios (cpuRateSlices).
func engineVsBare(dir string, qps int) (engineFigures, float64, float64, error) {
	rig, err := newEngineRig(dir, "steady", "null", qps, verbs.Cost{})
	if err != nil {
		return engineFigures{}, 0, 0, err
	}
	defer rig.close()
	if err := rig.run(calibrationSpan / 10); err != nil {
		return engineFigures{}, 0, 0, err
	}
	var all engineFigures
	var bareOps, bareCPU uint64
	ratios := make([]float64, 0, cpuRateSlices)
	p50s := make([]int64, 0, cpuRateSlices)
	for range cpuRateSlices {
		o, c, err := bareLoop(calibrationSpan / cpuRateSlices)
		if err != nil {
			return all, 0, 0, err
		}
		bareOps += o
		bareCPU += c
		f, err := rig.measureFor(calibrationSpan / cpuRateSlices)
		if err != nil {
			return all, 0, 0, err
		}
		ratios = append(ratios, f.opsPerCPUSecond()/(float64(o)/(float64(c)/1e9)))
		all.ops += f.ops
		all.cpuNS += f.cpuNS
		p50s = append(p50s, f.p50NS)
	}
	slices.Sort(ratios)
	slices.Sort(p50s)
	all.p50NS = p50s[len(p50s)/2]
	return all, float64(bareOps) / (float64(bareCPU) / 1e9), ratios[len(ratios)/2], nil
}

// bareLoop runs the floor for span: chained timer reads in C, stored,
// nothing else, in calls as long as the engine's programs. It returns the
// reads and the thread's CPU time.
func bareLoop(span time.Duration) (reads, cpuNS uint64, err error) {
	ns := make([]uint64, DefaultBatchOps)
	cpu0, err := threadCPUNS()
	if err != nil {
		return 0, 0, err
	}
	end := verbs.Now() + uint64(span)
	calls := 0
	for verbs.Now() < end {
		verbs.BareTimerLoop(ns)
		calls++
	}
	cpu1, err := threadCPUNS()
	if err != nil {
		return 0, 0, err
	}
	return uint64(calls * len(ns)), cpu1 - cpu0, nil
}

// engineMeasure runs one engine thread of workload on qps QPs of a fresh
// device in dir for span, on the calling (locked) OS thread, after a
// warm-up of a tenth of it.
func engineMeasure(dir, workload, provider string, qps int, cost verbs.Cost, span time.Duration) (engineFigures, error) {
	rig, err := newEngineRig(dir, workload, provider, qps, cost)
	if err != nil {
		return engineFigures{}, err
	}
	defer rig.close()
	if err := rig.run(span / 10); err != nil {
		return engineFigures{}, err
	}
	return rig.measureFor(span)
}

// engineRig is one engine thread on a fresh device, with the QPs its
// workload needs, for Calibrate and the Go benchmarks.
type engineRig struct {
	workload, provider string
	th                 *thread
	undo               []func()
}

func (r *engineRig) close() {
	for i := len(r.undo) - 1; i >= 0; i-- {
		r.undo[i]()
	}
}

// newEngineRig sets up one engine thread of workload on qps QPs of a
// fresh device in dir, on the calling (locked) OS thread.
func newEngineRig(dir, workload, provider string, qps int, cost verbs.Cost) (_ *engineRig, err error) {
	r := &engineRig{workload: workload, provider: provider}
	defer func() {
		if err != nil {
			r.close()
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

// run runs the thread's programs for d, unmeasured.
func (r *engineRig) run(d time.Duration) error {
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

// measureFor measures the thread's programs for d (see measure).
func (r *engineRig) measureFor(d time.Duration) (engineFigures, error) {
	end := verbs.Now() + uint64(d)
	return r.measure(end, func(int64) bool { return verbs.Now() >= end })
}

// measure starts afresh and runs the thread's programs, measured, until
// done says so (asked between calls into C, with the operations so far);
// end, if not 0, is when done will by the clock, so that a repeated
// program comes back to Go then.
func (r *engineRig) measure(end uint64, done func(ops int64) bool) (engineFigures, error) {
	var f engineFigures
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
	f.cpuNS = cpu1 - cpu0
	f.wallNS = verbs.Now() - th.started
	all := results.NewHistogram()
	for _, rec := range th.recs {
		f.ops += rec.count
		f.timedNS += rec.timedNS
		if rec.errors > 0 {
			return f, fmt.Errorf("calibrate: %s on %s: %d %s operations had unexpected outcomes %v", r.workload, r.provider, rec.errors, rec.kind, rec.errnos)
		}
		all.Merge(histogramInto(results.NewHistogram(), rec.iv))
	}
	f.p50NS = all.ValueAtQuantile(50)
	f.coverage = float64(f.timedNS) / float64(f.wallNS-th.waitNS)
	return f, nil
}
