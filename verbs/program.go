package verbs

import (
	"fmt"
	"syscall"
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
// Build one with NewProgram, fill Steps (and Start), run it with
// RunProgram. The output arrays are indexed like Steps. Nothing in a
// program's run allocates.
//
// Extending: a new operation kind is a new Op value handled in the C loop
// (xb_run_program in batch.c) and in the providers' xb_ops tables.
type Program struct {
	Steps []Step
	// Start holds intended start times (CLOCK_MONOTONIC ns, as Now) in an
	// open loop; nil in a closed loop. A step never begins before its
	// start; if the loop is behind, it begins at once.
	Start []uint64
	// NS is each step's service time: from its actual start to its end,
	// measured with chained timestamps (one timer read per operation).
	NS []uint64
	// Resp is each step's response time in an open loop: from its
	// intended start to its end, so a stall delays every operation that
	// was due during it (the correction for coordinated omission).
	Resp   []uint64
	Status []uint32 // errno in the low 16 bits, destroy flags above
}

// ProgramStats is what RunProgram adds up over the steps it ran.
type ProgramStats struct {
	Unexpected uint64 // steps whose errno or destroy flag differs from Expect/Check
	Waits      uint64 // steps that waited for their intended start
	WaitNS     uint64 // time spent in those waits, inside no operation
	LateNS     uint64 // sum of wake-up lateness after the waits
	LateMaxNS  uint64 // the largest wake-up lateness
	BehindNS   uint64 // how late the last step began after its intended start
}

// NewProgram allocates a program of n steps; open adds the intended start
// and response time arrays of an open loop.
func NewProgram(n int, open bool) *Program {
	p := &Program{Steps: make([]Step, n), NS: make([]uint64, n), Status: make([]uint32, n)}
	if open {
		p.Start, p.Resp = make([]uint64, n), make([]uint64, n)
	}
	return p
}

// Len is the program's capacity in steps.
func (p *Program) Len() int { return len(p.Steps) }

// Errno is the errno of step i, 0 on success.
func (p *Program) Errno(i int) syscall.Errno { return syscall.Errno(p.Status[i] & statusErrnoMask) }

// Destroyed says whether unreg step i destroyed its QP.
func (p *Program) Destroyed(i int) Destroyed { return destroyedOf(p.Status[i]) }

// Unexpected says whether step i's outcome differs from its expectation,
// as the C loop counts it.
func (p *Program) Unexpected(i int) bool {
	s := &p.Steps[i]
	e := p.Errno(i)
	if e != syscall.Errno(s.Expect) {
		return true
	}
	if e != 0 {
		return false
	}
	switch d := p.Destroyed(i); s.Check {
	case CheckDestroyed:
		return d == NotDestroyed
	case CheckKept:
		return d == WasDestroyed
	}
	return false
}

// RunProgram runs steps [off, off+n) of p in one call into C and adds
// what happened to st. A step whose QP number exceeds 24 bits fails with
// EINVAL without reaching the provider. The error is only for misuse: a
// closed domain, a range outside the program. A step of an unknown op, or
// whose Back reaches before the program's first step, fails with EINVAL
// (it is not checked here: that would cost Go time per operation).
func (m *Domain) RunProgram(p *Program, off, n int, st *ProgramStats) error {
	if m.closed {
		return ErrClosed
	}
	l := len(p.Steps)
	if off < 0 || n < 0 || off+n > l || len(p.NS) < l || len(p.Status) < l ||
		(p.Start != nil && (len(p.Start) < l || len(p.Resp) < l)) {
		return fmt.Errorf("%w: steps [%d, %d) of a program of %d", syscall.EINVAL, off, off+n, l)
	}
	if n == 0 {
		return nil
	}
	cRunProgram(m.dev.ops, m.handle, p, off, n, st)
	return nil
}
