package bench

import (
	"slices"
	"time"

	"github.com/xrcbench/xrcbench/verbs"
	"github.com/xrcbench/xrcbench/workloads"
)

// How a thread cuts its work into op programs (verbs.Program): a loop-mode
// program holds as many whole passes as fit in BatchOps steps (at least
// one), built once and run again for as long as it leaves the thread's
// registrations as it found them. Such a program (without creates) runs
// as a ring (loopRepeat): one cgo call until the interval's end, the
// loop's end or a stop, which the C loop looks for every BatchTime; in an
// open loop the C loop draws the arrivals itself, segment by segment.
// Any other runs in ranges (loopChunk) of at most
// BatchOps steps or about BatchTime of work, whichever is less, so the
// thread checks for its end, its interval and a stop at least that often.
const (
	DefaultBatchOps  = 4096
	DefaultBatchTime = time.Millisecond
)

// noSlot marks a step on no slot of the thread (the probes of reg_invalid
// and reg_foreign).
const noSlot = -1

// progRT is a thread's current program and where it is in it.
type progRT struct {
	p        *verbs.Program
	slot     []int32 // step → slot, or noSlot
	n        int     // steps built
	pos      int     // next step to run
	passEnds []int   // step index after each pass of the program
	passIdx  int     // passEnds[passIdx] is the next pass end
	built    bool    // p holds a program for the state below
	periodic bool    // run whole without surprises, it leaves the state unchanged
	creates  bool
	// the registration state the program starts from (loop mode)
	held0  []bool
	slots0 []uint32
	// scratch of the build: the predicted state
	pheld     []bool
	pslots    []uint32
	createdAt []int32 // slot → step of the program that created its QP, or -1

	chunk int                // steps per call, adapted to BatchTime
	stats verbs.ProgramStats // of the last call
	rep   verbs.Repeat       // a periodic program's run as a ring
	// An outcome was unexpected in the ring mid-pass: the pass is
	// finished in chunks, whose end settles the state.
	finishPass bool
}

func (t *thread) batchOps() int {
	if t.cfg.BatchOps > 0 {
		return t.cfg.BatchOps
	}
	return DefaultBatchOps
}

func (t *thread) batchTime() uint64 {
	if t.cfg.BatchTime > 0 {
		return uint64(t.cfg.BatchTime)
	}
	return uint64(DefaultBatchTime)
}

func newProgRT(t *thread) *progRT {
	cap := t.batchOps()
	// One pass, or one round's phase, always fits.
	per := 0
	for _, p := range t.phases {
		if p.Op == workloads.OpCreate && t.modify != nil {
			per += t.q
		}
		switch p.Op {
		case workloads.OpRegInvalid:
			per += len(t.cfg.Invalid)
		case workloads.OpRegForeign:
			per += len(t.cfg.Foreign)
		default:
			per += t.q
		}
	}
	cap = max(cap, per, 1)
	r := &progRT{p: verbs.NewProgram(cap, t.open != nil), slot: make([]int32, cap),
		held0: make([]bool, t.q), slots0: make([]uint32, t.q), pheld: make([]bool, t.q),
		pslots: make([]uint32, t.q), createdAt: make([]int32, t.q), chunk: min(cap, t.batchOps()),
		passEnds: make([]int, 0, cap), creates: t.spec.Creates()}
	// The C loop counts each step in its kind's interval arrays (the
	// kinds' iv and ivResp are windows on these), with the step's tag the
	// kind's index.
	r.p.Rec = verbs.Recording{Buckets: histCounts, Service: t.ivAll, Response: t.ivRespAll,
		Count: make([]uint64, len(t.recs)), SumNS: make([]uint64, len(t.recs))}
	r.rep = verbs.Repeat{Stop: t.shm.stopWord(), Abort: t.shm.abortWord(), Poll: time.Duration(t.batchTime())}
	return r
}

// stepOf is phase p's step on QP qpn (slot s, or noSlot).
func (t *thread) stepOf(i int, p *phaseRT, qpn uint32, s int) {
	r := t.prog
	st := &r.p.Steps[i]
	*st = verbs.Step{QPN: qpn, Op: uint8(p.op), Expect: uint16(p.expect), Tag: uint32(p.kindIdx)}
	switch {
	case p.checkLast > 0:
		st.Check = verbs.CheckDestroyed
	case p.checkLast < 0:
		st.Check = verbs.CheckKept
	}
	r.slot[i] = int32(s)
}

