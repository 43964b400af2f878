package bench

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/workloads"
)

// kindAgg accumulates one op kind over threads.
type kindAgg struct {
	hist    *hdrhistogram.Histogram
	resp    *hdrhistogram.Histogram // response times, open loop only
	count   int64
	batches int64
	errors  int64
	errnos  map[string]int64
}

func (a *kindAgg) stats(seconds float64) results.OpStats {
	s := results.OpStats{Count: a.count, Batches: a.batches, Errors: a.errors, NS: results.Summarize(a.hist)}
	if a.resp != nil {
		r := results.Summarize(a.resp)
		s.ResponseNS = &r
	}
	if seconds > 0 {
		s.OpsPerSec = float64(a.count) / seconds
	}
	if len(a.errnos) > 0 {
		s.ErrnoCounts = a.errnos
	}
	return s
}

// aggregate adds a repetition's per-thread counts and its latency
// histograms into aggs.
func aggregate(aggs map[string]*kindAgg, rep *repOutcome) {
	get := func(kind string) *kindAgg {
		a := aggs[kind]
		if a == nil {
			a = &kindAgg{hist: results.NewHistogram(), errnos: map[string]int64{}}
			aggs[kind] = a
		}
		return a
	}
	for _, tr := range rep.threads {
		for kind, kr := range tr.Kinds {
			a := get(kind)
			a.count += kr.Count
			a.batches += kr.Batches
			a.errors += kr.Errors
			for name, n := range tr.Errnos[kind] {
				a.errnos[name] += n
			}
		}
	}
	for kind, h := range rep.hists {
		if base, ok := strings.CutSuffix(kind, results.ResponseSuffix); ok {
			a := get(base)
			if a.resp == nil {
				a.resp = results.NewHistogram()
			}
			a.resp.Merge(h)
			continue
		}
		get(kind).hist.Merge(h)
	}
}

// assemble fills the result's ops, repetitions, histograms and harness
// figures from the completed repetitions. A total histogram that cannot be
// encoded is an error of the run, as an interval's is (flushIntervalAt):
// result.json would otherwise lack latencies it claims to summarize.
func assemble(res *results.Result, done []*repOutcome, cfg Config) error {
	all := map[string]*kindAgg{}
	var wall float64
	for _, rep := range done {
		aggs := map[string]*kindAgg{}
		aggregate(aggs, rep)
		aggregate(all, rep)
		for _, kind := range slices.Sorted(maps.Keys(aggs)) {
			// The latencies arrived interval by interval, the counts at the
			// end: they must agree, or something was lost on the way.
			if a := aggs[kind]; a.hist.TotalCount() != a.count {
				res.Warnings = append(res.Warnings, warnf(results.WarnLatencyCount, rep.index+1, kind, "latencies were lost between the threads and the result, so the percentiles rest on fewer operations than the counts: a harness fault; report it with the run folder", "%d latencies for %d operations",
					a.hist.TotalCount(), a.count))
			}
		}
		secs := rep.wall.Seconds()
		wall += secs
		r := results.Repetition{Index: rep.index, Duration: results.Duration(rep.wall), Ops: map[string]results.OpStats{},
			StartSkewNS: rep.skew}
		for kind, a := range aggs {
			r.Ops[kind] = a.stats(secs)
		}
		if cfg.Workload.Mode == "rounds" && len(rep.threads) > 0 {
			r.Rounds = rep.threads[0].Rounds
		}
		res.Repetitions = append(res.Repetitions, r)
		res.Harness.StartSkewNS = max(res.Harness.StartSkewNS, rep.skew)
	}
	res.Warnings = append(res.Warnings, cpuWarnings(done, cfg)...)
	res.Warnings = append(res.Warnings, timingWarnings(done, cfg)...)
	// A kind whose operations must fail says with what, so a report tells
	// the intended failures from the unexpected ones (Errors).
	expect := map[string]string{}
	for _, ph := range cfg.Workload.Phases {
		if _, seen := expect[ph.Op]; !seen && !ph.ExpectOK() {
			expect[ph.Op] = ph.Expect
		}
	}
	if cfg.Workload.Mode == workloads.StormMode {
		expect[workloads.OpRegRetry] = "EINVAL"
		expect[results.OpModifyRaced] = "EINVAL"
		res.Storm = stormResult(done, cfg)
	}
	res.Histograms = map[string]string{}
	var encErr error
	for _, kind := range slices.Sorted(maps.Keys(all)) {
		a := all[kind]
		res.Ops[kind] = a.stats(wall)
		if e, ok := expect[kind]; ok {
			s := res.Ops[kind]
			s.Expect = e
			res.Ops[kind] = s
		}
		enc, err := encodeHistogram(a.hist)
		if err != nil {
			encErr = errors.Join(encErr, fmt.Errorf("encoding the total %s latencies (%d operations): %w", kind, a.hist.TotalCount(), err))
			continue
		}
		res.Histograms[kind] = enc
		if a.resp != nil {
			enc, err := encodeHistogram(a.resp)
			if err != nil {
				encErr = errors.Join(encErr, fmt.Errorf("encoding the total %s response times (%d operations): %w", kind, a.resp.TotalCount(), err))
				continue
			}
			res.Histograms[kind+results.ResponseSuffix] = enc
		}
	}
	harnessFigures(res, done)
	openLoopFigures(res, done, cfg, wall)
	if res.Workers == nil {
		res.Workers = []results.Worker{}
	}
	if res.Repetitions == nil {
		res.Repetitions = []results.Repetition{}
	}
	return encErr
}

