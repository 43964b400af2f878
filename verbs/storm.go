package verbs

import (
	"fmt"
	"syscall"
)

// A storm rank (bench's storm mode) runs its steps as one Program through
// RunStorm: served in plan order, each as soon as it has arrived (its
// intended start has come, and a registration's QP number is in the
// shared table), the ones not arrived skipped, all in one C loop (storm.c).

// StormOutcome is how a RunStorm call ended.
type StormOutcome int

const (
	StormDone       StormOutcome = iota // every step is done
	StormUnexpected                     // step At's outcome differs from its expectation
	StormHalted                         // *Stop or *Abort was set
	StormUntil                          // the clock passed Until
)

// Storm is a rank's storm across RunStorm calls.
type Storm struct {
	// Slot ties step i to an entry of Table (Slot[i]-1, a connection;
	// 0: none): a create, or the modify that moves it out of RESET (its
	// QP through Back), puts its QP number there on success; a reg or
	// unreg takes its QP number from there, and a reg has not arrived
	// while it is 0. Steps' QPN gets the number each step used.
	Slot []uint32
	// Table is the QP-number table the ranks share (other processes map
	// it); Stop and Abort are shared words that end the storm when set.
	Table       []uint32
	Stop, Abort *uint32
	Done        []bool // per step: served (the caller may mark one done)
	// NS and Status are per step: its service time, and its errno (low
	// 16 bits) and destroy flags; a storm keeps every step's, for the
	// caller to fold once the rank is wired.
	NS     []uint64
	Status []uint32
	// Until, if not 0, ends a call once the clock (as Now) is past it:
	// the caller's next interval.
	Until uint64
	state stormState
}

// stormState has struct xb_storm_state's layout.
type stormState struct {
	Begin, Until, First, At, End, IdleNS uint64
	RunqFD, RunqBefore, RunqBegin        int64
	RunqEnd                              int64
}

// NewStorm sizes a storm for program p; begin is its start
// (CLOCK_MONOTONIC ns, as Now): RunStorm waits for it in C, asleep until
// 2 ms before, then spinning.
func NewStorm(p *Program, table []uint32, stop, abort *uint32, begin uint64) *Storm {
	n := p.Len()
	return &Storm{Slot: make([]uint32, n), Done: make([]bool, n), NS: make([]uint64, n), Status: make([]uint32, n),
		Table: table, Stop: stop, Abort: abort, state: stormState{Begin: begin, RunqFD: -1, RunqBefore: -1, RunqBegin: -1, RunqEnd: -1}}
}

// CountRunQueue has RunStorm read the thread's run-queue time
// (/proc/thread-self/schedstat of the thread that calls it, open as fd)
// at the start and after the last step: RunQueueNS. before is the
// thread's run-queue time read before it sleeps to the start (-1: none),
// for a thread that wakes past the start.
func (s *Storm) CountRunQueue(fd int, before int64) {
	s.state.RunqFD, s.state.RunqBefore = int64(fd), before
}

// RunQueueNS is how long the rank's thread waited on a run queue,
// runnable but not running, from the start until its last step (-1:
// unknown, or not done): the window of its completion time. The kernel
// counts a wait once the thread runs again, so a rank still waiting at
// the start reads it late; the lateness is counted back into the window
// (storm.c's runq_at_begin).
func (s *Storm) RunQueueNS() int64 {
	if s.state.RunqBegin < 0 || s.state.RunqEnd < s.state.RunqBegin {
		return -1
	}
	return s.state.RunqEnd - s.state.RunqBegin
}

// Errno is step i's errno, 0 on success.
func (s *Storm) Errno(i int) syscall.Errno { return syscall.Errno(s.Status[i] & statusErrnoMask) }

// Destroyed says whether unreg step i destroyed its QP, where the
// provider knows.
func (s *Storm) Destroyed(i int) Destroyed { return destroyedOf(s.Status[i]) }

// Unexpected says whether step i of p had an outcome other than its
// expectation, as the C loop judges it (xb_step_unexpected).
func (s *Storm) Unexpected(p *Program, i int) bool {
	st, e := &p.Steps[i], s.Errno(i)
	if e != syscall.Errno(st.Expect) {
		return true
	}
	if e != 0 {
		return false
	}
	switch d := s.Destroyed(i); st.Check {
	case CheckDestroyed:
		return d == NotDestroyed
	case CheckKept:
		return d == WasDestroyed
	}
	return false
}

// At is the step of the last StormUnexpected.
func (s *Storm) At() int { return int(s.state.At) }

// End is when the last step served ended (0 before any).
func (s *Storm) End() uint64 { return s.state.End }

// IdleNS is the time RunStorm spent with no step arrived, in no
// operation: the workload's wait.
func (s *Storm) IdleNS() uint64 { return s.state.IdleNS }

// RunStorm serves p's steps not done yet (see Storm) with chained
// timestamps into s.NS and s.Status, with p.Start as intended starts when
// p has them, until every step is done, a step's outcome is unexpected
// (the caller handles it and calls again to resume), the storm is halted,
// or the clock passed Until (call again to resume). The error is only for misuse.
func (m *Domain) RunStorm(p *Program, s *Storm) (StormOutcome, error) {
	if m.closed {
		return 0, ErrClosed
	}
	n := len(p.Steps)
	if len(s.NS) < n || len(s.Status) < n || len(s.Slot) < n || len(s.Done) < n || (p.Start != nil && len(p.Start) < n) ||
		s.Stop == nil || s.Abort == nil {
		return 0, fmt.Errorf("%w: storm of %d steps with %d slots, %d done flags", syscall.EINVAL, n, len(s.Slot), len(s.Done))
	}
	for i, k := range s.Slot[:n] {
		if int(k) > len(s.Table) {
			return 0, fmt.Errorf("%w: storm step %d on slot %d of a table of %d", syscall.EINVAL, i, k, len(s.Table))
		}
	}
	if n == 0 {
		return StormDone, nil
	}
	s.state.Until = s.Until
	return StormOutcome(cRunStorm(m.dev.ops, m.handle, p, s)), nil
}
