package bench

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/host"
	"github.com/xrcbench/xrcbench/internal/leaks"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// Names, beside errno names, of wrong outcomes that carry no errno: an
// unreg whose destroy flag contradicts the phase (destroying on a non-last
// unreg, not destroying on the last), and a success where the phase
// expects a failure.
const (
	errUnexpectedDestroy = "unexpected_destroy"
	errNotDestroyed      = "not_destroyed"
	errUnexpectedSuccess = "unexpected_success"
	// ... and the registration could not be dropped again: it is held
	// until the thread's registrant closes, and may leak past the run.
	errUnexpectedSuccessKept = "unexpected_success_kept"
)

// dropUnexpected drops a registration that should not exist; tests replace
// it to make the drop fail.
var dropUnexpected = func(d *verbs.Domain, qpn uint32) error {
	_, err := d.Unreg(qpn)
	return err
}

// kindRec is one op kind's recording in one thread. The hot path adds one
// count per operation to iv, a bare array in the layout of the project's
// HDR histograms (see record.go), a window on the set of the thread's
// deck counting now; once per interval the deck turns to a clear set and
// the ended one goes, through the thread's flusher (flush.go), to the
// coordinator as a real histogram. The coordinator merges the intervals
// into the timelines and the totals, so a thread holds its deck's four
// sets, whatever the run length.
type kindRec struct {
	kind    string
	iv      []int64
	ivResp  []int64 // response times from the intended starts (open loop only)
	ivN     int64
	count   int64
	batches int64 // RunBatch calls: count/batches is the batch size actually run
	errors  int64
	errnos  map[string]int64
	shown   int64 // errors already sent with an interval (live progress)
	timedNS int64 // the sum of its latencies: time inside timed operations
	maxGap  int64 // the longest untimed stretch before one of its batches
}

// newKindRec records kind into iv (histCounts long), and, in an open
// loop, response times into ivResp (nil in a closed loop).
func newKindRec(kind string, iv, ivResp []int64) *kindRec {
	return &kindRec{kind: kind, iv: iv, ivResp: ivResp, errnos: map[string]int64{}}
}

func (k *kindRec) reset() {
	clear(k.iv)
	clear(k.ivResp)
	k.ivN, k.count, k.batches, k.errors, k.shown, k.timedNS, k.maxGap = 0, 0, 0, 0, 0, 0, 0
	clear(k.errnos)
}

// endInterval clears iv for the next interval.
func (k *kindRec) endInterval() {
	if k.ivN != 0 {
		clear(k.iv)
		clear(k.ivResp)
		k.ivN = 0
	}
}

func (k *kindRec) fail(name string) {
	k.errors++
	k.errnos[name]++
}

// phaseRT is a phase ready to run: its op and expectation resolved.
type phaseRT struct {
	workloads.Phase
	op        verbs.Op
	rec       *kindRec
	kindIdx   int           // rec's index in thread.recs: the steps' tag
	expect    syscall.Errno // 0: must succeed
	checkLast int           // +1: must destroy, -1: must not, 0: no check
}

