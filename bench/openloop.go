package bench

import (
	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/verbs"
)

// Arrivals of an open loop.
const (
	ArrivalFixed   = "fixed"   // one operation every 1/rate
	ArrivalPoisson = "poisson" // exponential gaps of mean 1/rate, seeded
)

// openLoop is a thread's schedule of intended starts, and what became of
// it. The schedule runs on whatever happens: a stall of the thread leaves
// the operations due during it behind, and their response times (from
// their intended starts) show the stall, as wrk2 does it. Its arrivals
// (verbs.Arrivals) are drawn in Go for a program run in ranges and in C
// by a ring (loopRepeat), from the same state.
type openLoop struct {
	// a.End is when the timed loop ends (the warm-up's or --duration's),
	// 0 when it ends by a count (--iterations, rounds): an arrival due at
	// or after it is not waited for, so a rate too low for the time asked
	// cannot make the run outlast it. The sustained backlog (the
	// saturation verdict's evidence) is a.OverNS: the time since the
	// measurement's start during which the thread was more than a.Limit
	// behind, sampled at the end of every program run or ring segment
	// (at least every --batch-time) and counted back to the previous
	// sample.
	a verbs.Arrivals

	first     uint64 // the first intended start of the measurement
	waits     uint64
	lateNS    uint64
	lateMaxNS uint64
	behindNS  uint64 // how far behind its intended start the last operation began
}

// How an open loop's measured threads wait for an intended start.
const (
	WaitSpin  = "spin"  // busy-wait: the thread never leaves its CPU
	WaitSleep = "sleep" // sleep to 50 µs before a far start, spin the rest
)

// openWait is how c's measured threads wait ("" for a closed loop). They
// spin when they leave at least one of the CPUs the run may use to the
// harness's other threads, and run at the ordinary policy (rt nil);
// otherwise they sleep, as spinning would take the CPU the harness or
// another measured thread needs. A sleeping thread's CPU goes to whatever
// is runnable, the harness's own threads among them, and the scheduler may let
// that run on after the thread's timer fires: in a 1-thread open loop on
// the 2-CPU VM a harness thread kept it 1 ms past its wake-up, and
// the mean response at ρ = 0.5 was +16% from M/D/1 (median of 20 runs,
// five over +45%) against +13% spinning. A real-time thread preempts the
// harness's at once, so it sleeps.
func (c *Config) openWait(rt *host.RTSched) string {
	if c.threadRate() <= 0 {
		return ""
	}
	if rt == nil && c.Procs*c.Threads < len(host.AllowedCPUs()) {
		return WaitSpin
	}
	return WaitSleep
}

func newOpenLoop(cfg *workerConfig, g int) *openLoop {
	return &openLoop{a: verbs.NewArrivals(1e9/cfg.Rate, cfg.Arrival == ArrivalPoisson,
		uint64(cfg.Seed), 0x9e3779b97f4a7c15^uint64(g))}
}

// begin starts the schedule at t0 and forgets what came before (the
// warm-up's).
func (o *openLoop) begin(t0 uint64) {
	a := &o.a
	a.Next, a.Frac, a.End, a.Scheduled = t0, 0, 0, 0
	a.Mark, a.OverNS, a.BehindMax = t0, 0, 0
	o.first = t0
	o.waits, o.lateNS, o.lateMaxNS, o.behindNS = 0, 0, 0, 0
}

// sampled is the window the sustained backlog (a.OverNS) is counted in:
// from the measurement's first intended start to the last sample.
func (o *openLoop) sampled() uint64 {
	if o.a.Mark < o.first {
		return 0
	}
	return o.a.Mark - o.first
}

// over says whether the next arrival is due at or after the loop's end.
func (o *openLoop) over() bool { return o.a.Over() }

// schedule writes the intended starts of steps [a, b), stopping after the
// first one due more than window after now (or after the schedule's next
// start, when it is ahead), and before the first one due at the loop's
// end, and returns the end of what it scheduled (a: nothing is due before
// the end).
func (o *openLoop) schedule(start []uint64, a, b int, window uint64) int {
	limit := max(o.a.Next, verbs.Now()) + window
	for i := a; i < b; i++ {
		if o.a.Over() {
			b = i
			break
		}
		start[i] = o.a.Next
		o.a.Advance()
		if o.a.Next > limit {
			b = i + 1
		}
	}
	return b
}

// ran adds a program run (or a ring's segments, whose backlog the ring
// sampled itself: sample false) that ended at now: its waits and backlog.
func (o *openLoop) ran(st *verbs.ProgramStats, now uint64, sample bool) {
	o.waits += st.Waits
	o.lateNS += st.LateNS
	o.lateMaxNS = max(o.lateMaxNS, st.LateMaxNS)
	o.behindNS = st.BehindNS
	if sample {
		o.a.Sample(st.BehindNS, now)
	}
}