// mergeWorkers appends the repetition's worker processes to the list.
func mergeWorkers(list []results.Worker, rep *repOutcome) []results.Worker {
	byThread := map[int]threadResult{}
	for _, tr := range rep.threads {
		byThread[tr.Thread] = tr
	}
	for _, w := range rep.workers {
		rw := results.Worker{Index: w.index, PID: w.pid, Threads: w.threads, Repetition: rep.index,
			Counts: map[string]int64{}, Exit: w.exitString()}
		if w.done != nil {
			rw.RSSKB, rw.PSSKB = w.done.RSSKB, w.done.PSSKB
			rw.PeakRSSKB, rw.PeakPSSKB = w.done.PeakRSSKB, w.done.PeakPSSKB
		}
		if w.state != nil {
			if ru, ok := w.state.SysUsage().(*syscall.Rusage); ok {
				rw.MaxRSSKB = ru.Maxrss
			}
			rw.CPUSeconds = (w.state.UserTime() + w.state.SystemTime()).Seconds()
		}
		pinned := false
		for i := 0; i < w.threads; i++ {
			g := w.index*w.threads + i
			tr, ok := byThread[g]
			cpu := -1
			if i < len(w.cpus) {
				cpu = w.cpus[i]
			}
			pinned = pinned || cpu >= 0
			tc := results.ThreadCounts{Thread: g, CPU: cpu, Counts: map[string]int64{}}
			if ok {
				tc.StartOffsetNS, tc.StartRunQueueNS = int64(tr.Started-rep.minStart), tr.StartRunQueueNS
				tc.TimerBeforeNS, tc.TimerAfterNS = tr.TimerBeforeNS, tr.TimerAfterNS
				if work := tr.working(); work > 0 {
					tc.Coverage = float64(tr.timed()) / float64(work)
				}
				if tr.GapNS > 0 {
					tc.MaxGap = &results.Gap{NS: tr.GapNS, Kind: tr.GapKind, Thread: tr.Thread, Repetition: rep.index, AtNS: tr.GapAtNS}
				}
				for kind, kr := range tr.Kinds {
					tc.Counts[kind] = kr.Count
					rw.Counts[kind] += kr.Count
					if kr.Errors > 0 {
						if rw.Errors == nil {
							rw.Errors = map[string]int64{}
						}
						rw.Errors[kind] += kr.Errors
					}
				}
			}
			rw.PerThread = append(rw.PerThread, tc)
		}
		if pinned {
			rw.CPUs = w.cpus
		}
		list = append(list, rw)
	}
	return list
}

