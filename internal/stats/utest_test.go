package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// permutationP is the reference UTest is held to, computed the slow way
// and apart from it: midranks of the pooled values, then every one of
// the C(n1+n2, n1) splits enumerated, counting those whose
// |U − n1·n2/2| is at least the observed one.
func permutationP(a, b []float64) float64 {
	pooled := append(append([]float64(nil), a...), b...)
	n, n1 := len(pooled), len(a)
	rank := make([]float64, n) // midrank of each pooled value, by index
	for i, x := range pooled {
		below, equal := 0, 0
		for _, y := range pooled {
			switch {
			case y < x:
				below++
			case y == x:
				equal++
			}
		}
		rank[i] = float64(below) + float64(equal+1)/2
	}
	stat := func(mask uint64) float64 {
		r := 0.0
		for m := mask; m != 0; m &= m - 1 {
			r += rank[bits.TrailingZeros64(m)]
		}
		u := r - float64(n1*(n1+1))/2
		return math.Abs(u - float64(n1*(n-n1))/2)
	}
	obs := stat(1<<n1 - 1) // a is the first n1 pooled values
	var extreme, total float64
	// Every n-bit mask with n1 bits set, in order (Gosper's hack).
	for m := uint64(1)<<n1 - 1; m < 1<<n; {
		total++
		if stat(m) >= obs-1e-9 {
			extreme++
		}
		c := m & -m
		r := m + c
		m = ((r^m)>>2)/c | r
	}
	return extreme / total
}

// TestUTestExactWithTies holds UTest to the enumerated permutation test
// on random samples full of ties (values from a handful of levels, as
// quantized HDR percentiles are), both ways round, to 1e-9.
func TestUTestExactWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	draw := func(n, levels int, shift int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(10 * (rng.IntN(levels) + shift))
		}
		return v
	}
	type sample struct{ a, b []float64 }
	cases := []sample{
		// The audit's example: benchmath gave 0.091 one way, 0.030 the other.
		{[]float64{6510, 6510, 6510, 6510, 7000, 7490, 7490}, []float64{7000, 7490, 7490, 7490, 7490}},
		{[]float64{5, 5, 5}, []float64{5, 5, 5, 5}}, // all tied
		{[]float64{1}, []float64{2}},
		{[]float64{1, 2, 3}, []float64{4, 5, 6}},
	}
	for range 150 {
		n1, n2 := 1+rng.IntN(8), 1+rng.IntN(8)
		cases = append(cases, sample{draw(n1, 1+rng.IntN(5), 0), draw(n2, 1+rng.IntN(5), rng.IntN(2))})
	}
	// The largest the issue names, 12 against 12 (2.7 million splits), and
	// a lopsided pair of the same size.
	cases = append(cases, sample{draw(12, 4, 0), draw(12, 4, 1)}, sample{draw(3, 3, 1), draw(12, 3, 0)})
	for i, c := range cases {
		want := permutationP(c.a, c.b)
		ab, ba := UTest(c.a, c.b), UTest(c.b, c.a)
		if math.Abs(ab-want) > 1e-9 || math.Abs(ba-want) > 1e-9 {
			t.Errorf("case %d: UTest(%v, %v) = %.12g, reversed %.12g; the permutation test gives %.12g", i, c.a, c.b, ab, ba, want)
		}
		if ab < 0 || ab > 1 {
			t.Errorf("case %d: p %g outside [0, 1]", i, ab)
		}
	}
	if p := UTest(cases[0].a, cases[0].b); math.Abs(p-48.0/792) > 1e-12 {
		t.Errorf("the audit's example: p %.12g, want 48/792 = %.12g", p, 48.0/792)
	}
}

// TestUTestNormalApproximation holds the large-sample path to the exact
// count where both can be computed (40 against 40 tied values, where the
// approximation is known to be good), and checks that an empty side or a
// sample of only ties decides nothing.
func TestUTestNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 20 {
		a, b := make([]float64, 40), make([]float64, 40)
		for j := range a {
			a[j] = float64(rng.IntN(6))
			b[j] = float64(rng.IntN(6) + i%3)
		}
		blocks, obs := tieBlocks(a, b)
		d := obs - 40*81
		if d < 0 {
			d = -d
		}
		dev := func(s int) int { return max(s-40*81, 40*81-s) }
		exact, normal := exactU(blocks, 40, 80, d, dev), normalU(blocks, 40, 40, d)
		if math.Abs(exact-normal) > 0.01 {
			t.Errorf("draw %d: exact p %.4f, normal approximation %.4f", i, exact, normal)
		}
	}
	big := make([]float64, 100)
	for i := range big {
		big[i] = 3
	}
	for _, c := range []struct{ a, b []float64 }{{nil, []float64{1}}, {[]float64{1}, nil}, {big, big}} {
		if p := UTest(c.a, c.b); p != 1 {
			t.Errorf("UTest(%d values, %d values) = %g, want 1", len(c.a), len(c.b), p)
		}
	}
	// Beyond the exact count: 60 against 60 wholly apart is far below any alpha.
	lo, hi := make([]float64, 60), make([]float64, 60)
	for i := range lo {
		lo[i], hi[i] = float64(i), float64(100+i)
	}
	if p := UTest(lo, hi); p > 1e-15 || p != UTest(hi, lo) {
		t.Errorf("60 against 60 apart: p %g (reversed %g)", p, UTest(hi, lo))
	}
}