// thread is one measured registrant: one goroutine locked to one OS
// thread, with its own device context and domain handle.
type thread struct {
	cfg    *workerConfig
	spec   *workloads.Spec
	g      int // global thread index
	n      int // total threads
	q      int // QPs per thread (loop per_thread) or per round
	shm    *shm
	dev    *verbs.Device
	dom    *verbs.Domain
	prog   *progRT
	open   *openLoop // nil: a closed loop
	phases []*phaseRT
	modify *phaseRT // the creator's move of its new QPs out of RESET; nil at --qp-state reset
	recs   []*kindRec
	// the kinds' interval counts, kind after kind: recs[i].iv and ivResp
	// are windows on these
	ivAll, ivRespAll []int64
	flush            *flusher // encodes and sends the ended intervals; nil until the first
	cpu              int
	order            []int      // slot order, a per-thread permutation from the seed
	slots            []uint32   // QP number per slot (loop mode)
	held             []bool     // this registrant is registered with the slot's QP
	created          *leaks.Set // every QP number it created, for the leak probe; nil when not probed
	storm            *stormRank // a storm's rank (mode storm), else nil

	// measurement
	measuring bool
	passLimit int64  // passes to run in loop mode; 0: until done says so
	passStart uint64 // when the current pass began
	loopEnd   uint64 // when loop's done says so by the clock, if it does (0: not)
	ivStart   uint64 // CLOCK_MONOTONIC ns of the measurement start
	ivIndex   int64
	ivNext    uint64
	report    func(*intervalMsg)
	started   uint64
	ended     uint64
	// beginAt is the measurement's start while the thread has not reached
	// it (0 after): the first ring call waits for it in C, any other first
	// call in Go (awaitStart).
	beginAt uint64
	// startRunq is how late past the start the thread reached it for want
	// of a CPU (ns; threadResult.StartRunQueueNS).
	startRunq int64
	// What the thread waited on while it measured (waits.go): the run
	// queue, and the device's locks and command queue.
	waits  threadWaits
	rounds int64

	// coverage: what of the thread's time was not inside a timed
	// operation (see results.Coverage)
	lastEnd   uint64 // end of the last timed batch, or the start
	waited    uint64 // barrier wait since lastEnd
	waitNS    uint64 // all barrier waits
	gapNS     uint64 // the longest untimed stretch, its start and next kind
	gapAt     uint64
	gapKind   string
	timerPre  float64 // timer overhead measured before the run, and after
	timerPost float64
}

func newThread(cfg *workerConfig, spec *workloads.Spec, local int, sh *shm) *thread {
	t := &thread{cfg: cfg, spec: spec, g: cfg.ThreadBase + local, n: cfg.TotalThreads, q: cfg.QPs, shm: sh, cpu: -1}
	if cfg.Rate > 0 {
		t.open = newOpenLoop(cfg, t.g)
	}
	byKind := map[string]int{}
	kinds := spec.Kinds()
	if modifies(spec, cfg.Verbs.QPState) {
		kinds = append(kinds, modifyKinds(spec)...)
	}
	// One block of counts for all kinds, as the C loop indexes them.
	t.ivAll = make([]int64, len(kinds)*histCounts)
	if t.open != nil {
		t.ivRespAll = make([]int64, len(kinds)*histCounts)
	}
	for i, kind := range kinds {
		byKind[kind] = i
		t.recs = append(t.recs, newKindRec(kind, kindWindow(t.ivAll, i), kindWindow(t.ivRespAll, i)))
	}
	if i, ok := byKind[results.OpModify]; ok {
		t.modify = &phaseRT{Phase: workloads.Phase{Op: results.OpModify}, op: verbs.OpModify, rec: t.recs[i], kindIdx: i}
	}
	for _, p := range spec.Phases {
		rt := &phaseRT{Phase: p, rec: t.recs[byKind[p.Op]], kindIdx: byKind[p.Op]}
		switch p.Op {
		case workloads.OpCreate:
			rt.op = verbs.OpCreate
		case workloads.OpReg, workloads.OpRegInvalid, workloads.OpRegForeign:
			rt.op = verbs.OpReg
		case workloads.OpUnreg:
			rt.op, rt.checkLast = verbs.OpUnreg, -1
		case workloads.OpUnregLast:
			rt.op, rt.checkLast = verbs.OpUnreg, +1
		}
		if !p.ExpectOK() {
			rt.expect, _ = workloads.ErrnoByName(p.Expect)
		}
		t.phases = append(t.phases, rt)
	}
	if spec.Mode == workloads.StormMode {
		t.storm = &stormRank{doneNS: -1, downNS: -1,
			exit: spec.Storm.Teardown == workloads.TeardownExit}
	}
	if spec.Creates() && leaks.ProbesCreated(cfg.Verbs.Provider) {
		t.created = leaks.NewSet()
	}
	t.held = make([]bool, t.q)
	t.slots = make([]uint32, t.q)
	t.order = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(t.g))).Perm(t.q)
	if spec.QPs.Holder {
		held := cfg.Held
		if spec.QPs.Scope == workloads.PerThread {
			held = held[t.g*t.q : (t.g+1)*t.q]
		}
		copy(t.slots, held)
	}
	t.prog = newProgRT(t)
	return t
}

