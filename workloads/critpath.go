package workloads

import (
	"container/heap"
	"math"

	"github.com/xrcbench/xrcbench/results"
)

// A storm's critical path is the makespan its plan would take if every
// operation cost what it was measured to cost and nothing else took any
// time: no rank noticing a QP number late, no harness between operations,
// no CPU taken by other work. The makespan beyond it is the harness's and
// the machine's (bench records the run-queue part; the rest is the
// harness's).
//
// Why a simulation and not the longest chain of the dependency graph: the
// graph's lower bounds (the busiest rank's own work; the longest chain of
// create -> registration -> the registering rank's next step) each leave
// out what the other has, and neither knows the order the ranks serve
// their steps in. A rank serves in plan order what has arrived and skips
// what has not, so a registration that waits for its number delays the
// rank only when nothing else is left to do, and a create delayed behind
// the rank's earlier steps delays every registration of its QP. Replaying
// that rule (the C loop's, verbs/storm.c) with the measured costs gives
// the makespan the rule itself implies, which is at least both bounds;
// what the real run adds to it is overhead, not the plan.

// critOp is one operation of a rank's program, as bench's stormBuild
// makes it from the plan's steps.
type critOp struct {
	kind    string
	slot    int   // the connection's slot + 1; 0: none
	start   int64 // intended start, ns after the storm's start
	publish bool  // its end sends the QP number back (fills the slot)
	needs   bool  // a registration: arrives once the slot holds a number
	elect   bool  // an election: creates if the slot is free, else registers
	back    bool  // runs only after the op before it (a modify after its create)
}

// CriticalPath replays the plan's rank rule with measured costs: cost
// gives the nanoseconds of one operation of kind (create, modify, reg,
// unreg, or modify_raced after a lost election) by rank. modify says
// whether creators move each QP out of RESET before sending its number
// back (--qp-state init or rtr): a registration then waits for the
// modify as well. won is, per connection, the rank that won its
// election in the run (-1, or a nil won: the replay's own race decides,
// the first rank to reach the slot): a run's elections fall as its timing
// did, and a replay that let them fall otherwise would give a rank
// creates it never made. It returns the simulated makespan and each
// rank's completion time, in ns after the storm's start; -1 when the plan
// cannot finish (a registration of a QP nobody creates).
//
// Not replayed: a re-wire's lost races (reg_retry and the restart's
// create), which depend on timing the plan does not fix; a re-wired
// connection's registrations take the first QP's number, as the C loop's
// do when they come before the re-wire.
func (p *StormPlan) CriticalPath(modify bool, won []int, cost func(rank int, kind string) int64) (int64, []int64) {
	n := len(p.Ranks)
	ops := make([][]critOp, n)
	for r, steps := range p.Ranks {
		// The same expansion of steps into operations as bench's
		// stormBuild: a create's number goes back after its modify
		// when there is one.
		create := func(slot int, at int64) {
			if !modify {
				ops[r] = append(ops[r], critOp{kind: OpCreate, slot: slot, start: at, publish: true})
				return
			}
			ops[r] = append(ops[r], critOp{kind: OpCreate, start: at},
				critOp{kind: results.OpModify, slot: slot, start: at, publish: true, back: true})
		}
		for _, s := range steps {
			slot, at := s.Conn+1, int64(s.Start)
			switch s.Act {
			case ActCreate:
				create(slot, at)
			case ActRewire:
				ops[r] = append(ops[r], critOp{kind: OpUnreg, slot: slot, start: at})
				create(slot, at)
			case ActReg:
				ops[r] = append(ops[r], critOp{kind: OpReg, slot: slot, start: at, needs: true})
			case ActElect:
				ops[r] = append(ops[r], critOp{kind: OpCreate, slot: slot, start: at, publish: true, elect: true})
				if modify {
					ops[r] = append(ops[r], critOp{kind: results.OpModify, start: at, back: true})
				}
			}
		}
	}
	const never = int64(math.MaxInt64)
	pub := make([]int64, p.QPs+1)   // when the slot's number is there; never: not yet scheduled
	claim := make([]int64, p.QPs+1) // when an election claimed it; never: free
	for i := range pub {
		pub[i], claim[i] = never, never
	}
	var pending pubHeap // publication times scheduled, not yet passed
	clock := make([]int64, n)
	idle := make([]bool, n)
	first := make([]int, n)
	done := make([][]bool, n)
	doneAt := make([]int64, n)
	lost := make([][]bool, n) // per op: an election this rank lost
	left := 0
	for r := range ops {
		done[r], lost[r] = make([]bool, len(ops[r])), make([]bool, len(ops[r]))
		if len(ops[r]) > 0 {
			left++
		}
	}
	for left > 0 {
		// Decisions in time order: what a rank sees at its clock was
		// decided by ranks whose clocks were earlier, so causality holds.
		r := -1
		for q := range ops {
			if first[q] < len(ops[q]) && clock[q] != never && (r < 0 || clock[q] < clock[r]) {
				r = q
			}
		}
		if r < 0 {
			return -1, nil // every rank left waits for a number nobody sends
		}
		t := clock[r]
		for len(pending) > 0 && pending[0] <= t {
			heap.Pop(&pending)
		}
		pick, next := -1, never
		for i := first[r]; i < len(ops[r]); i++ {
			o := &ops[r][i]
			if done[r][i] {
				continue
			}
			if o.start > t {
				next = o.start // in order of intended start: none later has come
				break
			}
			if o.back && !done[r][i-1] {
				continue
			}
			arrived := true
			switch {
			case o.needs:
				arrived = pub[o.slot] <= t
			case o.elect && winner(won, o.slot) == r:
				// the run's winner: nothing to wait for
			case o.elect && winner(won, o.slot) >= 0:
				arrived = pub[o.slot] <= t // a loser registers with the winner's number
			case o.elect:
				arrived = claim[o.slot] == never || pub[o.slot] <= t
			}
			if arrived {
				pick = i
				break
			}
		}
		if pick < 0 {
			// Nothing arrived: wait for the next arrival or number.
			if len(pending) > 0 && pending[0] < next {
				next = pending[0]
			}
			clock[r], idle[r] = next, true
			continue
		}
		o := &ops[r][pick]
		kind, publish := o.kind, o.publish
		if w := winner(won, o.slot); o.elect && (w >= 0 && w != r || w < 0 && claim[o.slot] != never) {
			kind, publish, lost[r][pick] = OpReg, false, true // lost: the winner's number is there
		} else if o.elect {
			claim[o.slot] = t
		}
		if o.back && lost[r][pick-1] {
			kind = results.OpModifyRaced
		}
		end := t + max(0, cost(r, kind))
		done[r][pick], idle[r], clock[r] = true, false, end
		if publish && pub[o.slot] == never {
			pub[o.slot] = end
			heap.Push(&pending, end)
			for q := range ops {
				if idle[q] && end < clock[q] {
					clock[q] = end
				}
			}
		}
		for first[r] < len(ops[r]) && done[r][first[r]] {
			first[r]++
		}
		if first[r] == len(ops[r]) {
			doneAt[r] = end
			left--
		}
	}
	makespan := int64(0)
	for _, d := range doneAt {
		makespan = max(makespan, d)
	}
	return makespan, doneAt
}

// winner is the rank won says won slot's election, -1 when none.
func winner(won []int, slot int) int {
	if slot < 1 || slot > len(won) {
		return -1
	}
	return won[slot-1]
}

// pubHeap is a min-heap of times.
type pubHeap []int64

func (h pubHeap) Len() int           { return len(h) }
func (h pubHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h pubHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pubHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *pubHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
