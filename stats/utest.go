package stats

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// UTest is the two-sided p-value of the Mann-Whitney U test of a against
// b, as benchstat computes it (exact for small samples, the normal
// approximation beyond). Neither slice is changed.
func UTest(a, b []float64, alpha float64) float64 {
	thr := &benchmath.Thresholds{CompareAlpha: alpha}
	// NewSample sorts in place: give it copies.
	sa := benchmath.NewSample(slices.Clone(a), thr)
	sb := benchmath.NewSample(slices.Clone(b), thr)
	return benchmath.AssumeNothing.Compare(sa, sb).P
}

// MinUTestP is the smallest two-sided p-value the Mann-Whitney U test can
// give for samples of n1 and n2 values: all of one below all of the other,
// one arrangement of C(n1+n2, n1) in each direction.
func MinUTestP(n1, n2 int) float64 {
	// C(n1+n2, n1) as a running product: exact in float64 for the sample
	// sizes of repetitions, and it saturates to +Inf rather than overflow.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// SeparatedP is the p-value UTest gives n1 values wholly apart from n2:
// the smallest it can give. It is MinUTestP where UTest is exact (small
// samples); beyond that UTest's normal approximation gives far more (3
// against 189: 0.003, not 2·10⁻⁶), so it is asked rather than computed.
func SeparatedP(n1, n2 int, alpha float64) float64 {
	sep := func(n int, off float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = off + float64(i)
		}
		return v
	}
	return UTest(sep(n1, 0), sep(n2, float64(n1)), alpha)
}

// RepetitionsNeeded is the smallest number of repetitions per run with
// which the Mann-Whitney U test can reach alpha at all.
func RepetitionsNeeded(alpha float64) int {
	n := 1
	for MinUTestP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

// HolmAdjust is Holm's step-down adjustment of the p-values ps, in their
// order: p(i)·(m−i) for the i-th smallest of m, made monotone, so that the
// chance of any false finding among the m stays at alpha.
func HolmAdjust(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	out := make([]float64, len(ps))
	m, prev := len(idx), 0.0
	for i, j := range idx {
		out[j] = math.Min(1, math.Max(prev, float64(m-i)*ps[j]))
		prev = out[j]
	}
	return out
}