// setup runs on the locked OS thread: pin, open the registrant.
func (t *thread) setup() error {
	if local := t.g - t.cfg.ThreadBase; local < len(t.cfg.CPUs) {
		t.cpu = t.cfg.CPUs[local] // the coordinator's placement (threadCPUs)
		var one unix.CPUSet
		one.Set(t.cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			return fmt.Errorf("pin thread %d to CPU %d: %w", t.g, t.cpu, err)
		}
	}
	if err := host.TakeRealTime(t.cfg.RealTime); err != nil {
		return err
	}
	// Timer slack decides how far apart threads sleeping to the same
	// start deadline wake up (50µs by default).
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	verbs.SpinWaits(t.cfg.Wait == WaitSpin)
	// The timer's cost where this thread runs, once before the run and
	// once after: one measurement in the coordinator was once 4x the usual.
	t.timerPre = verbs.TimerOverheadNS()
	dev, err := verbs.Open(t.cfg.Verbs)
	if err != nil {
		return err
	}
	dom, err := dev.OpenDomain(t.cfg.Domain, false)
	if err != nil {
		dev.Close()
		return err
	}
	t.dev, t.dom = dev, dom
	return nil
}

// teardown drops what the thread still holds (after errors only) and
// closes its registrant, unmeasured.
func (t *thread) teardown() error {
	if t.dom == nil {
		return nil
	}
	if t.storm != nil {
		if t.storm.exit {
			// The rank exits holding its handles, as an MPI rank that
			// skips finalize: the process's end releases them.
			return nil
		}
		t.stormRelease()
	}
	if t.spec.Mode != workloads.Rounds {
		t.settle()
	}
	for s, h := range t.held {
		if h {
			if _, err := t.dom.Unreg(t.qpnOf(s)); err == nil {
				t.held[s] = false
			}
		}
	}
	err := t.dom.Close()
	if cerr := t.dev.Close(); err == nil {
		err = cerr
	}
	return err
}

// qpnOf is the QP number of slot s now.
func (t *thread) qpnOf(s int) uint32 {
	if t.spec.Mode == workloads.Rounds && t.spec.Creates() {
		return t.shm.qpn(s)
	}
	return t.slots[s]
}

// run runs warm-up, then measurement, starting at the shared deadline.
func (t *thread) run(deadline uint64) error {
	if t.storm != nil {
		return t.runStorm(deadline)
	}
	if t.cfg.Warmup > 0 {
		// The warm-up's start is waited for in Go: nothing is measured
		// there.
		if err := waitUntil(verbs.Now, deadline, t.shm.aborted); err != nil {
			return err
		}
		if t.open != nil {
			t.open.begin(deadline)
		}
		end := deadline + uint64(t.cfg.Warmup)
		t.loopEnd = end
		t.openLoopEnds(end)
		if err := t.loop(func(uint64, int64) bool { return verbs.Now() >= end || t.shm.stopRequested() }); err != nil {
			return err
		}
		// The measurement starts at a deadline all threads sleep to, as at
		// the first start. The barrier's release wakes every thread at once,
		// and with many threads per core that takes a while, so the deadline
		// leaves a gap after the planned end of the warm-up, and at least a
		// margin after the actual end (a long last round).
		gap := uint64(50*time.Millisecond + time.Duration(t.n)*500*time.Microsecond)
		margin := uint64(10*time.Millisecond + time.Duration(t.n)*200*time.Microsecond)
		err := t.shm.wait(func() {
			t.shm.setStop(false)
			if t.shm.stopRequested() {
				// Stopped during the warm-up (^C): do not wait for its
				// planned end; the measurement ends as it starts.
				t.shm.setDeadline(verbs.Now() + margin)
				return
			}
			t.shm.setDeadline(max(end+gap, verbs.Now()+margin))
		})
		if err != nil {
			return err
		}
		deadline = t.shm.deadline()
		for _, r := range t.recs {
			r.reset()
		}
		t.rounds = 0
	}
	if t.open != nil {
		t.open.begin(deadline)
	}
	// The thread enters its measurement before the start and reaches it
	// in C where it can (a ring: loopRepeat), so that nothing of Go's lies
	// between the start and the first operation: a thread that slept to
	// the start in Go came back into the runtime late (the P retaken
	// while it slept, a preemption handing it between OS threads), 0.2-0.5
	// ms on a quiet 2-CPU VM, and in an open loop every arrival due
	// meanwhile waited for it. The run queue counts from the start.
	t.waits.begin()
	t.startRunq = 0
	t.beginAt = deadline
	t.started, t.lastEnd = deadline, deadline
	if testHookMeasuring != nil {
		testHookMeasuring(t.g)
	}
	if t.spec.Mode == workloads.Rounds {
		if err := t.awaitStart(); err != nil {
			return err
		}
	}
	t.measuring = true
	t.beginIntervals(deadline)
	var done func(uint64, int64) bool
	t.loopEnd = 0
	if t.cfg.Iterations > 0 {
		if t.open != nil {
			t.open.a.Limit = uint64(backlogLimit(0))
		}
		t.passLimit = t.cfg.Iterations
		done = func(_ uint64, passes int64) bool { return passes >= t.cfg.Iterations || t.shm.stopRequested() }
	} else {
		end := deadline + uint64(t.cfg.Duration)
		t.loopEnd = end
		t.openLoopEnds(end)
		if t.open != nil {
			t.open.a.Limit = uint64(backlogLimit(t.cfg.Duration))
		}
		done = func(now uint64, _ int64) bool { return now >= end || t.shm.stopRequested() }
	}
	err := t.loop(done)
	return t.endMeasuring(err)
}

