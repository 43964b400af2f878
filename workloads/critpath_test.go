package workloads

import (
	"slices"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
)

// TestCriticalPathKnownPlans replays hand-made plans whose schedules are
// worked out by hand below, to the nanosecond.
func TestCriticalPathKnownPlans(t *testing.T) {
	create := func(c int) Step { return Step{Act: ActCreate, Conn: c} }
	reg := func(c int) Step { return Step{Act: ActReg, Conn: c} }
	elect := func(c int) Step { return Step{Act: ActElect, Conn: c} }
	// per-rank costs, ns
	type costs map[string]int64
	cases := []struct {
		name     string
		qps      int
		ranks    [][]Step
		modify   bool
		won      []int
		cost     []costs
		makespan int64
		done     []int64
	}{
		{
			// Both create at 0..120, both numbers are there at 120, both
			// register 120..135.
			name: "two ranks, one QP each", qps: 2,
			ranks:    [][]Step{{create(0), reg(1)}, {create(1), reg(0)}},
			cost:     []costs{{OpCreate: 120, OpReg: 15}, {OpCreate: 120, OpReg: 15}},
			makespan: 135, done: []int64{135, 135},
		},
		{
			// Rank 1 skips its registrations (no number yet), creates
			// c2 at 0..50, waits; c0's number at 100: reg 100..110;
			// c1's at 200: reg 200..210. Rank 0 creates 0..100,
			// 100..200, registers c2 (there since 50) 200..220.
			name: "skipping what has not arrived", qps: 3,
			ranks:    [][]Step{{create(0), create(1), reg(2)}, {reg(1), reg(0), create(2)}},
			cost:     []costs{{OpCreate: 100, OpReg: 20}, {OpCreate: 50, OpReg: 10}},
			makespan: 220, done: []int64{220, 210},
		},
		{
			// The longest chain beats the busiest rank: rank 0's own
			// work is 200, rank 1's 20, the makespan 210 (create c0,
			// create c1, reg c1).
			name: "a chain longer than any rank's work", qps: 2,
			ranks:    [][]Step{{create(0), create(1)}, {reg(1), reg(0)}},
			cost:     []costs{{OpCreate: 100}, {OpReg: 10}},
			makespan: 210, done: []int64{200, 210},
		},
		{
			// The number goes back after the modify: create 0..100,
			// modify 100..130; the registration 130..145.
			name: "registration waits for the modify", qps: 1, modify: true,
			ranks:    [][]Step{{create(0)}, {reg(0)}},
			cost:     []costs{{OpCreate: 100, results.OpModify: 30}, {OpReg: 15}},
			makespan: 145, done: []int64{130, 145},
		},
		{
			// Both elect at 0; rank 0 decides first and creates 0..100
			// (number back at 100), modifies 100..130; rank 1 finds the
			// slot claimed, waits, registers 100..110 and its modify is
			// refused, 110..115.
			name: "election", qps: 1, modify: true,
			ranks: [][]Step{{elect(0)}, {elect(0)}},
			cost: []costs{{OpCreate: 100, results.OpModify: 30},
				{OpCreate: 100, OpReg: 10, results.OpModify: 30, results.OpModifyRaced: 5}},
			makespan: 130, done: []int64{130, 115},
		},
		{
			// The same, with rank 1 the run's winner: it creates 0..100
			// and modifies 100..130; rank 0 registers 100..110 and its
			// refused modify takes 110..115.
			name: "election as the run had it", qps: 1, modify: true, won: []int{1},
			ranks: [][]Step{{elect(0)}, {elect(0)}},
			cost: []costs{{OpCreate: 100, OpReg: 10, results.OpModify: 30, results.OpModifyRaced: 5},
				{OpCreate: 100, results.OpModify: 30}},
			makespan: 130, done: []int64{115, 130},
		},
		{
			// Intended starts: rank 0's create of c1 comes at 500.
			name: "poisson arrivals", qps: 2,
			ranks: [][]Step{{create(0), {Act: ActCreate, Conn: 1, Start: 500}},
				{reg(0), {Act: ActReg, Conn: 1, Start: 500}}},
			cost:     []costs{{OpCreate: 100}, {OpReg: 10}},
			makespan: 610, done: []int64{600, 610},
		},
		{
			name: "a rank with nothing to do", qps: 1,
			ranks:    [][]Step{{create(0)}, {}},
			cost:     []costs{{OpCreate: 100}, {}},
			makespan: 100, done: []int64{100, 0},
		},
		{
			// Nobody creates c1: the plan cannot finish.
			name: "a number nobody sends", qps: 2,
			ranks:    [][]Step{{create(0)}, {reg(1)}},
			cost:     []costs{{OpCreate: 100}, {OpReg: 10}},
			makespan: -1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &StormPlan{QPs: c.qps, Ranks: c.ranks}
			got, done := p.CriticalPath(c.modify, c.won, func(r int, kind string) int64 { return c.cost[r][kind] })
			if got != c.makespan || !slices.Equal(done, c.done) {
				t.Errorf("critical path %d, ranks done %v; want %d, %v", got, done, c.makespan, c.done)
			}
		})
	}
}

// TestCriticalPathBounds: on planned storms the replay is at least the
// busiest rank's own work and at least one create plus one registration
// (the shortest chain any registration has), and for a burst with
// round-robin creators and equal costs it is exact: every rank creates
// its share, then registers the others' (their numbers are all there by
// then).
func TestCriticalPathBounds(t *testing.T) {
	const cr, rg = int64(120 * time.Microsecond), int64(15 * time.Microsecond)
	cost := func(_ int, kind string) int64 {
		switch kind {
		case OpCreate:
			return cr
		case OpReg:
			return rg
		}
		return 0
	}
	for _, ranks := range []int{2, 3, 8} {
		for _, nodes := range []int{2, 5} {
			st := &Storm{Rails: 1, Arrival: ArrivalBurst, Teardown: TeardownExit, Creators: CreatorsRoundRobin, Contacts: 1}
			p := st.Plan(nodes, ranks, 1)
			got, _ := p.CriticalPath(false, nil, cost)
			// each rank: nodes-1 creates, (nodes-1)*(ranks-1) regs
			want := int64(nodes-1)*cr + int64((nodes-1)*(ranks-1))*rg
			if got != want {
				t.Errorf("%d nodes x %d ranks: critical path %d, want %d", nodes, ranks, got, want)
			}
		}
	}
	st := &Storm{Rails: 1, Arrival: ArrivalBurst, Teardown: TeardownExit, Creators: CreatorsRandom, Contacts: 1}
	p := st.Plan(5, 4, 7)
	got, _ := p.CriticalPath(false, nil, cost)
	for r, steps := range p.Ranks {
		var own int64
		for _, s := range steps {
			if s.Act == ActCreate {
				own += cost(r, OpCreate)
			} else {
				own += cost(r, OpReg)
			}
		}
		if got < own {
			t.Errorf("random creators: critical path %d below rank %d's own work %d", got, r, own)
		}
	}
	if got < cr+rg {
		t.Errorf("random creators: critical path %d below a create and a registration", got)
	}
}