// buildLoop builds the loop-mode program from the thread's state: whole
// passes while they fit.
func (t *thread) buildLoop() {
	r := t.prog
	copy(r.held0, t.held)
	copy(r.slots0, t.slots)
	copy(r.pheld, t.held)
	copy(r.pslots, t.slots)
	r.n, r.pos, r.passIdx = 0, 0, 0
	r.passEnds = r.passEnds[:0]
	cap := r.p.Len()
	last := 0
	for {
		for i := range r.createdAt {
			r.createdAt[i] = -1
		}
		start := r.n
		if !t.buildPass() {
			r.n = start // did not fit: the program ends before it
			break
		}
		r.passEnds = append(r.passEnds, r.n)
		last = r.n - start
		if last == 0 || r.n+last > cap || len(r.passEnds) >= cap {
			break
		}
	}
	r.finishPass = false
	r.periodic = slices.Equal(r.pheld, r.held0) && slices.Equal(r.pslots, r.slots0) && !r.creates ||
		r.creates && slices.Equal(r.pheld, r.held0) && allZero(r.pslots) && allZero(r.slots0)
	r.built = true
}

func allZero(s []uint32) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// createdQPN marks a predicted slot whose QP a step of the program
// creates: its number is known only when the program runs.
const createdQPN = ^uint32(0)

// buildPass appends one pass to the program from the predicted state, as
// the engine ran passes phase by phase; false if it does not fit.
func (t *thread) buildPass() bool {
	r := t.prog
	cap := r.p.Len()
	for _, p := range t.phases {
		switch p.Op {
		case workloads.OpCreate:
			if r.n+t.q > cap {
				return false
			}
			if t.modify != nil && r.n+2*t.q > cap {
				return false
			}
			for s := 0; s < t.q; s++ {
				t.stepOf(r.n, p, 0, s)
				r.createdAt[s] = int32(r.n)
				r.pslots[s], r.pheld[s] = createdQPN, true
				r.n++
			}
			// The creator moves its new QPs out of RESET before anyone
			// registers, as production does (--qp-state).
			for s := 0; t.modify != nil && s < t.q; s++ {
				t.stepOf(r.n, t.modify, 0, s)
				r.p.Steps[r.n].Back = uint32(r.n - int(r.createdAt[s]))
				r.n++
			}
		case workloads.OpRegInvalid, workloads.OpRegForeign:
			list := t.probeList(p.Op)
			if r.n+len(list) > cap {
				return false
			}
			for _, q := range list {
				t.stepOf(r.n, p, q, noSlot)
				r.n++
			}
		default:
			for _, s := range t.order {
				q := r.pslots[s]
				var take bool
				if p.Op == workloads.OpReg {
					take = q != 0 && !r.pheld[s]
				} else {
					take = r.pheld[s]
				}
				if !take {
					continue
				}
				if r.n >= cap {
					return false
				}
				t.stepOf(r.n, p, q, s)
				if q == createdQPN {
					r.p.Steps[r.n].QPN = 0
					r.p.Steps[r.n].Back = uint32(r.n - int(r.createdAt[s]))
				}
				if p.Op == workloads.OpReg {
					r.pheld[s] = true
				} else {
					r.pheld[s] = false
					if p.Op == workloads.OpUnregLast {
						r.pslots[s] = 0
					}
				}
				r.n++
			}
		}
	}
	return true
}

// replay sets the thread's registration state from the outcomes of steps
// [0, upto) of the loop-mode program, run from the state it was built on.
func (t *thread) replay(upto int) {
	r := t.prog
	copy(t.held, r.held0)
	copy(t.slots, r.slots0)
	for i := 0; i < upto; i++ {
		s := r.slot[i]
		if s == noSlot {
			continue
		}
		st := &r.p.Steps[i]
		if r.p.Errno(i) != 0 || st.Expect != 0 {
			// Failed: nothing changed. Succeeded against an expected
			// failure: check dropped it again.
			continue
		}
		switch verbs.Op(st.Op) {
		case verbs.OpCreate:
			t.slots[s], t.held[s] = st.QPN, true
		case verbs.OpReg:
			t.held[s] = true
		case verbs.OpUnreg:
			t.held[s] = false
			if st.Check == verbs.CheckDestroyed {
				t.slots[s] = 0
			}
		}
	}
}