// awaitStart waits for the measurement's start, if the thread has not
// reached it, in C as a program's first call does (verbs.AwaitBegin): the
// way to the start of a thread whose first act is no program (rounds
// begin with a barrier). Sleeping to it in Go, a thread came back into
// the runtime up to 2 ms late on a quiet machine (a 2 x 1 lifecycle), and
// nothing told the machine's part of that from the harness's. Stopped
// before the start, it returns with the start not reached: endMeasuring
// then counts nothing.
func (t *thread) awaitStart() error {
	if t.beginAt == 0 {
		return nil
	}
	begin := t.beginWait()
	verbs.AwaitBegin(&begin)
	if t.shm.aborted() {
		return ErrAborted
	}
	t.begun(&begin)
	return nil
}

// beginWait is how a first call that is no ring waits in C for the
// measurement's start (verbs.RunProgramAt, verbs.AwaitBegin).
func (t *thread) beginWait() verbs.Repeat {
	return verbs.Repeat{Begin: t.beginAt, RunqFD: t.waits.fd(), Stop: t.shm.stopWord(), Abort: t.shm.abortWord()}
}

// begun notes what the call that waited for the start says of it: when
// the thread reached it, and how much of its lateness was run queue. It
// says false when the call was stopped before the start.
func (t *thread) begun(b *verbs.Repeat) bool {
	if b.Begun == 0 {
		return false
	}
	t.startedAt(b.Begun)
	t.waits.startAt(b.RunQueueAtBegin)
	t.startRunq = max(b.LateRunQueue, 0)
	return true
}

// startedAt notes that the thread reached its measurement's start at now
// (at or after it): the untimed stretch begins there.
func (t *thread) startedAt(now uint64) {
	t.started, t.lastEnd, t.beginAt = now, now, 0
	if t.flush != nil {
		t.flush.started.Store(now)
	}
}

// beginIntervals starts the interval grid at start: the first interval
// ends an --interval later, in the deck's set counting now.
func (t *thread) beginIntervals(start uint64) {
	t.ivStart, t.ivIndex, t.ivNext = start, 0, start+uint64(t.cfg.Interval)
	if t.flush != nil {
		d := t.flush.deck
		d.Ctl[verbs.DeckLen] = uint64(max(t.cfg.Interval, 1))
		// The flusher's clock (flusher.wait): a grid to wake by.
		atomic.StoreUint64(&d.Ctl[verbs.DeckStart], start)
		atomic.StoreUint64(&d.Ctl[verbs.DeckNext], t.ivNext)
		*d.Word(int(d.Ctl[verbs.DeckCur]), verbs.DeckIndex) = 0
		t.flush.started.Store(t.started)
		t.flush.ring()
	}
}

