package verbs

import (
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Go's Step and C's struct xb_step must agree field by field: the C loop
// reads Go's array in place.
func TestStepLayout(t *testing.T) {
	cs, co := stepLayout()
	gs, goff := goStepLayout()
	if cs != gs || !slices.Equal(co, goff) {
		t.Fatalf("struct xb_step: C size %d offsets %v, Go size %d offsets %v", cs, co, gs, goff)
	}
	if s := statsSize(); s != 6*8 {
		t.Fatalf("struct xb_prog_stats is %d bytes, ProgramStats 48", s)
	}
}

// One program mixes kinds on one QP and on several, creates and unregs
// what it created through Back, and counts exactly the outcomes that differ
// from the expectations.
func TestProgramOutcomes(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	holder, user := d[0], d[1]
	q, err := holder.CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	reg := func(q uint32) Step { return Step{QPN: q, Op: uint8(OpReg)} }
	unreg := func(q uint32, c DestroyCheck) Step { return Step{QPN: q, Op: uint8(OpUnreg), Check: c} }
	for _, tt := range []struct {
		name       string
		steps      []Step
		unexpected []int // steps whose outcome differs from their expectation
		errnos     []syscall.Errno
	}{
		{"reg unreg on one QP", []Step{reg(q), unreg(q, CheckKept), reg(q), unreg(q, CheckKept)}, nil, []syscall.Errno{0, 0, 0, 0}},
		{"create then the creator's unreg", []Step{{Op: uint8(OpCreate)}, {Op: uint8(OpUnreg), Back: 1, Check: CheckDestroyed}},
			nil, []syscall.Errno{0, 0}},
		{"create, reg by nobody, unreg twice", []Step{{Op: uint8(OpCreate)}, {Op: uint8(OpUnreg), Back: 1, Check: CheckKept},
			{Op: uint8(OpUnreg), Back: 2, Expect: uint16(syscall.EINVAL)}}, []int{1}, []syscall.Errno{0, 0, syscall.EINVAL}},
		{"unreg of an unheld QP", []Step{unreg(q, CheckNone)}, []int{0}, []syscall.Errno{syscall.EINVAL}},
		{"expected failure that succeeds", []Step{{QPN: q, Op: uint8(OpReg), Expect: uint16(syscall.EINVAL)}, unreg(q, CheckNone)},
			[]int{0}, []syscall.Errno{0, 0}},
		{"QP number over 24 bits", []Step{{QPN: MaxQPN + 1, Op: uint8(OpReg), Expect: uint16(syscall.EINVAL)}}, nil, []syscall.Errno{syscall.EINVAL}},
		{"Back before the program", []Step{{Op: uint8(OpUnreg), Back: 1}}, []int{0}, []syscall.Errno{syscall.EINVAL}},
		{"unknown op", []Step{{Op: 200}}, []int{0}, []syscall.Errno{syscall.EINVAL}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProgram(len(tt.steps), false)
			copy(p.Steps, tt.steps)
			var st ProgramStats
			if err := user.RunProgram(p, 0, len(tt.steps), &st); err != nil {
				t.Fatal(err)
			}
			var got []int
			for i := range tt.steps {
				if p.Errno(i) != tt.errnos[i] {
					t.Errorf("step %d: errno %v, want %v", i, p.Errno(i), tt.errnos[i])
				}
				if p.Unexpected(i) {
					got = append(got, i)
				}
				if p.NS[i] == 0 {
					t.Errorf("step %d: no duration", i)
				}
			}
			if !slices.Equal(got, tt.unexpected) || st.Unexpected != uint64(len(tt.unexpected)) {
				t.Errorf("unexpected steps %v (C counted %d), want %v", got, st.Unexpected, tt.unexpected)
			}
		})
	}
}