// cpuWarnings says when the measurement did not have the CPUs it needed:
// more threads than CPUs, or (loop workloads) measured threads that were
// runnable but not running for much of their working time, by their run
// queue time: latencies then include time spent preempted. Time blocked
// on the device's locks or command queue is the device's, not the
// machine's, and never makes a run CPU-starved. Where schedstat is
// unreadable the workers' CPU time is held to their threads x the wall
// time, less those device waits.
func cpuWarnings(done []*repOutcome, cfg Config) []results.Warning {
	out := StartWarnings(cfg)
	total := cfg.Procs * cfg.Threads
	if cfg.Workload.Mode != "loop" {
		return out
	}
	// Threads can use at most one CPU each, and all CPUs together.
	usable := min(total, runtime.NumCPU())
	for _, rep := range done {
		var runq, work, device int64
		known := len(rep.threads) > 0
		for _, tr := range rep.threads {
			if tr.RunQueueNS == nil {
				known = false
				continue
			}
			runq += *tr.RunQueueNS
			work += tr.working()
			device += tr.DeviceLockNS + tr.CommandQueueNS
		}
		if known && work > 0 {
			// More threads than CPUs queue by design: each runs at most
			// usable/total of the time.
			share, limit := float64(runq)/float64(work), 1-0.75*float64(usable)/float64(total)
			if share > limit {
				out = append(out, warnf(results.WarnCPUStarved, rep.index+1, "", "the machine is busy, throughput is understated: run on an idle machine or with fewer --procs × --threads", "measured threads were runnable but not running for %.0f%% of their working time (run queue, limit %.0f%%); blocked on the device's locks or command queue %.0f%%",
					100*share, 100*limit, 100*float64(device)/float64(work)))
			}
			continue
		}
		var cpu float64
		for _, w := range rep.workers {
			if w.state != nil {
				cpu += (w.state.UserTime() + w.state.SystemTime()).Seconds()
			}
		}
		want := float64(usable)*(rep.wall+cfg.Warmup).Seconds() - time.Duration(device).Seconds()
		if want > 0.5 && cpu < 0.75*want {
			out = append(out, warnf(results.WarnCPUStarved, rep.index+1, "", "the machine is busy, throughput is understated: run on an idle machine or with fewer --procs × --threads", "workers got %.1f CPU-seconds of the %.1f their %d thread(s) could use (%.0f%%)",
				cpu, want, total, 100*cpu/want))
		}
	}
	return out
}

// timingWarnings says when a repetition was not timed as asked: its
// threads started further apart than results.StartSkewShare of its length,
// or (duration runs) its measured length departs from --duration by more
// than results.DurationDeparture.
func timingWarnings(done []*repOutcome, cfg Config) []results.Warning {
	var out []results.Warning
	for _, rep := range done {
		length := rep.wall
		if cfg.Duration > 0 {
			length = cfg.Duration
		}
		if length > 0 && float64(rep.skew) > results.StartSkewShare*float64(length) {
			fact := fmt.Sprintf("start skew %v is %.1f%% of its %v (limit %.0f%%)",
				time.Duration(rep.skew).Round(time.Microsecond), 100*float64(rep.skew)/float64(length), length.Round(time.Millisecond), 100*results.StartSkewShare)
			// Where the skew went: the last thread to start waiting for a
			// CPU (the machine's), or not (the harness's).
			if q := rep.lastStartRunQueue(); q >= int64(time.Microsecond) {
				fact += fmt.Sprintf(", %v of it the last thread's wait for a CPU", time.Duration(q).Round(time.Microsecond))
			}
			out = append(out, warnf(results.WarnStartSkew, rep.index+1, "", "its threads did not start together, some ran alone, so its figures mix loads: run again on a quieter machine", "%s", fact))
		}
		if cfg.Duration > 0 {
			if dev := float64(rep.wall-cfg.Duration) / float64(cfg.Duration); math.Abs(dev) > results.DurationDeparture {
				out = append(out, warnf(results.WarnDuration, rep.index+1, "", "ops/s and the timelines cover another span than asked (a stall at its start or stop): run again on a quieter machine", "measured %v, %+.1f%% from the requested %v (limit ±%.0f%%)",
					rep.wall.Round(time.Millisecond), 100*dev, cfg.Duration, 100*results.DurationDeparture))
			}
		}
	}
	return out
}

