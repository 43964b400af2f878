package bench

import (
	"math/rand/v2"

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
// their intended starts) show the stall, as wrk2 does it.
type openLoop struct {
	period  float64 // mean ns between intended starts
	poisson bool
	rng     *rand.Rand
	next    uint64  // the intended start of the next operation
	frac    float64 // the fixed schedule's fraction of a ns carried over
	// end is when the timed loop ends (the warm-up's or --duration's),
	// 0 when it ends by a count (--iterations, rounds): an arrival due at
	// or after it is not waited for, so a rate too low for the time asked
	// cannot make the run outlast it.
	end uint64

	first     uint64 // the first intended start of the measurement
	scheduled int64
	waits     uint64
	lateNS    uint64
	lateMaxNS uint64
	behindNS  uint64 // how far behind its intended start the last operation began
	behindMax uint64
	// The sustained backlog (the saturation verdict's evidence): the time
	// since the measurement's start during which the thread was more than
	// limit behind, sampled at the end of every program run (at least
	// every --batch-time) and counted back to the previous sample.
	limit  uint64
	mark   uint64
	overNS uint64
}

func newOpenLoop(cfg *workerConfig, g int) *openLoop {
	return &openLoop{period: 1e9 / cfg.Rate, poisson: cfg.Arrival == ArrivalPoisson,
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15^uint64(g)))}
}

// begin starts the schedule at t0 and forgets what came before (the
// warm-up's).
func (o *openLoop) begin(t0 uint64) {
	o.next, o.first, o.frac, o.end = t0, t0, 0, 0
	o.scheduled, o.waits, o.lateNS, o.lateMaxNS, o.behindNS, o.behindMax = 0, 0, 0, 0, 0, 0
	o.mark, o.overNS = t0, 0
}

func (o *openLoop) advance() {
	gap := o.period
	if o.poisson {
		gap = o.rng.ExpFloat64() * o.period
	}
	gap += o.frac
	whole := uint64(gap)
	o.frac = gap - float64(whole)
	o.next += whole
}

// over says whether the next arrival is due at or after the loop's end.
func (o *openLoop) over() bool { return o.end > 0 && o.next >= o.end }

// schedule writes the intended starts of steps [a, b), stopping after the
// first one due more than window after now (or after the schedule's next
// start, when it is ahead), and before the first one due at the loop's
// end, and returns the end of what it scheduled (a: nothing is due before
// the end).
func (o *openLoop) schedule(start []uint64, a, b int, window uint64) int {
	limit := max(o.next, verbs.Now()) + window
	for i := a; i < b; i++ {
		if o.over() {
			b = i
			break
		}
		start[i] = o.next
		o.advance()
		if o.next > limit {
			b = i + 1
		}
	}
	o.scheduled += int64(b - a)
	return b
}

// ran adds a program run that ended at now: its waits and backlog.
func (o *openLoop) ran(st *verbs.ProgramStats, now uint64) {
	o.waits += st.Waits
	o.lateNS += st.LateNS
	o.lateMaxNS = max(o.lateMaxNS, st.LateMaxNS)
	o.behindNS = st.BehindNS
	o.behindMax = max(o.behindMax, st.BehindNS)
	if st.BehindNS > o.limit && now > o.mark {
		o.overNS += now - o.mark
	}
	o.mark = max(o.mark, now)
}