// A range runs only its steps, and Back reaches a create run in an
// earlier range of the same program.
func TestProgramRanges(t *testing.T) {
	d := simPair(t, SimOptions{}, 1)[0]
	p := NewProgram(4, false)
	p.Steps[0] = Step{Op: uint8(OpCreate)}
	p.Steps[1] = Step{Op: uint8(OpUnreg), Back: 1, Check: CheckDestroyed}
	p.Steps[2] = Step{Op: uint8(OpCreate)}
	p.Steps[3] = Step{Op: uint8(OpUnreg), Back: 1, Check: CheckDestroyed}
	var st ProgramStats
	for _, r := range [][2]int{{0, 1}, {1, 2}, {3, 1}} {
		if err := d.RunProgram(p, r[0], r[1], &st); err != nil {
			t.Fatal(err)
		}
	}
	if st.Unexpected != 0 || p.Steps[0].QPN == 0 || p.Steps[0].QPN == p.Steps[2].QPN {
		t.Fatalf("%d unexpected, created %#x and %#x", st.Unexpected, p.Steps[0].QPN, p.Steps[2].QPN)
	}
	for _, r := range [][2]int{{-1, 1}, {3, 2}, {0, 5}} {
		if err := d.RunProgram(p, r[0], r[1], &st); err == nil {
			t.Errorf("range %v of 4 steps accepted", r)
		}
	}
}

// In an open loop a step waits for its intended start: its service time
// is the operation alone, its response time counts from the intended
// start, and a step that is due before the loop reaches it (a backlog)
// has the wait in its response time, not in its service time.
func TestProgramOpenLoop(t *testing.T) {
	const cost = 200 * time.Microsecond
	d := simPair(t, SimOptions{Cost: Cost{Reg: cost, Unreg: cost}}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	p := NewProgram(n, true)
	now := Now()
	for i := range n {
		p.Steps[i] = Step{QPN: q, Op: uint8(OpReg + Op(i%2))}
		// two 50 ms apart, then six all due with the second: the first
		// waits unless the machine stalls the thread for 50 ms
		p.Start[i] = now + 50*uint64(time.Millisecond)*uint64(min(i, 1)+1)
	}
	var st ProgramStats
	if err := d[1].RunProgram(p, 0, n, &st); err != nil {
		t.Fatal(err)
	}
	if st.Unexpected != 0 || st.Waits < 1 {
		t.Fatalf("%d unexpected, %d waits; want 0 and at least 1", st.Unexpected, st.Waits)
	}
	for i := range n {
		if p.NS[i] < uint64(cost) || p.Resp[i] < p.NS[i] {
			t.Errorf("step %d: service %d ns, response %d ns; want service >= %v and response >= service", i, p.NS[i], p.Resp[i], cost)
		}
	}
	// The last of the seven due together waited for the six before it.
	if p.Resp[n-1] < 5*uint64(cost) {
		t.Errorf("the last step's response %d ns does not include the backlog of 5 x %v", p.Resp[n-1], cost)
	}
	if st.BehindNS < 4*uint64(cost) {
		t.Errorf("the last step began %d ns behind its start, want >= 4 x %v", st.BehindNS, cost)
	}
	if st.WaitNS == 0 || st.LateMaxNS > st.WaitNS+uint64(time.Second) {
		t.Errorf("waited %d ns, latest wake-up %d ns", st.WaitNS, st.LateMaxNS)
	}
}

// Running a program allocates nothing and costs one cgo call, whatever
// its length.
func TestProgramCost(t *testing.T) {
	dev, err := Open(Options{Provider: "null"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dom, err := dev.OpenDomain(filepath.Join(t.TempDir(), "d"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	p := NewProgram(4096, false)
	for i := range p.Steps {
		p.Steps[i] = Step{QPN: 7, Op: uint8(OpReg + Op(i%2))}
	}
	var st ProgramStats
	calls0 := runtime.NumCgoCall()
	allocs := testing.AllocsPerRun(100, func() {
		if err := dom.RunProgram(p, 0, len(p.Steps), &st); err != nil {
			t.Fatal(err)
		}
	})
	calls := runtime.NumCgoCall() - calls0
	if allocs != 0 {
		t.Errorf("%v allocations per program", allocs)
	}
	if calls > 101 {
		t.Errorf("%d cgo calls for 101 programs", calls)
	}
	if st.Unexpected != 0 {
		t.Errorf("%d unexpected outcomes on null", st.Unexpected)
	}
}