// settle brings the thread's state up to the steps run so far and drops
// the program: the next loop builds a new one from that state.
func (t *thread) settle() {
	r := t.prog
	if r == nil || !r.built {
		return
	}
	t.replay(r.pos)
	r.built = false
}

// atPassEnd says whether the thread is between two passes: where loop
// mode may stop.
func (r *progRT) atPassEnd() bool {
	return !r.built || r.pos == 0 || r.pos >= r.n || (r.passIdx > 0 && r.passEnds[r.passIdx-1] == r.pos)
}

// loopChunk runs the next range of the loop-mode program and returns the
// passes it completed.
func (t *thread) loopChunk(passesLeft int64) (int64, error) {
	r := t.prog
	if !r.built || r.pos >= r.n {
		if r.built && r.pos >= r.n && !r.periodic {
			t.replay(r.n)
			r.built = false
		}
		if !r.built {
			t.buildLoop()
		}
		r.pos, r.passIdx = 0, 0
		if r.n == 0 { // nothing to do in a pass: a pass is done
			return 1, nil
		}
	}
	if r.periodic && !r.creates && !r.finishPass && !t.shm.stopRequested() && (t.open == nil || !t.open.over()) {
		if until := t.repeatUntil(); until > verbs.Now() {
			return t.loopRepeat(passesLeft, until)
		}
	}
	end := min(r.n, r.pos+r.chunk)
	if passesLeft > 0 && r.passIdx+int(passesLeft)-1 < len(r.passEnds) {
		end = min(end, r.passEnds[r.passIdx+int(passesLeft)-1])
	}
	// End on a pass boundary where one is in reach: the thread decides
	// whether to go on only there, as it did pass by pass.
	if i, _ := slices.BinarySearch(r.passEnds, end+1); i > 0 && r.passEnds[i-1] > r.pos {
		end = r.passEnds[i-1]
	}
	end, failed, err := t.runSteps(r.pos, end)
	if err != nil {
		return 0, err
	}
	r.pos = end
	var passes int64
	for r.passIdx < len(r.passEnds) && r.passEnds[r.passIdx] <= end {
		r.passIdx++
		passes++
	}
	atEnd := r.passIdx > 0 && r.passEnds[r.passIdx-1] == end
	if failed || r.finishPass && atEnd {
		// The rest of the program was built on outcomes that did not
		// happen: settle the state and build anew from it.
		t.replay(end)
		r.built, r.finishPass = false, false
		if !atEnd {
			passes++ // the pass is cut short where it failed
		}
	}
	return passes, nil
}

// runSteps runs steps [a, b) of the program (fewer in an open loop: those
// due within BatchTime) in one cgo call, which counts their latencies into
// the interval's arrays; it adds the counts and times to the kinds, names
// unexpected outcomes as errors of their kinds and puts the untimed
// stretch before the call into coverage. It returns the end of what it
// ran and whether an outcome was unexpected.
func (t *thread) runSteps(a, b int) (int, bool, error) {
	r := t.prog
	p := r.p
	if t.open != nil {
		if b = t.open.schedule(p.Start, a, b, t.batchTime()); b == a {
			// Nothing is due before the loop's end: wait for the end,
			// not for the arrival (loop sees over and ends there).
			stop := func() bool { return t.shm.aborted() || t.shm.stopRequested() }
			return a, false, waitUntil(verbs.Now, t.open.a.End, stop)
		}
	}
	r.stats = verbs.ProgramStats{}
	if t.beginAt != 0 {
		// The measurement's first call waits for its start in C, as a
		// ring's does (loopRepeat): no return into Go between the start
		// and the first operation.
		begin := t.beginWait()
		if err := t.dom.RunProgramAt(p, a, b-a, &r.stats, &begin); err != nil {
			return a, false, err
		}
		if !t.begun(&begin) { // stopped before the start
			return a, false, nil
		}
	} else if err := t.dom.RunProgram(p, a, b-a, &r.stats); err != nil {
		return a, false, err
	}
	timed := t.tally()
	if t.open != nil {
		t.open.ran(&r.stats, verbs.Now(), true)
	}
	if r.creates && t.created != nil {
		for i := a; i < b; i++ {
			if verbs.Op(p.Steps[i].Op) == verbs.OpCreate && p.Errno(i) == 0 {
				t.created.Add(p.Steps[i].QPN)
			}
		}
	}
	failed := r.stats.Unexpected > 0
	if failed {
		t.checkSteps(a, b)
	}
	if per := timed / uint64(b-a); per > 0 {
		r.chunk = int(min(max(t.batchTime()/per, 1), uint64(t.batchOps())))
	} else {
		r.chunk = t.batchOps()
	}
	return b, failed, t.ranFor(t.recs[p.Steps[a].Tag], timed)
}

