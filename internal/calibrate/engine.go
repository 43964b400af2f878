package calibrate

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"time"

	"github.com/xrcbench/xrcbench/bench"
	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/verbs"
)

// calibrationSpan is how long each engine measurement of Engine runs.
const calibrationSpan = 300 * time.Millisecond

// Engine measures the engine's hot path against its targets on this
// machine, each as a ratio to a figure measured in the same run: one
// thread on the null provider against the floor of timing an operation
// (chained timer reads around a null call, counted: ops per CPU-second and
// p50), shown beside a bare C loop of chained timer reads, so that the
// machine's part is seen and the engine's alone judged; the share of its
// time inside timed operations (coverage) for steady and sharded on null
// and sim, and steady's rate at 1 QP against 16. dir holds the scratch
// devices and domains.
func Engine(dir string) ([]Measurement, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer host.KeepPolicy()() // the rigs' setup takes a measured thread's
	var out []Measurement
	add := func(name string, v float64, unit, target string, ok bool, detail string) {
		out = append(out, Measurement{Name: name, Value: v, Unit: unit, Target: target, OK: ok, Detail: detail})
	}
	timer := verbs.TimerOverheadNS()
	n := 0
	unlessBusy := func(clean, all int) {
		out[len(out)-1] = JudgeUnlessBusy(out[len(out)-1], clean, all)
	}
	for _, qps := range []int{1, 256} {
		n++
		vb, err := engineVsBare(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), qps)
		if err != nil {
			return nil, err
		}
		if qps == 1 {
			// The machine's part: what a call and a count cost here beyond
			// a timer read, which any loop that times operations and
			// records them pays. On a 16-CPU Xeon guest verbs' own loop of
			// null operations took 1.24 timer reads, here 1.0. It is held
			// to the bound verbs' loop is held to (null_op_per_timer_read),
			// so that a slower count, which the floor shares with the
			// engine and the ratio to it cannot see, is still caught.
			add("op_floor_per_timer_read", vb.floorPerRead, "x", "<= 1.5", vb.floorPerRead <= 1.5,
				fmt.Sprintf("the floor of timing an operation: chained timer reads around a null call, each counted as the engine counts, %.1f ns a read against %.1f ns for reads alone: the machine's price of a call and a count; the median of %d slice triples' ratios",
					vb.floorNS, vb.readNS, vb.clean))
			unlessBusy(vb.clean, cpuRatePairs)
		}
		add(fmt.Sprintf("engine_null_%dqp_ops_per_cpu_vs_bare", qps), vb.ratio, "x", "", true,
			fmt.Sprintf("steady on null, 1 thread: %.3g ops per CPU-second, a bare loop of chained timer reads %.3g: the machine's part and the engine's together, not judged (the engine is, against the floor below); the median of the ratios of %d of %d alternating slice triples, those run without a context switch",
				vb.engine.OpsPerCPUSecond(), vb.bare, vb.clean, cpuRatePairs))
		add(fmt.Sprintf("engine_null_%dqp_ops_per_cpu_vs_floor", qps), vb.vsFloor, "x", ">= 0.9", vb.vsFloor >= 0.9,
			fmt.Sprintf("steady on null, 1 thread: %.3g ops per CPU-second, the floor of timing an operation %.3g: what the engine adds beyond what the machine charges; the median of the ratios of %d of %d alternating slice triples",
				vb.engine.OpsPerCPUSecond(), vb.floor, vb.clean, cpuRatePairs))
		unlessBusy(vb.clean, cpuRatePairs)
		if qps == 1 {
			add("engine_null_p50_per_timer_read", vb.p50PerRead, "x", "", true,
				fmt.Sprintf("p50 %d ns, one chained timer read of the bare loop beside it %.1f ns (alone, back to back: %.1f ns): the machine's part and the engine's together, not judged; the median of %d slice triples' ratios",
					vb.engine.P50NS, vb.readNS, timer, vb.clean))
			add("engine_null_p50_per_floor_p50", vb.p50PerFloor, "x", "<= 1.1", vb.p50PerFloor <= 1.1,
				fmt.Sprintf("p50 %d ns, the floor's p50 beside it %d ns; the median of %d slice triples' ratios", vb.engine.P50NS, vb.floorP50, vb.clean))
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
	var rig [2]*bench.Rig
	for i, qps := range []int{1, 16} {
		n++
		var err error
		if rig[i], err = bench.NewRig(filepath.Join(dir, fmt.Sprintf("engine-%d", n)), "steady", "sim", qps, verbs.Cost{}); err != nil {
			return nil, err
		}
		defer rig[i].Close()
		if err := rig[i].Run(calibrationSpan / 10); err != nil {
			return nil, err
		}
	}
	var ops [2]int64
	var wall [2]uint64
	var ratios []float64
	for range cpuRatePairs {
		var f [2]bench.Figures
		sw := verbs.ThreadSwitches()
		for i := range rig {
			var err error
			if f[i], err = rig[i].MeasureFor(calibrationSpan / cpuRatePairs); err != nil {
				return nil, err
			}
		}
		if verbs.ThreadSwitches() != sw {
			continue // the machine's slice as much as the engine's
		}
		for i := range rig {
			ops[i] += f[i].Ops
			wall[i] += f[i].WallNS
		}
		ratios = append(ratios, f[0].OpsPerSecond()/f[1].OpsPerSecond())
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
// With fewer than MinCleanShare of the pairs clean, the machine is
// too busy to judge.
const cpuRatePairs = 300

// vsBare is the engine against the bare loop and the operation's floor
// (engineVsBare).
type vsBare struct {
	engine       bench.Figures // operations and CPU time of the clean triples, their median p50
	bare         float64       // the bare loop's reads per CPU-second in them
	readNS       float64       // its wall time per read in them: one chained timer read
	floor        float64       // the floor's reads per CPU-second in them
	floorNS      float64       // its wall time per read
	floorP50     int64         // the median of its p50s
	ratio        float64       // the median of the triples' engine/bare ops per CPU-second ratios
	vsFloor      float64       // the same, engine/floor
	floorPerRead float64       // the median of the triples' floor/bare CPU time per read
	p50PerRead   float64       // the median of the triples' engine p50 per bare read
	p50PerFloor  float64       // the median of the triples' engine p50 per floor p50
	clean        int           // triples run without a context switch, of cpuRatePairs
}

// engineVsBare measures steady on null at qps QPs, one engine thread,
// against the bare loop (the timer alone) and the operation's floor (the
// timer around a null call, counted: bench.OpFloorLoop), in alternating
// triples of slices, and keeps the triples run without a context switch
// (cpuRatePairs). The floor tells the machine's part of the engine's cost
// from the engine's own: how much a call and a count cost beyond a timer
// read differs between machines far more than the engine's loop does.
func engineVsBare(dir string, qps int) (vsBare, error) {
	var vb vsBare
	rig, err := bench.NewRig(dir, "steady", "null", qps, verbs.Cost{})
	if err != nil {
		return vb, err
	}
	defer rig.Close()
	if err := rig.Run(calibrationSpan / 10); err != nil {
		return vb, err
	}
	fl := bench.NewOpFloor()
	if _, err := bench.OpFloorLoop(fl, calibrationSpan/cpuRatePairs); err != nil { // its counts paged in
		return vb, err
	}
	var bareReads, bareCPU, bareWall, floorReads, floorCPU, floorWall uint64
	var ratios, vsFloor, floorPerRead, perRead, perFloor []float64
	var p50s, floorP50s []float64
	for range cpuRatePairs {
		sw := verbs.ThreadSwitches()
		reads, cpu, wall, err := bench.BareLoop(calibrationSpan / cpuRatePairs)
		if err != nil {
			return vb, err
		}
		ff, err := bench.OpFloorLoop(fl, calibrationSpan/cpuRatePairs)
		if err != nil {
			return vb, err
		}
		f, err := rig.MeasureFor(calibrationSpan / cpuRatePairs)
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
		floorReads += uint64(ff.Ops)
		floorCPU += ff.CPUNS
		floorWall += ff.WallNS
		bareRate := float64(reads) / (float64(cpu) / 1e9)
		ratios = append(ratios, f.OpsPerCPUSecond()/bareRate)
		vsFloor = append(vsFloor, f.OpsPerCPUSecond()/ff.OpsPerCPUSecond())
		floorPerRead = append(floorPerRead, bareRate/ff.OpsPerCPUSecond())
		perRead = append(perRead, float64(f.P50NS)/(float64(wall)/float64(reads)))
		perFloor = append(perFloor, float64(f.P50NS)/float64(max(ff.P50NS, 1)))
		vb.engine.Ops += f.Ops
		vb.engine.CPUNS += f.CPUNS
		p50s = append(p50s, float64(f.P50NS))
		floorP50s = append(floorP50s, float64(ff.P50NS))
	}
	if vb.clean > 0 {
		// Every clean triple gave one of each.
		vb.engine.P50NS = int64(math.Round(stats.Median(p50s)))
		vb.floorP50 = int64(math.Round(stats.Median(floorP50s)))
		vb.bare = float64(bareReads) / (float64(bareCPU) / 1e9)
		vb.readNS = float64(bareWall) / float64(bareReads)
		vb.floor = float64(floorReads) / (float64(floorCPU) / 1e9)
		vb.floorNS = float64(floorWall) / float64(floorReads)
		vb.ratio, vb.vsFloor, vb.floorPerRead = stats.Median(ratios), stats.Median(vsFloor), stats.Median(floorPerRead)
		vb.p50PerRead, vb.p50PerFloor = stats.Median(perRead), stats.Median(perFloor)
	}
	return vb, nil
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
	rig, err := bench.NewRig(dir, workload, provider, qps, cost)
	if err != nil {
		return 0, 0, err
	}
	defer rig.Close()
	if err := rig.Run(calibrationSpan / 10); err != nil {
		return 0, 0, err
	}
	var timed, worked float64
	clean := 0
	for range coverageSlices {
		sw := verbs.ThreadSwitches()
		f, err := rig.MeasureFor(calibrationSpan / coverageSlices)
		if err != nil {
			return 0, 0, err
		}
		if verbs.ThreadSwitches() != sw || f.Coverage <= 0 {
			continue
		}
		clean++
		timed += float64(f.TimedNS)
		worked += float64(f.TimedNS) / f.Coverage
	}
	if worked == 0 {
		return 0, 0, nil
	}
	return timed / worked, clean, nil
}