// lastStartRunQueue is how long the repetition's last thread to start
// waited for a CPU on its way to the start (threadResult.StartRunQueueNS).
func (rep *repOutcome) lastStartRunQueue() int64 {
	var last *threadResult
	for i := range rep.threads {
		if tr := &rep.threads[i]; last == nil || tr.Started > last.Started {
			last = tr
		}
	}
	if last == nil {
		return 0
	}
	return last.StartRunQueueNS
}

// working is the thread's measured wall time less its barrier waits: the
// time the harness had to itself, which coverage divides.
func (tr threadResult) working() int64 {
	if tr.Ended <= tr.Started {
		return 0
	}
	return int64(tr.Ended-tr.Started) - tr.WaitNS
}

// timed is the time the thread spent inside timed operations.
func (tr threadResult) timed() int64 {
	var sum int64
	for _, kr := range tr.Kinds {
		sum += kr.TimedNS
	}
	return sum
}

// Limits of the harness figures beyond which the engine warns.
const (
	// MinCoverage: below 90% of the working time timed, a stall has
	// a fair chance of falling between operations and showing nowhere.
	MinCoverage = 0.90
	// TimerDrift: the timer overhead measured after the runs departing
	// from the one before by more than this share (and 2 ns) means the
	// machine changed under the measurement (frequency, load, migration).
	TimerDrift = 0.25
)