// never is a time that does not come: the interval end of a thread that
// sends no intervals (the engine's rigs).
const never = uint64(1) << 63

// repeatCallMax bounds one call of a repeated program when nothing else
// does (a caller that decides between calls when to stop: the engine's
// rigs with a count, tests); tests lengthen it.
var repeatCallMax = uint64(100 * time.Millisecond)

// repeatUntil is when a repeated program must come back to Go: the
// loop's end, or the next interval's while measuring without a deck
// (with one, the C loop ends the intervals itself), whichever is first,
// or with neither repeatCallMax from now.
func (t *thread) repeatUntil() uint64 {
	until := never
	if t.measuring && t.flush == nil {
		until = t.ivNext // with a deck, the C loop ends the intervals
	}
	if t.loopEnd > 0 {
		until = min(until, t.loopEnd)
	}
	if until >= never {
		until = verbs.Now() + repeatCallMax
	}
	return until
}

// loopRepeat runs a periodic program as a ring (verbs.Repeat) until
// until, a stop or an unexpected outcome, or for as many steps as
// passesLeft passes take (if not 0), and returns the passes it completed.
// While it measures, the C loop ends its intervals in the thread's deck
// and the thread comes back into Go at the measurement's end: the cgo
// call's way back costs ~10 µs when the call was long, which once per
// program (~1 ms) left 1% of the thread's time untimed in a closed loop;
// in an open loop, whose calls sleep, it cost 15-40 µs, 4-7%, and every
// arrival due meanwhile waited for it; once per interval, up to a few ms
// when the runtime preempted the thread on its way back.
func (t *thread) loopRepeat(passesLeft int64, until uint64) (int64, error) {
	r := t.prog
	p := r.p
	from := r.pos
	rep := &r.rep
	rep.Until, rep.Pos, rep.MaxSteps, rep.Open, rep.Begin, rep.Deck = until, r.pos, 0, nil, t.beginAt, nil
	if t.measuring && t.flush != nil {
		rep.Deck = t.flush.deck
	}
	if t.beginAt != 0 {
		rep.RunqFD = t.waits.fd()
	}
	if passesLeft > 0 {
		rep.MaxSteps = r.stepsFor(passesLeft)
	}
	if t.open != nil {
		rep.Open = &t.open.a
	}
	r.stats = verbs.ProgramStats{}
	if err := t.dom.RepeatProgram(p, 0, r.n, rep, &r.stats); err != nil {
		return 0, err
	}
	if rep.Deck != nil {
		t.deckTurned()
	}
	if t.beginAt != 0 && !t.begun(rep) { // stopped before the start
		return 0, nil
	}
	if t.open != nil {
		t.open.ran(&r.stats, verbs.Now(), false)
	}
	r.pos = rep.Pos
	passes := r.passesCrossed(from, r.pos, rep.Laps)
	r.passIdx, _ = slices.BinarySearch(r.passEnds, r.pos+1)
	timed := t.tally()
	if r.stats.Unexpected > 0 {
		// Failures holds the steps of the last lap, which began at step 0
		// from the state the program was built on. The program is built
		// anew at the end of the pass, as in chunks (loopChunk).
		t.checkSteps(0, r.n)
		if r.atPassEnd() {
			t.replay(r.pos)
			r.built = false
		} else {
			r.finishPass = true
		}
	}
	// The pass under way began in the call's last segment.
	t.passStart = verbs.Now()
	return passes, t.ranFor(t.recs[p.Steps[from].Tag], timed)
}

