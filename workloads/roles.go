package workloads

import (
	"fmt"
	"sort"
	"strings"
	"syscall"

	"github.com/xrcbench/xrcbench/internal/errname"
)

// Creator is the thread (global index among n) that creates QP q in round
// r of a rounds workload. It rotates across rounds and spreads the QPs of
// one round over the threads, so creation runs in parallel.
func Creator(round int64, q, n int) int { return int((round + int64(q)) % int64(n)) }

// Closer is the thread that does the last unreg of QP q in round r: the
// thread after the creator, so that with two threads or more the QP is
// destroyed by a registrant that did not create it.
func Closer(round int64, q, n int) int { return (Creator(round, q, n) + 1) % n }

// Takes reports whether thread t takes part in a rounds phase run "by"
// for a QP with the given creator and closer.
func Takes(by string, t, creator, closer int) bool {
	switch by {
	case ByAll, ByEach:
		return true
	case ByCreator:
		return t == creator
	case ByCloser:
		return t == closer
	case ByAllButCreat:
		return t != creator
	case ByAllButCloser:
		return t != closer
	}
	return false
}

// IsErrnoName reports whether s names an errno, such as "EINVAL".
func IsErrnoName(s string) bool { _, ok := ErrnoByName(s); return ok }

// ErrnoByName returns the errno called s.
func ErrnoByName(s string) (syscall.Errno, bool) {
	for e := syscall.Errno(1); e < 200; e++ {
		if ErrnoName(e) == s {
			return e, true
		}
	}
	return 0, false
}

// ErrnoName is the symbolic name of e ("EINVAL"), or "errno N"
// (internal/errname, the one spelling the project uses).
func ErrnoName(e syscall.Errno) string { return errname.Name(e) }

// simulate runs the spec's phases on a model of the XRC registration
// state (docs/design.md, S1-S5) for 1, 2 and 3 threads, with the same role
// assignment the engine uses, and rejects phase orders that cannot work:
// reg of a QP that does not exist or is already registered, an unreg that
// would destroy, an unreg_last that would not, QPs left behind at the end
// of a pass.
func simulate(s *Spec) error {
	for n := 1; n <= 3; n++ {
		var err error
		if s.Mode == Rounds {
			err = simulateRounds(s, n)
		} else {
			err = simulateLoop(s, n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

const holder = -1 // the holder registrant in the model

type modelQP struct {
	alive bool
	regs  map[int]bool
}

func newQP(regs ...int) *modelQP {
	q := &modelQP{alive: true, regs: map[int]bool{}}
	for _, r := range regs {
		q.regs[r] = true
	}
	return q
}

func (s *Spec) phaseErr(i int, n int, format string, args ...any) error {
	p := s.Phases[i]
	return &SyntaxError{File: s.File, Line: p.Line,
		Msg: fmt.Sprintf("phase %d (%s by %s), with %d thread(s): ", i+1, p.Op, p.By, n) + fmt.Sprintf(format, args...)}
}

func simulateLoop(s *Spec, n int) error {
	const qps = 2
	slots := map[int][]*modelQP{} // per thread (or one shared set under key 0)
	set := func(t int) []*modelQP {
		if s.QPs.Scope == Shared {
			t = 0
		}
		if slots[t] == nil {
			slots[t] = make([]*modelQP, qps)
			for q := range slots[t] {
				if s.QPs.Holder {
					slots[t][q] = newQP(holder)
				} else {
					slots[t][q] = &modelQP{regs: map[int]bool{}}
				}
			}
		}
		return slots[t]
	}
	// Threads run independently; one thread after the other is one of the
	// interleavings, and with per-pass balance it stands for all of them.
	for t := 0; t < n; t++ {
		for pass := 0; pass < 2; pass++ {
			for i, p := range s.Phases {
				for q := range set(t) {
					qp := set(t)[q]
					switch p.Op {
					case OpCreate:
						if qp.alive && qp.regs[t] {
							return s.phaseErr(i, n, "the QPs of the previous create are still registered: destroy them (unreg_last) first")
						}
						set(t)[q] = newQP(t)
					case OpReg, OpUnreg, OpUnregLast:
						if err := step(s, i, n, qp, p.Op, []int{t}); err != nil {
							return err
						}
					}
				}
			}
			if err := endOfPass(s, n, set(t), "pass"); err != nil {
				return err
			}
		}
	}
	return nil
}

func simulateRounds(s *Spec, n int) error {
	const qps = 3
	cur := make([]*modelQP, qps)
	for q := range cur {
		if s.QPs.Holder {
			cur[q] = newQP(holder)
		} else {
			cur[q] = &modelQP{regs: map[int]bool{}}
		}
	}
	for r := int64(0); r < 2; r++ {
		for i, p := range s.Phases {
			for q := range cur {
				creator, closer := Creator(r, q, n), Closer(r, q, n)
				var who []int
				for t := 0; t < n; t++ {
					if Takes(p.By, t, creator, closer) {
						who = append(who, t)
					}
				}
				switch p.Op {
				case OpCreate:
					if len(who) > 1 {
						return s.phaseErr(i, n, "%d threads would create the same QP: create by creator", len(who))
					}
					if len(who) == 1 {
						if cur[q].alive {
							return s.phaseErr(i, n, "the QP of the previous create still exists: destroy it (unreg_last) in an earlier phase")
						}
						cur[q] = newQP(who[0])
					}
				case OpReg, OpUnreg, OpUnregLast:
					if err := step(s, i, n, cur[q], p.Op, who); err != nil {
						return err
					}
				}
			}
		}
		if err := endOfPass(s, n, cur, "round"); err != nil {
			return err
		}
	}
	return nil
}

// step applies one phase's op by the threads who to qp, all at once (a
// phase ends at a barrier, so its operations are unordered).
func step(s *Spec, i, n int, qp *modelQP, op string, who []int) error {
	if len(who) == 0 {
		return nil
	}
	if !qp.alive {
		return s.phaseErr(i, n, "the QP does not exist at this point: create it first, or set qps.holder")
	}
	switch op {
	case OpReg:
		for _, t := range who {
			if qp.regs[t] {
				return s.phaseErr(i, n, "thread %d is already registered with the QP (a no-op in the legacy API, a second handle upstream): unreg first", t)
			}
			qp.regs[t] = true
		}
	case OpUnreg, OpUnregLast:
		for _, t := range who {
			if !qp.regs[t] {
				return s.phaseErr(i, n, "thread %d unregisters a QP it is not registered with", t)
			}
		}
		left := len(qp.regs) - len(who)
		if op == OpUnreg && left == 0 {
			return s.phaseErr(i, n, "this unreg removes the last registration and destroys the QP: make it unreg_last, by one thread after a barrier")
		}
		if op == OpUnregLast && (left != 0 || len(who) != 1) {
			return s.phaseErr(i, n, "unreg_last must be the only remaining registration (%d thread(s) unregister, %d registration(s) would remain)", len(who), left)
		}
		for _, t := range who {
			delete(qp.regs, t)
		}
		qp.alive = left > 0
	}
	return nil
}

func endOfPass(s *Spec, n int, qps []*modelQP, what string) error {
	for _, qp := range qps {
		if !qp.alive {
			continue
		}
		var held []string
		for r := range qp.regs {
			if r != holder {
				held = append(held, fmt.Sprint(r))
			}
		}
		if len(held) > 0 {
			sort.Strings(held)
			last := len(s.Phases) - 1
			return s.phaseErr(last, n, "at the end of a %s, thread(s) %s still hold registrations: every reg needs its unreg", what, strings.Join(held, ","))
		}
	}
	return nil
}