// openLoopEnds makes an open loop's schedule end at end, in loop mode: a
// round runs to its end, so rounds wait for every arrival (Validate keeps
// their rates to what the time asked can hold).
func (t *thread) openLoopEnds(end uint64) {
	if t.open != nil && t.spec.Mode != workloads.Rounds {
		t.open.a.End = end
	}
}

// endMeasuring ends the thread's measurement, whatever ended it (err, nil
// for the planned end): it sends the last interval and measures the timer
// again. It returns err, or the failure to send when err is nil.
func (t *thread) endMeasuring(err error) error {
	t.ended = verbs.Now()
	if t.beginAt != 0 { // stopped before the start: nothing was measured
		t.startedAt(t.ended)
	}
	t.waits.end()
	t.measuring = false
	// The last interval ends where the measurement did, as the
	// repetition's time does.
	if ferr := t.flushIntervalAt(t.ended); err == nil {
		err = ferr
	}
	// Unmeasured now: every interval goes out before the thread's result.
	if ferr := t.closeFlush(); err == nil {
		err = ferr
	}
	t.timerPost = verbs.TimerOverheadNS()
	return err
}

// loop runs passes (loop mode) or rounds until done says so.
func (t *thread) loop(done func(now uint64, passes int64) bool) error {
	if t.spec.Mode == workloads.Rounds {
		return t.rounds_(done)
	}
	for passes := int64(0); ; {
		if t.shm.aborted() {
			return ErrAborted
		}
		// A pass is not cut short, unless it outlasts a second (thousands
		// of QPs on a slow device): then a stop is not kept waiting.
		// Nor is it when the open loop's next arrival lies past the end.
		cut := verbs.Now()-t.passStart > uint64(time.Second) || t.open != nil && t.open.over()
		if (t.prog.atPassEnd() || cut) && done(verbs.Now(), passes) {
			return nil
		}
		if t.prog.atPassEnd() {
			t.passStart = verbs.Now()
		}
		var left int64
		if t.passLimit > 0 {
			left = t.passLimit - passes
		}
		n, err := t.loopChunk(left)
		if err != nil {
			return fmt.Errorf("thread %d: %w", t.g, err)
		}
		passes += n
		t.rounds += n
		if t.flush != nil {
			t.flush.rounds.Store(t.rounds) // for the intervals the C loop ends
		}
	}
}

func (t *thread) rounds_(done func(now uint64, passes int64) bool) error {
	for r := int64(0); ; r++ {
		// The barrier ending the previous round starts this one; its last
		// arrival decides for everyone whether there is a next round.
		err := t.barrier(func() { t.shm.setStop(done(verbs.Now(), r)) })
		if err != nil {
			return err
		}
		if t.shm.stopped() {
			return nil
		}
		for i, p := range t.phases {
			if i > 0 {
				if err := t.barrier(nil); err != nil {
					return err
				}
			}
			if err := t.roundPhase(p, r); err != nil {
				return err
			}
		}
		t.rounds++
	}
}

// barrier waits at the shared barrier; while measuring, the time waited
// is the workload's, neither timed nor an untimed gap of the harness.
func (t *thread) barrier(serial func()) error {
	if !t.measuring {
		return t.shm.wait(serial)
	}
	t0 := verbs.Now()
	err := t.shm.wait(serial)
	d := verbs.Now() - t0
	t.waited += d
	t.waitNS += d
	return err
}

