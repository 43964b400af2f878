package verbs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// Go's Step and C's struct xb_step must agree field by field: the C loop
// reads Go's array in place.
func TestStepLayout(t *testing.T) {
	cs, co := stepLayout()
	gs, goff := goStepLayout()
	if cs != gs || !slices.Equal(co, goff) {
		t.Fatalf("struct xb_step: C size %d offsets %v, Go size %d offsets %v", cs, co, gs, goff)
	}
	if s := statsSize(); s != unsafe.Sizeof(ProgramStats{}) {
		t.Fatalf("struct xb_prog_stats is %d bytes, ProgramStats %d", s, unsafe.Sizeof(ProgramStats{}))
	}
	if s := failureSize(); s != unsafe.Sizeof(Failure{}) {
		t.Fatalf("struct xb_fail is %d bytes, Failure %d", s, unsafe.Sizeof(Failure{}))
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
			p.NS = make([]uint64, len(tt.steps))
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
	p.NS, p.Resp = make([]uint64, n), make([]uint64, n)
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

// The C loop counts every step once, in its tag's histogram, at the index
// of its own service (and response) time, and sums the service times per
// tag: checked against the per-step latencies of the same run.
func TestProgramRecording(t *testing.T) {
	const cost = 20 * time.Microsecond
	d := simPair(t, SimOptions{Cost: Cost{Reg: cost}}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	for _, open := range []bool{false, true} {
		const n, tags, buckets = 64, 3, 4096
		p := NewProgram(n, open)
		p.NS = make([]uint64, n)
		p.Rec = Recording{Buckets: buckets, Service: make([]int64, tags*buckets), Count: make([]uint64, tags), SumNS: make([]uint64, tags)}
		if open {
			p.Resp = make([]uint64, n)
			p.Rec.Response = make([]int64, tags*buckets)
		}
		now := Now()
		for i := range n {
			// reg (tag 0), unreg (tag 1), and every eighth pair's reg
			// is tagged 2
			p.Steps[i] = Step{QPN: q, Op: uint8(OpReg + Op(i%2)), Tag: uint32(i % 2)}
			if i%16 == 0 {
				p.Steps[i].Tag = 2
			}
			if open {
				p.Start[i] = now + uint64(i)*uint64(10*time.Microsecond)
			}
		}
		var st ProgramStats
		if err := d[1].RunProgram(p, 0, n, &st); err != nil {
			t.Fatal(err)
		}
		if st.Unexpected != 0 || len(p.Failures()) != 0 {
			t.Fatalf("open %v: %d unexpected, failures %v", open, st.Unexpected, p.Failures())
		}
		wantSvc := make([]int64, tags*buckets)
		wantResp := make([]int64, tags*buckets)
		wantCount, wantSum := make([]uint64, tags), make([]uint64, tags)
		for i, s := range p.Steps {
			wantSvc[int(s.Tag)*buckets+cBucketIndex(p.NS[i], buckets)]++
			wantCount[s.Tag]++
			wantSum[s.Tag] += p.NS[i]
			if open {
				wantResp[int(s.Tag)*buckets+cBucketIndex(p.Resp[i], buckets)]++
			}
		}
		if !slices.Equal(p.Rec.Service, wantSvc) || !slices.Equal(p.Rec.Count, wantCount) || !slices.Equal(p.Rec.SumNS, wantSum) {
			t.Errorf("open %v: counts %v sums %v, want %v %v (or the histograms differ)", open, p.Rec.Count, p.Rec.SumNS, wantCount, wantSum)
		}
		if open && !slices.Equal(p.Rec.Response, wantResp) {
			t.Errorf("response histograms differ from the steps' response times")
		}
		if wantSum[0] < uint64(cost)*n/2*7/8 {
			t.Errorf("tag 0 sums %d ns over %d regs of %v", wantSum[0], wantCount[0], cost)
		}
	}
}

// A step whose tag is not recorded fails with EINVAL without reaching the
// provider; only unexpected outcomes are kept, and running from a step on
// forgets those from there.
func TestProgramFailures(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProgram(4, false)
	p.Rec = Recording{Buckets: 8, Service: make([]int64, 8), Count: make([]uint64, 1), SumNS: make([]uint64, 1)}
	p.Steps[0] = Step{QPN: q, Op: uint8(OpReg), Tag: 1}                  // tag outside: EINVAL
	p.Steps[1] = Step{QPN: q, Op: uint8(OpUnreg), Check: CheckKept}      // never registered: EINVAL
	p.Steps[2] = Step{QPN: q, Op: uint8(OpReg)}                          // fine
	p.Steps[3] = Step{QPN: q, Op: uint8(OpUnreg), Check: CheckDestroyed} // kept, not destroyed
	var st ProgramStats
	if err := d[1].RunProgram(p, 0, 4, &st); err != nil {
		t.Fatal(err)
	}
	want := []Failure{{0, uint32(syscall.EINVAL)}, {1, uint32(syscall.EINVAL)}}
	got := p.Failures()
	if len(got) != 3 || !slices.Equal(got[:2], want) || got[2].Step != 3 || p.Destroyed(3) != NotDestroyed {
		t.Fatalf("failures %v, want %v and step 3 not destroyed", got, want)
	}
	if st.Unexpected != 3 || p.Errno(2) != 0 || !p.Unexpected(3) || p.Unexpected(2) || p.Rec.Count[0] != 3 {
		t.Errorf("%d unexpected, step 2 errno %v, recorded %d steps of tag 0", st.Unexpected, p.Errno(2), p.Rec.Count[0])
	}
	// Run steps 2 and 3 again (q is not held after step 3): step 3 is now fine, steps 0 and 1 are still remembered
	p.Steps[3].Check = CheckKept
	if err := d[1].RunProgram(p, 2, 2, &st); err != nil {
		t.Fatal(err)
	}
	if got := p.Failures(); !slices.Equal(got, want) {
		t.Errorf("after steps 2 and 3 again: failures %v, want %v", got, want)
	}
	p.Rec.SumNS = nil
	if err := d[1].RunProgram(p, 2, 2, &st); err == nil {
		t.Errorf("a recording without sums was accepted")
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
	p.Rec = Recording{Buckets: 1 << 15, Service: make([]int64, 2<<15), Count: make([]uint64, 2), SumNS: make([]uint64, 2)}
	for i := range p.Steps {
		p.Steps[i] = Step{QPN: 7, Op: uint8(OpReg + Op(i%2)), Tag: uint32(i % 2)}
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
	if p.Rec.Count[0]+p.Rec.Count[1] != 101*4096 {
		t.Errorf("recorded %v steps of 101 x 4096", p.Rec.Count)
	}
	// A ring as well: 101 calls of 3 times the program (2 wraps).
	var stop uint32
	rep := &Repeat{Stop: &stop, Poll: time.Millisecond} // kept across calls, as the engine does
	calls0 = runtime.NumCgoCall()
	allocs = testing.AllocsPerRun(100, func() {
		rep.Until, rep.MaxSteps, rep.Pos = Now()+uint64(time.Hour), 3*4096, 0
		if err := dom.RepeatProgram(p, 0, len(p.Steps), rep, &st); err != nil || rep.Laps != 2 {
			t.Fatal(err, rep.Laps)
		}
	})
	if calls := runtime.NumCgoCall() - calls0; allocs != 0 || calls > 101 {
		t.Errorf("%v allocations and %d cgo calls for 101 rings", allocs, calls)
	}
}

// RepeatProgram runs a ring: from Pos, wrapping at its end, until a limit,
// and records every step it ran. Its limits are looked at between
// segments: the first segment is one step, so a limit already reached
// ends the call after one step.
func TestRepeatProgram(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	set := uint32(1)
	var unset uint32
	// a ring of 6: reg q, unreg q (tags 0 and 1); the plain ring (every
	// check made once before the loop) and, with a reg of a QP number past
	// 24 bits (EINVAL, as expected), the general one
	ring := func(general bool) *Program {
		p := NewProgram(6, false)
		p.Rec = Recording{Buckets: 4096, Service: make([]int64, 3*4096), Count: make([]uint64, 3), SumNS: make([]uint64, 3)}
		for i := range 6 {
			p.Steps[i] = Step{QPN: q, Op: uint8(OpReg + Op(i%2)), Tag: uint32(i % 2), Check: CheckKept}
		}
		if general {
			p.Steps[2] = Step{QPN: MaxQPN + 1, Op: uint8(OpReg), Tag: 2, Expect: uint16(syscall.EINVAL)}
			p.Steps[3] = Step{QPN: q, Op: uint8(OpReg), Tag: 0}
			p.Steps[4] = Step{QPN: q, Op: uint8(OpUnreg), Tag: 1, Check: CheckKept}
			p.Steps[5] = Step{QPN: MaxQPN + 1, Op: uint8(OpReg), Tag: 2, Expect: uint16(syscall.EINVAL)}
		}
		return p
	}
	far := Now() + uint64(time.Hour)
	for _, tt := range []struct {
		name            string
		general         bool
		rep             Repeat
		steps, laps     uint64
		pos             int
		atLeast, atMost time.Duration // the call's length, when not 0
	}{
		{"max steps from step 2", false, Repeat{Until: far, MaxSteps: 11, Pos: 2}, 11, 2, 1, 0, 0},
		{"max steps, general loop", true, Repeat{Until: far, MaxSteps: 11, Pos: 3}, 11, 2, 2, 0, 0},
		{"whole laps end at the ring's end", false, Repeat{Until: far, MaxSteps: 12}, 12, 1, 6, 0, 0},
		{"pos at the end is the start", false, Repeat{Until: far, MaxSteps: 4, Pos: 6}, 4, 0, 4, 0, 0},
		{"until passed: one segment", false, Repeat{Until: 1, Pos: 4}, 1, 0, 5, 0, 0},
		{"stop set: one segment", false, Repeat{Until: far, Stop: &set, Abort: &unset, Poll: time.Millisecond}, 1, 0, 1, 0, 0},
		{"abort set: one segment", true, Repeat{Until: far, Stop: &unset, Abort: &set, Poll: time.Millisecond}, 1, 0, 1, 0, 0},
		{"until in 30ms", false, Repeat{Stop: &unset, Poll: time.Millisecond}, 0, 0, -1, 30 * time.Millisecond, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := ring(tt.general)
			rep := tt.rep
			if tt.atLeast > 0 {
				rep.Until = Now() + uint64(tt.atLeast)
			}
			var st ProgramStats
			t0 := Now()
			if err := d[1].RepeatProgram(p, 0, 6, &rep, &st); err != nil {
				t.Fatal(err)
			}
			took := time.Duration(Now() - t0)
			if tt.pos >= 0 && (rep.Steps != tt.steps || rep.Laps != tt.laps || rep.Pos != tt.pos) {
				t.Errorf("ran %d steps, %d laps, stopped at %d; want %d, %d, %d", rep.Steps, rep.Laps, rep.Pos, tt.steps, tt.laps, tt.pos)
			}
			if tt.atLeast > 0 && (took < tt.atLeast || took > tt.atMost || rep.Steps < 100) {
				t.Errorf("took %v for %d steps, want %v to %v", took, rep.Steps, tt.atLeast, tt.atMost)
			}
			var recorded uint64
			for _, c := range p.Rec.Count {
				recorded += c
			}
			if recorded != rep.Steps || st.Unexpected != 0 {
				t.Errorf("recorded %d steps of %d run, %d unexpected", recorded, rep.Steps, st.Unexpected)
			}
			// What the ring holds where it stopped: q after a reg of q.
			if prev := (rep.Pos + 5) % 6; p.Steps[prev].Op == uint8(OpReg) && p.Steps[prev].QPN == q {
				if _, err := d[1].Unreg(q); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A ring with Begin waits for it in C before its first step and says when
// it could start; stopped before it, it runs nothing and says 0.
func TestRepeatProgramBegin(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	set, unset := uint32(1), uint32(0)
	for _, tt := range []struct {
		name   string
		begin  time.Duration // from now; < 0: in the past
		stop   *uint32
		steps  uint64        // a ring's: a program that is no ring runs its 2 steps, or none
		atMost time.Duration // the call's length
	}{
		{"waits for a start 20ms ahead", 20 * time.Millisecond, &unset, 4, 2 * time.Second},
		{"a start behind is no wait", -time.Millisecond, &unset, 4, 2 * time.Second},
		{"no start", 0, nil, 4, 2 * time.Second},
		{"stopped before a start an hour ahead", time.Hour, &set, 0, 2 * time.Second},
	} {
		for _, ring := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, ring %v", tt.name, ring), func(t *testing.T) {
				p := NewProgram(2, false)
				p.Rec = Recording{Buckets: 4096, Service: make([]int64, 2*4096), Count: make([]uint64, 2), SumNS: make([]uint64, 2)}
				p.Steps[0] = Step{QPN: q, Op: uint8(OpReg), Tag: 0}
				p.Steps[1] = Step{QPN: q, Op: uint8(OpUnreg), Tag: 1}
				t0 := Now()
				rep := Repeat{Until: t0 + uint64(time.Hour), MaxSteps: 4, Stop: tt.stop}
				if tt.begin != 0 {
					rep.Begin = uint64(int64(t0) + int64(tt.begin))
				}
				var st ProgramStats
				want := tt.steps
				if ring {
					err = d[1].RepeatProgram(p, 0, 2, &rep, &st)
				} else {
					err = d[1].RunProgramAt(p, 0, 2, &st, &rep)
					rep.Steps, want = p.Rec.Count[0]+p.Rec.Count[1], min(want, 2)
				}
				if err != nil {
					t.Fatal(err)
				}
				took := time.Duration(Now() - t0)
				if rep.Steps != want || p.Rec.Count[0]+p.Rec.Count[1] != want {
					t.Errorf("ran %d steps, recorded %v; want %d", rep.Steps, p.Rec.Count, want)
				}
				switch {
				case want == 0 && rep.Begun != 0:
					t.Errorf("Begun %d, want 0 for a call stopped before its start", rep.Begun)
				case want > 0 && (rep.Begun < t0 || rep.Begun < rep.Begin):
					t.Errorf("Begun %d, before the call (%d) or the start (%d)", rep.Begun, t0, rep.Begin)
				}
				if tt.begin > 0 && want > 0 && took < tt.begin {
					t.Errorf("took %v, before its start %v ahead", took, tt.begin)
				}
				if took > tt.atMost {
					t.Errorf("took %v, want at most %v", took, tt.atMost)
				}
			})
		}
	}
}

// An unexpected outcome ends the ring at the end of its segment, with the
// failures of the last lap only; a ring that creates, or a position
// outside it, is refused.
func TestRepeatProgramFailures(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProgram(4, false)
	p.Rec = Recording{Buckets: 4096, Service: make([]int64, 2*4096), Count: make([]uint64, 2), SumNS: make([]uint64, 2)}
	for i := range 4 {
		p.Steps[i] = Step{QPN: q, Op: uint8(OpReg + Op(i%2)), Tag: uint32(i % 2), Check: CheckKept}
	}
	p.Steps[3].Check = CheckDestroyed // sim keeps q: the holder still holds it
	rep := Repeat{Until: Now() + uint64(time.Hour), MaxSteps: 1000}
	var st ProgramStats
	if err := d[1].RepeatProgram(p, 0, 4, &rep, &st); err != nil {
		t.Fatal(err)
	}
	// Segments of 1, 2, 4 steps: the one of 2 steps (2 and 3) ends it.
	if rep.Pos != 4 || rep.Steps != 4 || st.Unexpected != 1 || !slices.Equal(p.Failures(), []Failure{{3, statusDestroyKnown}}) {
		t.Errorf("stopped at %d after %d steps, %d unexpected, failures %v; want 4, 4, 1, step 3 kept", rep.Pos, rep.Steps, st.Unexpected, p.Failures())
	}
	for _, bad := range []struct {
		name string
		pos  int
		op   Op
	}{{"pos before the ring", -1, OpReg}, {"pos past the ring", 5, OpReg}} {
		rep := Repeat{Until: Now(), Pos: bad.pos}
		if err := d[1].RepeatProgram(p, 0, 4, &rep, &st); err == nil {
			t.Errorf("%s: accepted", bad.name)
		}
	}
}
