//go:build cgo

package verbs

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// Arrivals is struct xb_arrivals: C reads and writes it in place.
func TestArrivalsLayout(t *testing.T) {
	var a Arrivals
	cs, co := arrivalsLayout()
	gs, goff := unsafe.Sizeof(a), []uintptr{unsafe.Offsetof(a.Next), unsafe.Offsetof(a.End), unsafe.Offsetof(a.rngLo), unsafe.Offsetof(a.Scheduled)}
	if cs != gs || !slices.Equal(co, goff) {
		t.Fatalf("struct xb_arrivals: C size %d offsets %v, Go size %d offsets %v", cs, co, gs, goff)
	}
}

// logUnit is ln on (0, 1] to within a rounding.
func TestLogUnit(t *testing.T) {
	for _, x := range []float64{0x1p-53, 1e-9, 0.25, 0.5, 0.70710678118654752440, 0.7071067811865476, 0.9, 1 - 0x1p-53, 1} {
		if g, w := logUnit(x), math.Log(x); math.Abs(g-w) > 2e-16*math.Max(1, math.Abs(w)) {
			t.Errorf("logUnit(%g) = %.17g, ln %.17g", x, g, w)
		}
	}
}

// Go and C draw the same schedule from the same state: the generator is
// math/rand/v2's PCG, the gaps have the mean asked for and, Poisson, the
// exponential's spread; the fixed schedule carries its fractions of a ns.
func TestArrivalsGoAndC(t *testing.T) {
	ref := rand.NewPCG(7, 11)
	a := NewArrivals(1, true, 7, 11)
	for i := range 1000 {
		if g, w := a.uint64(), ref.Uint64(); g != w {
			t.Fatalf("number %d: %#x, math/rand/v2's PCG %#x", i, g, w)
		}
	}
	const n = 200000
	for _, tt := range []struct {
		period  float64
		poisson bool
	}{{20000, true}, {1e9 / 3, false}, {20000, false}, {7.5, true}} {
		g := NewArrivals(tt.period, tt.poisson, 3, 5)
		g.Next = 1000
		c := g
		want := make([]uint64, n)
		for i := range want {
			want[i] = g.Next
			g.Advance()
		}
		got := make([]uint64, n)
		arrivalsDrawC(&c, got)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("period %g poisson %v: arrival %d at %d in C, %d in Go", tt.period, tt.poisson, i, got[i], want[i])
			}
		}
		if c.Scheduled != n || g.Scheduled != n || c.rngHi != g.rngHi || c.rngLo != g.rngLo || c.Frac != g.Frac {
			t.Errorf("period %g: C drew %d (state %x %x), Go %d (%x %x)", tt.period, c.Scheduled, c.rngHi, c.rngLo, g.Scheduled, g.rngHi, g.rngLo)
		}
		mean := float64(want[n-1]-want[0]) / (n - 1)
		var sq float64
		for i := 1; i < n; i++ {
			d := float64(want[i]-want[i-1]) - mean
			sq += d * d
		}
		sd := math.Sqrt(sq / (n - 1))
		if math.Abs(mean/tt.period-1) > 0.01 {
			t.Errorf("period %g: mean gap %g", tt.period, mean)
		}
		if tt.poisson && tt.period > 1000 && math.Abs(sd/mean-1) > 0.02 {
			t.Errorf("period %g: gaps' standard deviation %g of a mean %g, want an exponential's (equal)", tt.period, sd, mean)
		}
		if !tt.poisson && sd > 1 {
			t.Errorf("period %g: fixed gaps spread by %g ns", tt.period, sd)
		}
	}
}

// An open ring runs each step at its intended start, drawn from the
// schedule in C, across laps, and ends before the first arrival due at
// or after End; its response times count from the intended starts and
// its backlog is sampled; a program without Start is refused.
func TestRepeatProgramOpen(t *testing.T) {
	d := simPair(t, SimOptions{}, 2)
	q, err := d[0].CreateRcvQP()
	if err != nil {
		t.Fatal(err)
	}
	p := NewProgram(4, true)
	p.Rec = Recording{Buckets: 4096, Service: make([]int64, 2*4096), Response: make([]int64, 2*4096), Count: make([]uint64, 2), SumNS: make([]uint64, 2)}
	for i := range 4 {
		p.Steps[i] = Step{QPN: q, Op: uint8(OpReg + Op(i%2)), Tag: uint32(i % 2), Check: CheckKept}
	}
	const period, want = 200_000, 100 // 5000 a second for 20 ms
	a := NewArrivals(period, false, 1, 2)
	t0 := Now() + uint64(time.Millisecond)
	a.Next, a.End, a.Mark, a.Limit = t0, t0+want*period, t0, uint64(time.Second)
	rep := Repeat{Until: Now() + uint64(time.Hour), Poll: time.Millisecond, Open: &a}
	var st ProgramStats
	if err := d[1].RepeatProgram(p, 0, 4, &rep, &st); err != nil {
		t.Fatal(err)
	}
	end := Now()
	// It ends at the ring's end or just past it, wrapped.
	if rep.Steps != want || a.Scheduled != want || rep.Laps*4+uint64(rep.Pos) != want || !a.Over() {
		t.Errorf("ran %d steps (%d laps, at %d), drew %d, over %v; want %d steps, the schedule over", rep.Steps, rep.Laps, rep.Pos, a.Scheduled, a.Over(), want)
	}
	if first := t0 + (want-1)*period; end < first {
		t.Errorf("ended %v before the last arrival", time.Duration(first-end))
	}
	// (A busy machine wakes a sleeper late, and the step after that one
	// may find itself behind: not every step waits.)
	if st.Waits == 0 || st.WaitNS < uint64(want*period/4) {
		t.Errorf("%d waits of %v, want the steps to have waited for their starts", st.Waits, time.Duration(st.WaitNS))
	}
	var count, resp uint64
	for k := range 2 {
		count += p.Rec.Count[k]
		for _, c := range p.Rec.Response[k*4096 : (k+1)*4096] {
			resp += uint64(c)
		}
	}
	if count != want || resp != want || a.Mark < t0 || a.OverNS != 0 {
		t.Errorf("counted %d, %d response times, sampled to %d (over %d); want %d, marked past the start", count, resp, a.Mark, a.OverNS, want)
	}
	// Over already: nothing runs.
	rep.Pos = 0
	if err := d[1].RepeatProgram(p, 0, 4, &rep, &st); err != nil || rep.Steps != 0 {
		t.Errorf("past the end: %v, %d steps", err, rep.Steps)
	}
	closed := NewProgram(4, false)
	closed.Rec = Recording{}
	if err := d[1].RepeatProgram(closed, 0, 4, &Repeat{Until: Now(), Open: &a}, &st); err == nil || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("an open ring without intended starts: %v, want EINVAL", err)
	}
}
