package verbs

import (
	"cmp"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// DestroyCheck is what a step expects of an unreg's destroy flag, where the
// provider reports it (sim); other providers cannot tell and pass.
type DestroyCheck uint8

const (
	CheckNone      DestroyCheck = iota
	CheckDestroyed              // the last unreg: it must destroy the QP
	CheckKept                   // any other unreg: it must not
)

// Step is one operation of a Program. Its layout is C's struct xb_step
// (xb.h); TestStepLayout holds them together.
type Step struct {
	// QPN is the QP the step works on, unless Back is set. A create
	// writes the new QP number here.
	QPN uint32
	// Expect is the errno the operation must return, 0 for success.
	Expect uint16
	Op     uint8 // an Op
	Check  DestroyCheck
	// Back != 0 takes the QP from the step Back places earlier, a create
	// in the same program: "create, unreg" needs no Go in between.
	Back uint32
	// Tag is the caller's (the engine keeps its op kind index here); the
	// C loop ignores it.
	Tag uint32
}

// Program is a batch of operations built ahead of time and run by one C
// loop in one cgo call (Domain.RunProgram): operations of any kind, on any
// QP, in any order, each with the outcome it must have and, in an open
// loop, the time it is meant to start. Its length is the caller's choice,
// independent of the QP count, so the per-call cost of Go and cgo is spread
// over as many operations as the caller wants; a program can be built once
// and run many times, whole or in ranges.
//
// The C loop records as it goes: each step's latency is counted in the
// histogram of its tag (Rec), and only a step whose outcome differs from
// its expectation leaves its errno behind, so nothing per operation is
// left for Go to fold afterwards.
//
// Build one with NewProgram, fill Steps (and Start), point Rec at the
// histograms, run it with RunProgram. Nothing in a program's run
// allocates.
//
// Extending: a new operation kind is a new Op value handled in the C loop
// (xb_run_program in batch.c) and in the providers' xb_ops tables.
type Program struct {
	Steps []Step
	// Start holds intended start times (CLOCK_MONOTONIC ns, as Now) in an
	// open loop; nil in a closed loop. A step never begins before its
	// start; if the loop is behind, it begins at once.
	Start []uint64
	// Rec is where the C loop counts the steps' latencies, by tag.
	Rec Recording
	// NS and Resp, when not nil (the caller allocates them, indexed like
	// Steps), also get each step's service and response time.
	NS, Resp []uint64

	fails []Failure // room for one per step
	nfail int       // fails[:nfail] are the unexpected outcomes, by step
}

// Recording is where a program's steps are counted, by tag: tag t's
// service times in Service[t*Buckets : (t+1)*Buckets], in the layout of
// xb_bucket_index (the project's HDR histograms; bench keeps the same
// index function), its response times from the intended starts likewise
// in Response (open loop), its step count in Count[t] and the sum of its
// service times in SumNS[t]. The C loop adds; the caller reads and clears.
// A zero Recording records nothing.
type Recording struct {
	Buckets  int
	Service  []int64
	Response []int64 // nil: response times are not counted
	Count    []uint64
	SumNS    []uint64
}

// Tags is how many tags r records.
func (r *Recording) Tags() int { return len(r.Count) }

// Failure is a step whose outcome differed from its expectation: its
// index and status word (errno in the low 16 bits, destroy flags above).
// Its layout is C's struct xb_fail.
type Failure struct {
	Step   uint32
	Status uint32
}

// ProgramStats is what RunProgram adds up over the steps it ran.
type ProgramStats struct {
	Unexpected uint64 // steps whose errno or destroy flag differs from Expect/Check
	Waits      uint64 // steps that waited for their intended start
	WaitNS     uint64 // time spent in those waits, inside no operation
	LateNS     uint64 // sum of wake-up lateness after the waits
	LateMaxNS  uint64 // the largest wake-up lateness
	BehindNS   uint64 // how late the last step began after its intended start
	// A ring's untimed stretches inside the call, in no step and no wait
	// (its deck's turns): their sum, the longest, and when it began.
	UntimedNS, UntimedMaxNS, UntimedMaxAt uint64
	// EndNS is the clock at the last step's end (at the call's start when
	// no step ran): the way back to Go lies after it, in the next call's
	// untimed stretch or after the measurement.
	EndNS uint64
}

// NewProgram allocates a program of n steps; open adds the intended start
// times of an open loop.
func NewProgram(n int, open bool) *Program {
	p := &Program{Steps: make([]Step, n), fails: make([]Failure, max(n, 1))}
	if open {
		p.Start = make([]uint64, n)
	}
	return p
}

// Len is the program's capacity in steps.
func (p *Program) Len() int { return len(p.Steps) }

// Failures are the steps of the last runs whose outcomes differed from
// their expectations, in step order. Running steps from off on forgets
// those at off and after.
func (p *Program) Failures() []Failure { return p.fails[:p.nfail] }

// forgetFrom drops the failures of steps i and after: their outcomes are
// the next run's to tell.
func (p *Program) forgetFrom(i int) {
	p.nfail, _ = slices.BinarySearchFunc(p.fails[:p.nfail], uint32(i), func(f Failure, i uint32) int { return cmp.Compare(f.Step, i) })
}

// failure is step i's entry in Failures, or nil.
func (p *Program) failure(i int) *Failure {
	f := p.fails[:p.nfail]
	j, ok := slices.BinarySearchFunc(f, uint32(i), func(f Failure, i uint32) int { return cmp.Compare(f.Step, i) })
	if !ok {
		return nil
	}
	return &f[j]
}

// Errno is the errno of step i in its last run, 0 on success: the
// expected one unless it is among Failures.
func (p *Program) Errno(i int) syscall.Errno {
	if f := p.failure(i); f != nil {
		return syscall.Errno(f.Status & statusErrnoMask)
	}
	return syscall.Errno(p.Steps[i].Expect)
}

// Unexpected says whether step i's outcome in its last run differed from
// its expectation, as the C loop found it.
func (p *Program) Unexpected(i int) bool { return p.failure(i) != nil }

// Destroyed says what an unexpected unreg step i did to its QP (whether
// the provider knows or not); for a step with the expected outcome it is
// what Check asked for.
func (p *Program) Destroyed(i int) Destroyed {
	if f := p.failure(i); f != nil {
		return destroyedOf(f.Status)
	}
	switch p.Steps[i].Check {
	case CheckDestroyed:
		return WasDestroyed
	case CheckKept:
		return NotDestroyed
	}
	return DestroyUnknown
}

// RunProgram runs steps [off, off+n) of p in one call into C and adds
// what happened to st; the steps' latencies are counted in p.Rec. A step
// whose QP number exceeds 24 bits, or whose tag Rec does not record, fails
// with EINVAL without reaching the provider. The error is only for misuse:
// a closed domain, a range outside the program, a Recording whose arrays
// do not match its tags and buckets. A step of an unknown op, or whose
// Back reaches before the program's first step, fails with EINVAL (it is
// not checked here: that would cost Go time per operation).
func (m *Domain) RunProgram(p *Program, off, n int, st *ProgramStats) error {
	if err := m.checkRun(p, off, n); err != nil || n == 0 {
		return err
	}
	p.forgetFrom(off)
	cRunProgram(m.dev.ops, m.handle, p, off, n, st, nil)
	return nil
}

// checkRun is what RunProgram and RepeatProgram refuse: a closed domain,
// a range outside p, a Recording whose arrays do not match.
func (m *Domain) checkRun(p *Program, off, n int) error {
	if m.closed {
		return ErrClosed
	}
	l := len(p.Steps)
	r := &p.Rec
	tags := r.Tags()
	if off < 0 || n < 0 || off+n > l || len(p.fails) < l ||
		(p.NS != nil && len(p.NS) < l) ||
		(p.Start != nil && (len(p.Start) < l || (p.Resp != nil && len(p.Resp) < l))) {
		return fmt.Errorf("%w: steps [%d, %d) of a program of %d", syscall.EINVAL, off, off+n, l)
	}
	if tags > 0 && (r.Buckets < 1 || len(r.Service) != tags*r.Buckets || len(r.SumNS) != tags ||
		(r.Response != nil && len(r.Response) != tags*r.Buckets)) {
		return fmt.Errorf("%w: a recording of %d tags x %d buckets with %d service, %d response counts and %d sums",
			syscall.EINVAL, tags, r.Buckets, len(r.Service), len(r.Response), len(r.SumNS))
	}
	return nil
}

// Repeat runs a program as a ring (RepeatProgram): a program that leaves
// the registrations as it found them, run again and again in one call, in
// segments of about Poll each, until the caller's next interval, a step
// count, an unexpected outcome or a stop, each looked at between segments.
// One return into Go per interval, instead of one per program, matters: a
// cgo call that lasts over ~150 µs costs ~10 µs to get back into Go, time
// in no operation.
type Repeat struct {
	// Until ends the call at the first segment's end at or past it
	// (CLOCK_MONOTONIC ns, as Now).
	Until uint64
	// MaxSteps, if not 0, ends the call after as many steps.
	MaxSteps uint64
	// Stop and Abort, when not nil, end the call once either is set
	// (usually words in memory other processes share).
	Stop, Abort *uint32
	// Poll is about how long a segment lasts: how late the call may
	// notice its limits.
	Poll time.Duration
	// Pos is where the ring goes on (in) and where it stopped (out):
	// within [off, off+n], where off+n is off again.
	Pos int
	// Steps and Laps are what the last call ran; a lap is a wrap from the
	// ring's last step to its first.
	Steps, Laps uint64
	// Begin, if not 0, is the measurement's start (as Now): the call
	// waits for it in C (xb_wait_begin: sleeping, then spinning its last
	// 2 ms, seeing Stop and Abort) before the first step, and runs
	// nothing if stopped first. The thread enters C before the start,
	// so no return into Go (a sleep's wake-up, the runtime taking the
	// thread's P back, a preemption handing it around) lies between the
	// start and the first operation.
	Begin uint64
	// Begun is when the first step could start: the clock at the end of
	// the wait for Begin, or at the call's entry without one; 0 when the
	// call was stopped before Begin.
	Begun uint64
	// RunqFD, with Begin, is the calling thread's open
	// /proc/thread-self/schedstat (0: none, as stdin is never that): the
	// call then reads its run-queue time before the wait and at Begin,
	// into RunQueueAtBegin (ns, as of Begin) and LateRunQueue (how much of
	// its lateness past Begin it spent runnable but not running: the
	// machine's part), both -1 when unread.
	RunqFD                        int
	RunQueueAtBegin, LateRunQueue int64
	// Deck, when not nil, is where the ring counts and hands its
	// intervals over itself (see Deck): the call does not end at an
	// interval's end, so the thread does not come back into Go there.
	Deck *Deck
	// Open, when not nil, makes the ring an open loop: the C loop draws
	// each segment's intended starts from it into the program's Start
	// just before the segment runs, samples the backlog after it, and
	// ends before the first arrival due at or after Open.End. The
	// schedule, response times and waits are those of RunProgram with
	// Start filled from the same Arrivals; only the program's returns into
	// Go, once a millisecond or so, are gone.
	Open *Arrivals

	words [12]uint64 // struct xb_repeat's numbers, as call_run_program passes them
}

// Deck is a ring's interval sets (struct xb_deck): Sets() sets of Stride
// counts each in Counts, a set laid out as a Recording's Service, then
// its Response in an open loop; Ctl the words (DeckCur, ..., and per set
// DeckState, ...) shared between the ring, which counts in the current
// set and, at the first segment's end at or past Ctl[DeckNext], ends it
// and goes on in the next set if that is free, and the reader (a
// goroutine) that takes an ended set, clears it and frees it. A set's
// DeckState is written and read atomically (atomic.StoreUint64 and
// LoadUint64 here), its other words before it is written and after it is
// read. The ring wakes no reader: the reader looks when an interval is
// due to end (Ctl[DeckNext], which the ring's Go side writes atomically).
type Deck struct {
	Ctl    []uint64
	Counts []int64
	Stride int
}

// The words of Deck.Ctl and a set's states, as xb.h numbers them
// (TestDeckLayout holds the two together).
const (
	DeckCur, DeckNext, DeckLen, DeckStart, DeckSeq, DeckBegun = 0, 1, 2, 3, 4, 5
	// Set k's words are at DeckSets + k*DeckWords + DeckState, ....
	DeckSets, DeckWords                      = 8, 4
	DeckState, DeckIndex, DeckEnd, DeckOrder = 0, 1, 2, 3
	DeckFree, DeckCounting, DeckEnded        = 0, 1, 2
)

// NewDeck is a deck of n sets of stride counts, set 0 counting from the
// interval [start, start+length), the others free.
func NewDeck(n, stride int, start uint64, length time.Duration) *Deck {
	d := &Deck{Ctl: make([]uint64, DeckSets+n*DeckWords), Counts: make([]int64, n*stride), Stride: stride}
	d.Ctl[DeckNext], d.Ctl[DeckLen], d.Ctl[DeckStart] = start+uint64(length), uint64(length), start
	d.Ctl[DeckSets+DeckState] = DeckCounting
	return d
}

// Sets is how many sets the deck holds.
func (d *Deck) Sets() int { return (len(d.Ctl) - DeckSets) / DeckWords }

// Word is set k's word w.
func (d *Deck) Word(k, w int) *uint64 { return &d.Ctl[DeckSets+k*DeckWords+w] }

// Set is set k's counts.
func (d *Deck) Set(k int) []int64 { return d.Counts[k*d.Stride : (k+1)*d.Stride : (k+1)*d.Stride] }

// check says what is wrong with d as a deck for p's recording.
func (d *Deck) check(p *Program) error {
	r := &p.Rec
	need := len(r.Service) + len(r.Response)
	n := d.Sets()
	if n < 2 || len(d.Ctl) != DeckSets+n*DeckWords || d.Stride < need || len(d.Counts) != n*d.Stride ||
		d.Ctl[DeckCur] >= uint64(n) || d.Ctl[DeckLen] == 0 {
		return fmt.Errorf("%w: a deck of %d words, %d counts, stride %d for a recording of %d", syscall.EINVAL, len(d.Ctl), len(d.Counts), d.Stride, need)
	}
	return nil
}

// RepeatProgram runs steps [off, off+n) of p as a ring from rep.Pos (see
// Repeat; keep one across calls: cgo makes it escape to the heap), in one
// call into C, and adds what happened to st; the steps'
// latencies are counted in p.Rec as by RunProgram. It returns at the end
// of a segment in which a step had an unexpected outcome: Failures then
// holds the steps of the last lap from off. The steps must not create QPs
// (a lap would reuse what the one before created).
func (m *Domain) RepeatProgram(p *Program, off, n int, rep *Repeat, st *ProgramStats) error {
	if err := m.checkRun(p, off, n); err != nil {
		return err
	}
	if n == 0 || rep.Pos < off || rep.Pos > off+n {
		return fmt.Errorf("%w: a ring of steps [%d, %d) from step %d", syscall.EINVAL, off, off+n, rep.Pos)
	}
	if rep.Open != nil && p.Start == nil {
		return fmt.Errorf("%w: an open ring of a program without intended starts", syscall.EINVAL)
	}
	if rep.Deck != nil {
		if err := rep.Deck.check(p); err != nil {
			return err
		}
	}
	if rep.Pos == off+n {
		rep.Pos = off
	}
	rep.setWords(0)
	p.forgetFrom(rep.Pos)
	cRunProgram(m.dev.ops, m.handle, p, off, n, st, rep)
	rep.getWords()
	return nil
}

// RunProgramAt is RunProgram whose first step does not start before
// begin.Begin: the call waits for it in C as a ring's does (see Repeat:
// Begin, Stop and Abort, RunqFD in; Begun, RunQueueAtBegin and
// LateRunQueue out; the rest unused), so a program that is no ring
// reaches its measurement's start with no return into Go between. Stopped
// before the start (Begun 0), it runs nothing.
func (m *Domain) RunProgramAt(p *Program, off, n int, st *ProgramStats, begin *Repeat) error {
	if err := m.checkRun(p, off, n); err != nil || n == 0 {
		return err
	}
	b := Repeat{Begin: begin.Begin, RunqFD: begin.RunqFD, Stop: begin.Stop, Abort: begin.Abort}
	b.setWords(1)
	p.forgetFrom(off)
	cRunProgram(m.dev.ops, m.handle, p, off, n, st, &b)
	b.getWords()
	begin.Begun, begin.RunQueueAtBegin, begin.LateRunQueue = b.Begun, b.RunQueueAtBegin, b.LateRunQueue
	return nil
}

// AwaitBegin waits in C for begin.Begin as RunProgramAt does, and runs
// nothing (Begin, Stop and Abort, RunqFD in; Begun, RunQueueAtBegin and
// LateRunQueue out): the way to its measurement's start of a thread whose
// first act is no program (rounds begin with a barrier). Sleeping to the
// start in Go instead, a thread came back into the runtime up to 2 ms
// late on a quiet machine, with no run-queue reading to tell the
// machine's part. Halted before the start, Begun is 0.
func AwaitBegin(begin *Repeat) {
	fd := int64(begin.RunqFD)
	if begin.RunqFD <= 0 {
		fd = -1
	}
	begin.Begun, begin.RunQueueAtBegin, begin.LateRunQueue = cAwaitBegin(begin.Begin, fd, begin.Stop, begin.Abort)
}

// setWords lays rep out as call_run_program reads it; once makes the
// call no ring (RunProgramAt).
func (rep *Repeat) setWords(once uint64) {
	rep.words = [12]uint64{rep.Until, uint64(max(rep.Poll, 0)), rep.MaxSteps, uint64(rep.Pos), 6: rep.Begin, 8: uint64(int64(rep.RunqFD)), 11: once}
	if rep.Begin == 0 || rep.RunqFD <= 0 {
		rep.words[8] = ^uint64(0) // -1: none
	}
}

// getWords takes what the call wrote.
func (rep *Repeat) getWords() {
	rep.Pos, rep.Steps, rep.Laps, rep.Begun = int(rep.words[3]), rep.words[4], rep.words[5], rep.words[7]
	rep.RunQueueAtBegin, rep.LateRunQueue = int64(rep.words[9]), int64(rep.words[10])
}

// HistogramIndex is the C loop's index of latency v in a tag's n counts
// (xb_bucket_index); bench computes the same in Go, and its tests hold
// the two together.
func HistogramIndex(v uint64, n int) int { return cBucketIndex(v, n) }