func (t *thread) roundPhase(p *phaseRT, r int64) error {
	prog, n := t.prog, 0
	switch p.Op {
	case workloads.OpRegInvalid, workloads.OpRegForeign:
		for _, q := range t.probeList(p.Op) {
			t.stepOf(n, p, q, noSlot)
			n++
		}
	default:
		for _, s := range t.order {
			creator, closer := workloads.Creator(r, s, t.n), workloads.Closer(r, s, t.n)
			if !workloads.Takes(p.By, t.g, creator, closer) {
				continue
			}
			var qpn uint32
			if p.Op != workloads.OpCreate {
				qpn = t.qpnOf(s)
				if !t.include(p, s, qpn) {
					continue
				}
			}
			t.stepOf(n, p, qpn, s)
			n++
		}
	}
	for a := 0; a < n; {
		end, _, err := t.runSteps(a, min(n, a+prog.chunk))
		if err != nil {
			return fmt.Errorf("thread %d: %s: %w", t.g, p.Op, err)
		}
		a = end
	}
	// The state moves by the outcomes; the errors were counted.
	for i := 0; i < n; i++ {
		s := prog.slot[i]
		if s == noSlot {
			continue
		}
		ok := prog.p.Errno(i) == 0 && p.expect == 0
		switch p.op {
		case verbs.OpCreate:
			t.held[s] = ok
			if ok {
				t.shm.setQPN(int(s), prog.p.Steps[i].QPN)
			} else {
				t.shm.setQPN(int(s), 0) // the others skip a QP that does not exist
			}
		case verbs.OpReg:
			if ok {
				t.held[s] = true
			}
		case verbs.OpUnreg:
			if ok {
				t.held[s] = false
			}
		}
	}
	if p.op == verbs.OpCreate {
		return t.modifyCreated(n)
	}
	return nil
}

// modifyCreated moves the QPs the create batch just made (its first n
// entries, the failed ones skipped) out of RESET, as one timed batch of
// kind modify, before anyone else may register: what production does.
func (t *thread) modifyCreated(n int) error {
	if t.modify == nil {
		return nil
	}
	prog, m := t.prog, n
	for i := 0; i < n; i++ {
		if prog.p.Errno(i) == 0 {
			t.stepOf(m, t.modify, prog.p.Steps[i].QPN, int(prog.slot[i]))
			m++
		}
	}
	for a := n; a < m; {
		end, _, err := t.runSteps(a, min(m, a+prog.chunk))
		if err != nil {
			return fmt.Errorf("thread %d: %s: %w", t.g, results.OpModify, err)
		}
		a = end
	}
	return nil
}

// include says whether slot s (QP qpn) belongs in phase p's batch: reg
// only what exists and is not held, unreg only what is held.
func (t *thread) include(p *phaseRT, s int, qpn uint32) bool {
	switch p.Op {
	case workloads.OpReg:
		return qpn != 0 && !t.held[s]
	case workloads.OpUnreg, workloads.OpUnregLast:
		return t.held[s]
	}
	return false
}

func (t *thread) probeList(op string) []uint32 {
	if op == workloads.OpRegInvalid {
		return t.cfg.Invalid
	}
	return t.cfg.Foreign
}

// account adds a batch of rec's kind that ended at now after timed ns
// inside its operations: the stretch since the previous batch ended, less
// barrier waits, was not timed. (The batch's own cgo entry and exit count
// in that stretch: they are not timed either.) A ring's call also tells
// its own untimed stretches (inner, nil for none: its deck's turns), each
// a stretch of its own: the longest untimed stretch is the longest of
// them or the one before the call, never their sum (a ring stays in one
// call for the whole measurement).
func (t *thread) account(rec *kindRec, now, timed uint64, inner *verbs.ProgramStats) {
	var in verbs.ProgramStats
	if inner != nil {
		in = *inner
	}
	start := now - min(timed+in.UntimedNS, now)
	var gap uint64
	at := t.lastEnd - t.started
	if start > t.lastEnd+t.waited {
		gap = start - t.lastEnd - t.waited
	}
	// A stretch that began at or past the measurement's end lies after
	// it: a ring stops at the end wherever it is, mid-pass as a rule, and
	// the thread finishes the pass from Go, its way back out of the long
	// call first (55-83 µs on the 2-CPU VM, the longest "gap" of 3 in 4
	// steady runs, all dated after the end). It counts as neither timed
	// nor a gap, as a barrier wait does.
	if t.loopEnd != 0 && t.lastEnd >= t.loopEnd {
		t.waitNS += gap
		gap = 0
	}
	if in.UntimedMaxNS > gap {
		gap, at = in.UntimedMaxNS, in.UntimedMaxAt-t.started
	}
	if int64(gap) > rec.maxGap {
		rec.maxGap = int64(gap)
	}
	if gap > t.gapNS {
		t.gapNS, t.gapAt, t.gapKind = gap, at, rec.kind
	}
	t.lastEnd, t.waited = now, 0
}