// passesCrossed counts the pass ends the ring went past from step from to
// step to, wrapping laps times.
func (r *progRT) passesCrossed(from, to int, laps uint64) int64 {
	// ends is how many pass ends lie in (a, b].
	ends := func(a, b int) int64 {
		lo, _ := slices.BinarySearch(r.passEnds, a+1)
		hi, _ := slices.BinarySearch(r.passEnds, b+1)
		return int64(hi - lo)
	}
	if laps == 0 {
		return ends(from, to)
	}
	return ends(from, r.n) + int64(laps-1)*int64(len(r.passEnds)) + ends(0, to)
}

// stepsFor is how many steps of the ring, from where the thread is, make
// passes more passes.
func (r *progRT) stepsFor(passes int64) uint64 {
	per := int64(len(r.passEnds))
	inLap := per - int64(r.passIdx)
	if passes <= inLap {
		return uint64(r.passEnds[r.passIdx+int(passes)-1] - r.pos)
	}
	passes -= inLap
	laps := (passes - 1) / per
	return uint64(r.n-r.pos) + uint64(laps)*uint64(r.n) + uint64(r.passEnds[passes-laps*per-1])
}

// tally moves the per-tag counts of the last call to the kinds and
// returns the time inside its operations.
func (t *thread) tally() uint64 {
	var timed uint64
	rc := &t.prog.p.Rec
	for k, c := range rc.Count {
		if c > 0 {
			rec := t.recs[k]
			rec.ivN += int64(c)
			rec.count += int64(c)
			rec.batches++
			rec.timedNS += int64(rc.SumNS[k])
			timed += rc.SumNS[k]
			rc.Count[k], rc.SumNS[k] = 0, 0
		}
	}
	return timed
}

// ranFor accounts a call into C that has just ended, timed ns of it inside
// operations, the first of kind rec: the untimed stretch before it goes to
// coverage, and the interval ends if it is due.
func (t *thread) ranFor(rec *kindRec, timed uint64) error {
	if !t.measuring {
		return nil
	}
	// An interval the flusher could not encode is the thread's error
	// from its next return into Go (with a deck, the C loop ended it).
	if t.flush != nil {
		if err := t.flush.failure(); err != nil {
			return err
		}
	}
	now := verbs.Now()
	t.waited += t.prog.stats.WaitNS
	t.waitNS += t.prog.stats.WaitNS
	// The batch ended with its last step, in C: the way back into Go is
	// the next batch's untimed stretch, or lies after the measurement (a
	// ring's one call once reported its return, 80-110 µs on a VM, as a
	// stretch before itself, and every run warned of it).
	end := now
	if e := t.prog.stats.EndNS; e != 0 && e < now {
		end = e
	}
	t.account(rec, end, timed, &t.prog.stats)
	// At or past the measurement's end its last interval ends with it
	// (endMeasuring), not here, which left an empty interval of a few
	// hundred µs after it in every .hlog.
	if now >= t.ivNext && (t.loopEnd == 0 || now < t.loopEnd) {
		return t.flushIntervalAt(now)
	}
	return nil
}

// checkSteps names the unexpected outcomes among steps [a, b) as errors
// of their kinds.
func (t *thread) checkSteps(a, b int) {
	p := t.prog.p
	for _, f := range p.Failures() {
		i := int(f.Step)
		if i < a || i >= b {
			continue
		}
		st := &p.Steps[i]
		rec, e := t.recs[st.Tag], p.Errno(i)
		switch {
		case st.Expect != 0 && e == 0:
			// A registration that should not exist; drop it, unmeasured,
			// so it leaks nothing, and say so when that fails too.
			qpn := st.QPN
			if st.Back != 0 {
				qpn = p.Steps[i-int(st.Back)].QPN
			}
			if dropUnexpected(t.dom, qpn) != nil {
				rec.fail(errUnexpectedSuccessKept)
			} else {
				rec.fail(errUnexpectedSuccess)
			}
		case e != 0:
			rec.fail(workloads.ErrnoName(e))
		case st.Check == verbs.CheckDestroyed:
			rec.fail(errNotDestroyed)
		default:
			rec.fail(errUnexpectedDestroy)
		}
	}
}
