package verbs

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func TestStormStateLayout(t *testing.T) {
	if s, g := stormStateSize(), unsafe.Sizeof(stormState{}); s != g {
		t.Fatalf("struct xb_storm_state is %d bytes, stormState %d", s, g)
	}
}

// stormOf is a storm program of steps, the step's slots in slots.
func stormOf(steps []Step, slots []uint32, table []uint32, stop, abort *uint32) (*Program, *Storm) {
	p := NewProgram(len(steps), false)
	copy(p.Steps, steps)
	s := NewStorm(p, table, stop, abort, Now())
	copy(s.Slot, slots)
	return p, s
}

// Two ranks, each creating one connection and registering with the
// other's, in the order that deadlocks ranks that wait for each step in
// turn: each registration comes first in its plan. A rank skips a
// registration whose number has not come and serves it once it has.
func TestStormSkipsWhatHasNotArrived(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	table := make([]uint32, 2)
	var stop, abort uint32
	reg, create := Step{Op: uint8(OpReg)}, Step{Op: uint8(OpCreate)}
	ps := make([]*Program, 2)
	ss := make([]*Storm, 2)
	ps[0], ss[0] = stormOf([]Step{reg, create}, []uint32{1, 2}, table, &stop, &abort)
	ps[1], ss[1] = stormOf([]Step{reg, create}, []uint32{2, 1}, table, &stop, &abort)
	guard := time.AfterFunc(20*time.Second, func() { atomic.StoreUint32(&stop, 1) })
	defer guard.Stop()
	var wg sync.WaitGroup
	out := make([]StormOutcome, 2)
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			out[r], errs[r] = d[r].RunStorm(ps[r], ss[r])
		}()
	}
	wg.Wait()
	for r := range 2 {
		if errs[r] != nil || out[r] != StormDone {
			t.Fatalf("rank %d: %v, %v; want done (a rank waiting in turn deadlocks here)", r, out[r], errs[r])
		}
		if !ss[r].Done[0] || !ss[r].Done[1] || ss[r].Errno(0) != 0 || ss[r].Errno(1) != 0 {
			t.Errorf("rank %d: done %v, errnos %v %v", r, ss[r].Done, ss[r].Errno(0), ss[r].Errno(1))
		}
		other := 1 - r
		if ps[r].Steps[0].QPN != ps[other].Steps[1].QPN || table[r] != ps[other].Steps[1].QPN {
			t.Errorf("rank %d registered with %#x, rank %d created %#x, table %v", r, ps[r].Steps[0].QPN, other, ps[other].Steps[1].QPN, table)
		}
		if ss[r].End() < ss[r].state.Begin || ss[r].NS[0] == 0 || ss[r].NS[1] == 0 {
			t.Errorf("rank %d: end %d before begin %d, or durations %v", r, ss[r].End(), ss[r].state.Begin, ss[r].NS)
		}
	}
	for r := range 2 {
		for _, q := range []uint32{ps[r].Steps[0].QPN, ps[r].Steps[1].QPN} {
			if _, err := d[r].Unreg(q); err != nil {
				t.Error(err)
			}
		}
	}
}

// A creator that moves its QP out of RESET sends the number back after
// the modify, not before; an unexpected outcome stops the loop at its
// step, and the next call resumes after it; a stop word ends the wait for
// a number that never comes.
func TestStormModifyUnexpectedHalt(t *testing.T) {
	d := simPair(t, SimOptions{}, 1)[0]
	table := make([]uint32, 2)
	var stop, abort uint32
	steps := []Step{{Op: uint8(OpCreate)}, {Op: uint8(OpModify), Back: 1}, {QPN: 0xabc, Op: uint8(OpReg)}, {Op: uint8(OpReg)}}
	p, s := stormOf(steps, []uint32{0, 1, 0, 2}, table, &stop, &abort)
	got, err := d.RunStorm(p, s)
	if err != nil || got != StormUnexpected || s.At() != 2 || s.Errno(2) != syscall.EINVAL {
		t.Fatalf("RunStorm: %v, %v at %d (errno %v), want unexpected at step 2 (EINVAL)", got, err, s.At(), s.Errno(2))
	}
	if q := p.Steps[0].QPN; q == 0 || table[0] != q || s.Errno(1) != 0 {
		t.Errorf("created %#x, modify errno %v, table %v: want the number sent back after the modify", q, s.Errno(1), table)
	}
	atomic.StoreUint32(&stop, 1)
	if got, err = d.RunStorm(p, s); err != nil || got != StormHalted || s.Done[3] {
		t.Errorf("RunStorm with a number that never comes and the stop set: %v, %v, done %v; want halted", got, err, s.Done)
	}
	if _, err := d.Unreg(p.Steps[0].QPN); err != nil {
		t.Error(err)
	}
	if _, err := d.RunStorm(p, &Storm{Slot: []uint32{3, 0, 0, 0}, Done: s.Done, NS: s.NS, Status: s.Status, Table: table, Stop: &stop, Abort: &abort}); err == nil {
		t.Error("a slot past the table: no error")
	}
}

// Intended starts: no step begins before its own.
func TestStormIntendedStarts(t *testing.T) {
	d := simPair(t, SimOptions{}, 1)[0]
	var stop, abort uint32
	p := NewProgram(2, true)
	p.Steps[0], p.Steps[1] = Step{Op: uint8(OpCreate)}, Step{Op: uint8(OpCreate)}
	begin := Now() + uint64(2*time.Millisecond)
	p.Start[0], p.Start[1] = begin, begin+uint64(3*time.Millisecond)
	s := NewStorm(p, nil, &stop, &abort, begin)
	// An interval ends between the two: the call returns there, and the
	// next resumes.
	s.Until = begin + uint64(time.Millisecond)
	if got, err := d.RunStorm(p, s); err != nil || got != StormUntil || s.Done[1] {
		t.Fatalf("RunStorm until 1ms: %v, %v, done %v; want until, the second step not done", got, err, s.Done)
	}
	s.Until = 0
	if got, err := d.RunStorm(p, s); err != nil || got != StormDone {
		t.Fatalf("RunStorm: %v, %v", got, err)
	}
	// Chained timestamps: the second step began where its duration
	// ends, after its intended start; the time before, in no operation,
	// is idle.
	if began := s.End() - s.NS[1]; began < p.Start[1] || s.IdleNS() > began-begin {
		t.Errorf("second step began %v after the start, due at %v; idle %v", time.Duration(began-begin), time.Duration(p.Start[1]-begin), time.Duration(s.IdleNS()))
	}
	for i := range 2 {
		if _, err := d.Unreg(p.Steps[i].QPN); err != nil {
			t.Error(err)
		}
	}
}

// A rank asleep before a far start sees a stop within a nap.
func TestStormHaltBeforeStart(t *testing.T) {
	d := simPair(t, SimOptions{}, 1)[0]
	var stop, abort uint32
	p := NewProgram(1, false)
	p.Steps[0] = Step{Op: uint8(OpCreate)}
	s := NewStorm(p, nil, &stop, &abort, Now()+uint64(time.Minute))
	time.AfterFunc(20*time.Millisecond, func() { atomic.StoreUint32(&abort, 1) })
	t0 := time.Now()
	if got, err := d.RunStorm(p, s); err != nil || got != StormHalted || s.Done[0] {
		t.Fatalf("RunStorm: %v, %v, done %v; want halted before the start", got, err, s.Done)
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Errorf("halted after %v, a minute's start away", el)
	}
}
