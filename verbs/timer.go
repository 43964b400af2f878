package verbs

import "time"

// TimerName names the clock every duration is measured with. All processes
// share it, so it also times the start deadline of a run.
const TimerName = "clock_monotonic"

// clockBase pairs a reading of CLOCK_MONOTONIC taken in C with Go's own
// monotonic clock, which on Linux is the same CLOCK_MONOTONIC read through
// the vDSO: Now then costs no cgo call, yet agrees with what C measures
// and with every other process.
var clockBase = func() (b struct {
	c uint64
	g time.Time
}) {
	best := ^uint64(0)
	for range 16 { // keep the tightest bracket: the pairing error is half its width
		c1 := nowNS()
		g := time.Now()
		c2 := nowNS()
		if c2-c1 < best {
			best, b.c, b.g = c2-c1, c1+(c2-c1)/2, g
		}
	}
	return b
}()

// Now reads the clock RunBatch times with, in nanoseconds, without a cgo
// call.
func Now() uint64 { return clockBase.c + uint64(time.Since(clockBase.g)) }

// TimerOverheadNS measures the cost of one timer read as RunBatch chains
// them, in nanoseconds with the fraction kept: the median over rounds of
// back-to-back reads. Every chained duration includes about this much of
// the clock itself.
func TimerOverheadNS() float64 { return timerOverheadNS() }

// BareTimerLoop runs the floor the hot path is held to, in one cgo call:
// len(ns) chained timer reads, each duration stored in ns, and nothing else
// (no operation, no outcome).
func BareTimerLoop(ns []uint64) {
	if len(ns) > 0 {
		cBareTimerLoop(ns)
	}
}

// OpFloor is a histogram BareOpLoop counts into, in the layout the
// hot loop's are (HistogramIndex), with its count and sum.
type OpFloor struct {
	Counts     []int64
	Count, Sum uint64
}

// NewOpFloor is an empty OpFloor of nbuckets buckets.
func NewOpFloor(nbuckets int) *OpFloor {
	return &OpFloor{Counts: make([]int64, nbuckets)}
}

// BareOpLoop runs the floor of any loop that times operations behind a
// provider's table and records them, in one cgo call: n chained timer
// reads, each around one call of the null provider's reg, each duration
// counted into f as the hot loop counts an operation's, and nothing else
// (no program, no outcome). What it costs beyond BareTimerLoop is what the
// machine charges for a call and a count; what the hot path costs beyond
// it is the engine's.
func BareOpLoop(f *OpFloor, n int) {
	if n > 0 && len(f.Counts) > 0 {
		cBareOpLoop(f.Counts, &f.Count, &f.Sum, n)
	}
}

// SpinWaits sets how the calling OS thread waits for an open loop's
// intended starts from now on: spin true busy-waits every wait, so the
// thread never leaves its CPU; false sleeps to a start more than 50 µs
// ahead and spins the rest. A sleeping thread's CPU goes to whatever else
// is runnable, and the scheduler may let that finish its slice before the
// thread wakes, late, with every arrival due meanwhile waiting. The caller
// must be locked to its OS thread.
func SpinWaits(spin bool) { setSpinWaits(spin) }