// noteCreated adds a QP the storm runner (storm.go) created to the leak
// probe's set.
func (t *thread) noteCreated(qpn uint32) {
	if t.created != nil {
		t.created.Add(qpn)
	}
}

// encodeHistogram is results.EncodeHistogram; tests replace it to make it
// fail.
var encodeHistogram = results.EncodeHistogram

// flushIntervalAt ends the current interval: its counts go to the
// flusher (flush.go), which encodes them and sends them to the
// coordinator, which sums them into the timelines and the totals; the
// thread goes on at once with a clear set. An earlier interval that could
// not be encoded is the thread's error from here on.
func (t *thread) flushIntervalAt(now uint64) error {
	if t.flush == nil && t.report != nil {
		t.flush = startFlusher(t) // a thread driven by hand (tests)
	}
	if t.flush != nil {
		if err := t.flush.failure(); err != nil {
			return err
		}
	}
	// End is now, not the interval's planned end: the batch in flight at
	// that end counts in this interval, so the interval lasts until it
	// ended (hlog.go).
	note := &endNote{rounds: t.rounds}
	for _, r := range t.recs {
		if d := r.errors - r.shown; d > 0 {
			if note.errors == nil {
				note.errors = map[string]int64{}
			}
			note.errors[r.kind], r.shown = d, r.errors
		}
		if t.flush != nil {
			r.ivN = 0
		} else {
			r.endInterval()
		}
	}
	if iv := uint64(t.cfg.Interval); iv > 0 && now >= t.ivStart {
		t.ivIndex = int64((now - t.ivStart) / iv)
		t.ivNext = t.ivStart + uint64(t.ivIndex+1)*iv
	}
	if t.flush != nil {
		return t.turn(now, note, t.ivIndex, t.ivNext)
	}
	return nil
}

// result packages the thread's counts; its latencies went out with its
// intervals.
func (t *thread) result() (threadResult, error) {
	tr := threadResult{Thread: t.g, CPU: t.cpu, Started: t.started, Ended: t.ended, Rounds: t.rounds,
		Kinds: map[string]kindResult{}, WaitNS: int64(t.waitNS), GapNS: int64(t.gapNS), GapAtNS: int64(t.gapAt),
		GapKind: t.gapKind, TimerBeforeNS: t.timerPre, TimerAfterNS: t.timerPost,
		RunQueueNS: t.waits.runQueue(), DeviceLockNS: int64(t.waits.lock), CommandQueueNS: int64(t.waits.cmdq),
		StartRunQueueNS: t.startRunq}
	if t.storm != nil {
		tr.StormDoneNS, tr.StormTeardownNS, tr.StormRunQueueNS = &t.storm.doneNS, &t.storm.downNS, &t.storm.runqNS
		tr.StormBusyNS, tr.StormWon = &t.storm.busyNS, t.storm.won
	}
	if o := t.open; o != nil {
		tr.Open = &openResult{Scheduled: int64(o.a.Scheduled), Waits: int64(o.waits), LateNS: int64(o.lateNS),
			LateMaxNS: int64(o.lateMaxNS), BehindNS: int64(o.behindNS), BehindMaxNS: int64(o.a.BehindMax),
			OverNS: int64(o.a.OverNS), SampledNS: int64(o.sampled()), LimitNS: int64(o.a.Limit)}
	}
	for _, r := range t.recs {
		tr.Kinds[r.kind] = kindResult{Count: r.count, Batches: r.batches, Errors: r.errors, TimedNS: r.timedNS, MaxGapNS: r.maxGap}
		if len(r.errnos) > 0 {
			if tr.Errnos == nil {
				tr.Errnos = map[string]map[string]int64{}
			}
			tr.Errnos[r.kind] = maps.Clone(r.errnos)
		}
	}
	return tr, nil
}

// lockThread pins the calling goroutine to its OS thread for good: the
// thread is one registrant and, with --pin, one CPU.
func lockThread() { runtime.LockOSThread() }
