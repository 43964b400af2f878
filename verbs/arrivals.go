package verbs

import (
	"math"
	"math/bits"
)

// Arrivals is an open loop's schedule of intended starts: one every
// Period ns, or after exponential gaps of mean Period (Poisson), from a
// seeded generator. Go (Advance, for a program run in ranges) and the C
// loop (a ring, RepeatProgram with Repeat.Open) draw from the same state
// with the same arithmetic, so a schedule goes on unchanged from one to
// the other: the ring exists so that an open loop need not come back to
// Go once a millisecond to be scheduled, a return that cost a cgo call
// that long ~15-40 µs in no operation, and every arrival due meanwhile
// waited for it.
//
// Its layout is C's struct xb_arrivals (xb.h); TestArrivalsLayout holds
// them together.
type Arrivals struct {
	Period  float64 // mean ns between intended starts
	poisson uint64
	// Next is the intended start of the next operation (CLOCK_MONOTONIC
	// ns, as Now).
	Next uint64
	// Frac is the fraction of a ns the schedule carries over.
	Frac float64
	// End, if not 0: a ring runs no operation due at or after it, and
	// ends there.
	End          uint64
	rngHi, rngLo uint64 // math/rand/v2's PCG (DXSM): the same stream from the same seeds
	// The sustained backlog, sampled by a ring at the end of every segment
	// (the caller samples between its own runs with Sample): OverNS adds
	// the time since Mark during which the loop was more than Limit
	// behind; BehindMax is the largest lateness sampled.
	Limit, Mark, OverNS, BehindMax uint64
	// Scheduled counts the intended starts drawn (Advance and the ring).
	Scheduled uint64
}

// NewArrivals is a schedule of mean gap period ns, exponential if
// poisson, drawn from the PCG generator of seeds seed1, seed2.
func NewArrivals(period float64, poisson bool, seed1, seed2 uint64) Arrivals {
	a := Arrivals{Period: period, rngHi: seed1, rngLo: seed2}
	if poisson {
		a.poisson = 1
	}
	return a
}

// Poisson says whether the gaps are exponential.
func (a *Arrivals) Poisson() bool { return a.poisson != 0 }

// uint64 is the generator's next number: math/rand/v2's PCG.Uint64, which
// pcg_next in batch.c computes too.
func (a *Arrivals) uint64() uint64 {
	const (
		mulHi, mulLo = 2549297995355413924, 4865540595714422341
		incHi, incLo = 6364136223846793005, 1442695040888963407
	)
	hi, lo := bits.Mul64(a.rngLo, mulLo)
	hi += a.rngHi*mulLo + a.rngLo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	a.rngHi, a.rngLo = hi, lo
	hi ^= hi >> 32
	hi *= 0xda942042e4dd58b5
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// Advance moves Next to the following intended start (arrivals_advance
// in batch.c does the same): an exponential gap by inversion, -ln(1-u)
// of a uniform u in [0, 1) of 53 bits.
func (a *Arrivals) Advance() {
	gap := a.Period
	if a.poisson != 0 {
		gap = -logUnit(1-float64(a.uint64()>>11)*0x1p-53) * a.Period
	}
	gap += a.Frac
	whole := uint64(gap)
	a.Frac = gap - float64(whole)
	a.Next += whole
	a.Scheduled++
}

// Over says whether the next arrival is due at or after End.
func (a *Arrivals) Over() bool { return a.End > 0 && a.Next >= a.End }

// Sample adds a sample of the backlog at now, the last operation begun
// behind ns after its intended start (arrivals_sample in batch.c).
func (a *Arrivals) Sample(behind, now uint64) {
	a.BehindMax = max(a.BehindMax, behind)
	if behind > a.Limit && now > a.Mark {
		a.OverNS += now - a.Mark
	}
	a.Mark = max(a.Mark, now)
}

// logUnit is ln x for x in [2^-53, 1]: the standard library's portable
// log (FreeBSD's e_log.c), which xb_log_unit in batch.c computes with the
// same operations in the same order, so that Go and C draw the same gaps
// without C needing libm (math.Log is assembly on amd64, and may round
// otherwise).
func logUnit(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	// x = f1 * 2^ki, f1 in [0.5, 1): x is normal, so its bits say it.
	b := math.Float64bits(x)
	ki := int64(b>>52&0x7ff) - 1022
	f1 := math.Float64frombits(b&^(0x7ff<<52) | 1022<<52)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := s2 * (l1 + s4*(l3+s4*(l5+s4*l7)))
	t2 := s4 * (l2 + s4*(l4+s4*l6))
	r := t1 + t2
	hfsq := 0.5 * f * f
	return k*ln2Hi - ((hfsq - (s*(hfsq+r) + k*ln2Lo)) - f)
}