// harnessFigures fills the timer overhead, coverage, gap and memory
// figures of res.Harness from the threads' and workers' reports, and
// warns when they say the measurement missed something.
func harnessFigures(res *results.Result, done []*repOutcome) {
	h := &res.Harness
	var pre, post, all []float64
	var work, timed int64
	var runq, devLock, cmdq int64
	runqKnown := true
	timedBy := map[string]int64{}
	minShare := math.Inf(1)
	open := false // an open loop's untimed stretches are in its response times
	for _, rep := range done {
		var mem results.Memory
		for _, w := range rep.workers {
			if w.done != nil {
				mem.RSSKB += w.done.RSSKB
				mem.PSSKB += w.done.PSSKB
				mem.PeakRSSKB += w.done.PeakRSSKB
				mem.PeakPSSKB += w.done.PeakPSSKB
			}
		}
		if mem.PSSKB > 0 && (h.Memory == nil || mem.PSSKB > h.Memory.PSSKB) {
			h.Memory = &mem
		}
		for _, tr := range rep.threads {
			open = open || tr.Open != nil
			if tr.TimerBeforeNS > 0 {
				pre = append(pre, tr.TimerBeforeNS)
			}
			if tr.TimerAfterNS > 0 {
				post = append(post, tr.TimerAfterNS)
			}
			wk := tr.working()
			if wk <= 0 {
				continue
			}
			work += wk
			devLock += tr.DeviceLockNS
			cmdq += tr.CommandQueueNS
			if tr.RunQueueNS != nil {
				runq += *tr.RunQueueNS
			} else {
				runqKnown = false
			}
			t := tr.timed()
			timed += t
			minShare = min(minShare, float64(t)/float64(wk))
			for kind, kr := range tr.Kinds {
				timedBy[kind] += kr.TimedNS
				if kr.MaxGapNS > 0 {
					if h.MaxGapNS == nil {
						h.MaxGapNS = map[string]int64{}
					}
					h.MaxGapNS[kind] = max(h.MaxGapNS[kind], kr.MaxGapNS)
				}
			}
			if tr.GapNS > 0 && (h.MaxGap == nil || tr.GapNS > h.MaxGap.NS) {
				h.MaxGap = &results.Gap{NS: tr.GapNS, Kind: tr.GapKind, Thread: tr.Thread, Repetition: rep.index, AtNS: tr.GapAtNS}
			}
		}
	}
	all = append(append(all, pre...), post...)
	if len(all) > 0 {
		to := &results.TimerOverhead{MedianNS: stats.Median(all), MinNS: slices.Min(all), MaxNS: slices.Max(all), Samples: len(all)}
		if len(pre) > 0 {
			to.BeforeNS = stats.Median(pre)
		}
		if len(post) > 0 {
			to.AfterNS = stats.Median(post)
		}
		h.TimerOverhead, h.TimerOverheadNS = to, to.MedianNS
		if to.BeforeNS > 0 && to.AfterNS > 0 {
			if d := math.Abs(to.AfterNS - to.BeforeNS); d > 2 && d > TimerDrift*to.BeforeNS {
				res.Warnings = append(res.Warnings, warnf(results.WarnTimerDrift, 0, "", "the machine changed under the measurement (its clock or its load), so early and late latencies are not alike: run again on an idle machine with a fixed clock (see the CPU check)", "timer overhead moved during the run: %.1fns before, %.1fns after (median of %d thread(s) each; all %.1f-%.1fns)",
					to.BeforeNS, to.AfterNS, len(pre), to.MinNS, to.MaxNS))
			}
		}
	}
	if work > 0 {
		c := &results.Coverage{Share: float64(timed) / float64(work), MinThreadShare: minShare, ByKind: map[string]float64{}}
		for kind, t := range timedBy {
			c.ByKind[kind] = float64(t) / float64(work)
		}
		h.Coverage = c
		h.Waits = &results.Waits{DeviceLockShare: float64(devLock) / float64(work), CommandQueueShare: float64(cmdq) / float64(work)}
		if runqKnown {
			share := float64(runq) / float64(work)
			h.Waits.RunQueueShare = &share
		}
		if c.Share < MinCoverage {
			res.Warnings = append(res.Warnings, warnf(results.WarnCoverage, 0, "", "the rest of the threads' working time was outside timed operations, "+untimedMeans(open), "coverage %.0f%% (least covered thread %.0f%%, limit %.0f%%)",
				100*c.Share, 100*c.MinThreadShare, 100*MinCoverage))
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(h.MaxGapNS)) {
		gap, s := h.MaxGapNS[kind], res.Ops[kind]
		if s.Count > 0 && gap > s.NS.P999 {
			where := ""
			if g := h.MaxGap; g != nil && g.Kind == kind && g.NS == gap {
				where = fmt.Sprintf(" (thread %d, repetition %d, %v after its start)", g.Thread, g.Repetition+1, sig3(g.AtNS))
			}
			severity := results.SeverityNotice
			if time.Duration(gap) >= UntimedStall {
				severity = results.SeverityWarning
			}
			res.Warnings = append(res.Warnings, results.NewWarning(results.WarnUntimedGap, severity, 0, kind,
				fmt.Sprintf("an untimed stretch of %v before one of its batches%s exceeds its service p99.9 %v",
					sig3(gap), where, sig3(s.NS.P999))).WithMeans(untimedMeans(open)))
		}
	}
}

// UntimedStall is the longest untimed stretch before a batch that is a
// notice, not a warning: shorter ones are the scheduler's and the
// timer's ordinary interruptions (a tick, a wake-up elsewhere), which
// every run on a shared kernel has; a millisecond is a stall worth
// rerunning for.
const UntimedStall = time.Millisecond

// untimedMeans says where a stall outside timed operations went, and what
// to do about it: a closed loop omits it from every latency (the next
// operation simply starts later), an open loop puts it in the response
// time of every operation due during it, as if the device had queued them.
func untimedMeans(open bool) string {
	if open {
		return "a stall there is in no service time but in the response time of every operation due during it, counted as if the device had queued them: if the stall is the machine's (or the harness's), the response times overstate the device; quiet the machine or --pin the threads and run again"
	}
	return "a stall there is in no latency (coordinated omission): the operations after it only started later; an open loop (--rate) would put it in the response times; quiet the machine or --pin the threads and run again"
}

// sig3 is ns as a duration rounded to 3 significant digits.
func sig3(ns int64) time.Duration {
	d := time.Duration(ns)
	unit := time.Duration(1)
	for v := ns; v >= 1000; v /= 10 {
		unit *= 10
	}
	return d.Round(unit)
}

// Saturation: an open loop whose thread was behind its schedule by more
// than the backlog limit for at least this share of its measured time did
// not keep up: its queue grew, and it measured a closed loop's latencies
// under that queue. The backlog at the end alone does not say it: one stall
// in the last moments (real-time throttling, a preemption) leaves the
// operations due during it unrun and the last ones far behind, however
// bounded the backlog was before. A backlog at the end beyond the limit is
// named in a warning all the same: the operations due in it never ran.
const (
	saturationShare   = 0.5
	saturationBacklog = 10 * time.Millisecond
)

// backlogLimit is how far behind its schedule a thread may be without its
// backlog counting against it: 10 ms, or a twentieth of a planned
// measurement of d when that is shorter (0: a count, no planned time).
func backlogLimit(d time.Duration) time.Duration {
	if d > 0 {
		return min(saturationBacklog, d/20)
	}
	return saturationBacklog
}

// openLoopFigures sums the threads' open loops into res.OpenLoop and says
// so in a warning when the device could not keep up, or when a stall at
// the end left operations unrun.
func openLoopFigures(res *results.Result, done []*repOutcome, cfg Config, wall float64) {
	rate := cfg.threadRate()
	if rate <= 0 {
		return
	}
	ol := &results.OpenLoop{Arrival: cfg.arrival(), Wait: cfg.openWait(host.StartRealTime()), RequestedOpsPerSec: rate * float64(cfg.Procs*cfg.Threads)}
	var late, ops int64
	for _, rep := range done {
		for _, tr := range rep.threads {
			if tr.Open == nil {
				continue
			}
			ol.Waits += tr.Open.Waits
			late += tr.Open.LateNS
			ol.WakeLateMaxNS = max(ol.WakeLateMaxNS, tr.Open.LateMaxNS)
			ol.BacklogEndNS = max(ol.BacklogEndNS, tr.Open.BehindNS)
			ol.BacklogMaxNS = max(ol.BacklogMaxNS, tr.Open.BehindMaxNS)
			ol.BacklogLimitNS = max(ol.BacklogLimitNS, tr.Open.LimitNS)
			// The share of the window OverNS is counted in: the thread's
			// own start and end bound another window (its schedule's first
			// start can precede its start), over which a thread behind
			// throughout showed more than 100%.
			window := tr.Open.SampledNS
			if window <= 0 && tr.Ended > tr.Started {
				window = int64(tr.Ended - tr.Started)
			}
			if window > 0 {
				ol.BacklogOverShare = max(ol.BacklogOverShare, float64(tr.Open.OverNS)/float64(window))
			}
		}
		for _, tr := range rep.threads {
			for _, kr := range tr.Kinds {
				ops += kr.Count
			}
		}
	}
	if ol.Waits > 0 {
		ol.WakeLateMeanNS = float64(late) / float64(ol.Waits)
	}
	if wall > 0 {
		ol.AchievedOpsPerSec = float64(ops) / wall
	}
	ol.Saturated = ol.BacklogOverShare >= saturationShare
	res.OpenLoop = ol
	limit, over := time.Duration(ol.BacklogLimitNS), 100*ol.BacklogOverShare
	end := time.Duration(ol.BacklogEndNS)
	switch {
	case ol.Saturated:
		res.Warnings = append(res.Warnings, warnf(results.WarnOpenLoopSaturated, 0, "", "it did not keep up, and the response times measure the queue; lower --rate (or, where the workers lacked a CPU, quiet the machine)", "open loop saturated: a thread was more than %v behind its schedule for %.0f%% of its measurement (the backlog %v at the end, at most %v; achieved %.3g ops/s of the %.3g requested)",
			limit, over, sig3(ol.BacklogEndNS), sig3(ol.BacklogMaxNS), ol.AchievedOpsPerSec, ol.RequestedOpsPerSec))
	case end > limit:
		res.Warnings = append(res.Warnings, warnf(results.WarnOpenLoopEndStall, 0, "", "the response times hold the stall but not the operations it left unrun; run again where the whole schedule must be measured", "open loop: the last operations began %v behind their intended starts, and about %.0f due before the end were not run (achieved %.3g ops/s of the %.3g requested); the backlog was beyond %v for only %.0f%% of the measurement, so this is a stall at the end (the machine, real-time throttling), not a run that did not keep up",
			sig3(ol.BacklogEndNS), end.Seconds()*rate, ol.AchievedOpsPerSec, ol.RequestedOpsPerSec, limit, over))
	}
}
