package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/stats"
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
	defer host.KeepPolicy()() // the rigs' setup takes a measured thread's
	var out []verbs.Measurement
	add := func(name string, v float64, unit, target string, ok bool, detail string) {
		out = append(out, verbs.Measurement{Name: name, Value: v, Unit: unit, Target: target, OK: ok, Detail: detail})
	}
	timer := verbs.TimerOverheadNS()
	n := 0
	unlessBusy := func(clean, all int) {
		out[len(out)-1] = verbs.JudgeUnlessBusy(out[len(out)-1], clean, all)
	}
	for _, qps := range []int{1, 256} {
		n++
		vb, err := engineVsBare(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), qps)
		if err != nil {
			return nil, err
		}
		add(fmt.Sprintf("engine_null_%dqp_ops_per_cpu_vs_bare", qps), vb.ratio, "x", ">= 0.9", vb.ratio >= 0.9,
			fmt.Sprintf("steady on null, 1 thread: %.3g ops per CPU-second, a bare loop of chained timer reads %.3g; the median of the ratios of %d of %d alternating slice pairs, those run without a context switch",
				vb.engine.opsPerCPUSecond(), vb.bare, vb.clean, cpuRatePairs))
		unlessBusy(vb.clean, cpuRatePairs)
		if qps == 1 {
			add("engine_null_p50_per_timer_read", vb.p50PerRead, "x", "<= 1.1", vb.p50PerRead <= 1.1,
				fmt.Sprintf("p50 %d ns, one chained timer read of the bare loop beside it %.1f ns (alone, back to back: %.1f ns); the median of %d slice pairs' ratios",
					vb.engine.p50NS, vb.readNS, timer, vb.clean))
			unlessBusy(vb.clean, cpuRatePairs)
		}
	}
	for _, c := range []struct {
		provider string
		cost     time.Duration
		min      float64
	}{{"null", 0, 0.95}, {"sim", 0, 0.95}, {"sim", 2 * time.Microsecond, 0.99}} {
		for _, workload := range []string{"steady", "sharded"} {
			for _, qps := range []int{1, 256} {
				n++
				cov, clean, err := engineCoverage(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), workload, c.provider, qps, verbs.Cost{Reg: c.cost, Unreg: c.cost})
				if err != nil {
					return nil, err
				}
				name := fmt.Sprintf("coverage_%s_%s_%dqp", workload, c.provider, qps)
				what := "no cost"
				if c.cost > 0 {
					name += fmt.Sprintf("_%v", c.cost)
					what = fmt.Sprintf("reg and unreg cost %v", c.cost)
				}
				add(name, cov, "share", fmt.Sprintf(">= %g", c.min), cov >= c.min,
					fmt.Sprintf("timed share of the thread's time, %s, over the %d of %d slices of %v run without a context switch", what, clean, coverageSlices, calibrationSpan/coverageSlices))
				unlessBusy(clean, coverageSlices)
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
	var ratios []float64
	for range cpuRatePairs {
		var f [2]engineFigures
		sw := verbs.ThreadSwitches()
		for i := range rig {
			var err error
			if f[i], err = rig[i].measureFor(calibrationSpan / cpuRatePairs); err != nil {
				return nil, err
			}
		}
		if verbs.ThreadSwitches() != sw {
			continue // the machine's slice as much as the engine's
		}
		for i := range rig {
			ops[i] += f[i].ops
			wall[i] += f[i].wallNS
		}
		ratios = append(ratios, f[0].opsPerSecond()/f[1].opsPerSecond())
	}
	one, sixteen := float64(ops[0])/(float64(wall[0])/1e9), float64(ops[1])/(float64(wall[1])/1e9)
	r := 0.0 // no clean pair: not judged (unlessBusy)
	if len(ratios) > 0 {
		r = stats.Median(ratios)
	}
	add("steady_sim_1qp_vs_16qp_ops", r, "x", ">= 0.9", r >= 0.9,
		fmt.Sprintf("ops/s at 1 QP %.3g, at 16 QPs %.3g; the median of the ratios of %d of %d alternating slice pairs, those run without a context switch", one, sixteen, len(ratios), cpuRatePairs))
	unlessBusy(len(ratios), cpuRatePairs)
	return out, nil
}

// cpuRatePairs: a pair of figures compared as a ratio is measured in this
// many alternating pairs of slices of 1 ms each, so that a change in the
// machine's load or clock speed falls on both alike, and the ratio is the
// median of the pairs' run without a context switch: one that the machine
// took the CPU from in the middle (every few ms under load) measures the
// machine as much as the engine (a pair of 2 ms is clean about half the
// time at a load of 2 per CPU), the engine's loop (more instructions and
// memory per timer read, so slower to recover its caches) more than the
// bare one. On a virtual machine the host's other guests slow a CPU by
// ~10% for tens of ms at a time: a few pairs show it, the median does not.
// With fewer than verbs.MinCleanShare of the pairs clean, the machine is
// too busy to judge.
const cpuRatePairs = 300

// vsBare is the engine against the bare loop (engineVsBare).
type vsBare struct {
	engine     engineFigures // operations and CPU time of the clean pairs, their median p50
	bare       float64       // the bare loop's reads per CPU-second in them
	readNS     float64       // its wall time per read in them: one chained timer read
	ratio      float64       // the median of the pairs' ops per CPU-second ratios
	p50PerRead float64       // the median of the pairs' engine p50 per bare read
	clean      int           // pairs run without a context switch, of cpuRatePairs
}

// engineVsBare measures steady on null at qps QPs, one engine thread,
// against the bare loop, in alternating pairs of slices, and keeps the
// pairs run without a context switch (cpuRatePairs).
func engineVsBare(dir string, qps int) (vsBare, error) {
	var vb vsBare
	rig, err := newEngineRig(dir, "steady", "null", qps, verbs.Cost{})
	if err != nil {
		return vb, err
	}
	defer rig.close()
	if err := rig.run(calibrationSpan / 10); err != nil {
		return vb, err
	}
	var bareReads, bareCPU, bareWall uint64
	var ratios, perRead []float64
	var p50s []float64
	for range cpuRatePairs {
		sw := verbs.ThreadSwitches()
		reads, cpu, wall, err := bareLoop(calibrationSpan / cpuRatePairs)
		if err != nil {
			return vb, err
		}
		f, err := rig.measureFor(calibrationSpan / cpuRatePairs)
		if err != nil {
			return vb, err
		}
		if verbs.ThreadSwitches() != sw {
			continue
		}
		vb.clean++
		bareReads += reads
		bareCPU += cpu
		bareWall += wall
		ratios = append(ratios, f.opsPerCPUSecond()/(float64(reads)/(float64(cpu)/1e9)))
		perRead = append(perRead, float64(f.p50NS)/(float64(wall)/float64(reads)))
		vb.engine.ops += f.ops
		vb.engine.cpuNS += f.cpuNS
		p50s = append(p50s, float64(f.p50NS))
	}
	if vb.clean > 0 {
		// Every clean pair gave one of each.
		vb.engine.p50NS = int64(math.Round(stats.Median(p50s)))
		vb.bare = float64(bareReads) / (float64(bareCPU) / 1e9)
		vb.readNS = float64(bareWall) / float64(bareReads)
		vb.ratio, vb.p50PerRead = stats.Median(ratios), stats.Median(perRead)
	}
	return vb, nil
}

// bareLoop runs the floor for span: chained timer reads in C, stored,
// nothing else, in calls as long as the engine's programs. It returns the
// reads, the thread's CPU time and the wall time.
func bareLoop(span time.Duration) (reads, cpuNS, wallNS uint64, err error) {
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

// coverageSlices: coverage is measured in this many slices, and summed
// over those run without a context switch: time another process took in
// the middle of one lands in and out of operations alike, but the engine
// comes back from it slower (cold caches) in its untimed Go. Slices as
// long as 10 ms keep the edges of each (the untimed start of its first
// call) far below the 1% the targets leave.
const coverageSlices = 30

// engineCoverage is one engine thread's coverage of workload on qps QPs of
// a fresh device in dir, over the slices run without a context switch,
// and how many those were (coverageSlices).
func engineCoverage(dir, workload, provider string, qps int, cost verbs.Cost) (float64, int, error) {
	rig, err := newEngineRig(dir, workload, provider, qps, cost)
	if err != nil {
		return 0, 0, err
	}
	defer rig.close()
	if err := rig.run(calibrationSpan / 10); err != nil {
		return 0, 0, err
	}
	var timed, worked float64
	clean := 0
	for range coverageSlices {
		sw := verbs.ThreadSwitches()
		f, err := rig.measureFor(calibrationSpan / coverageSlices)
		if err != nil {
			return 0, 0, err
		}
		if verbs.ThreadSwitches() != sw || f.coverage <= 0 {
			continue
		}
		clean++
		timed += float64(f.timedNS)
		worked += float64(f.timedNS) / f.coverage
	}
	if worked == 0 {
		return 0, 0, nil
	}
	return timed / worked, clean, nil
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
