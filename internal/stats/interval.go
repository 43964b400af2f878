package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Interval is a sample's median with its distribution-free confidence
// interval: Finite is false when the sample is too small for the
// confidence asked (MedianCINeeded), and Lo and Hi are then infinite.
// Confidence is the interval's own level, at least the one asked: the
// interval runs between two order statistics, whose coverage comes in
// steps.
type Interval struct {
	N          int
	Median     float64
	Lo, Hi     float64
	Finite     bool
	Confidence float64
}

// MedianInterval is the median of xs and its confidence interval at level
// confidence, as benchstat computes it (benchmath.AssumeNothing). xs is
// not changed; an empty xs has N 0 and nothing else.
func MedianInterval(xs []float64, confidence float64) Interval {
	iv := Interval{N: len(xs)}
	if iv.N == 0 {
		return iv
	}
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds), confidence)
	iv.Median, iv.Lo, iv.Hi, iv.Confidence = sum.Center, sum.Lo, sum.Hi, sum.Confidence
	iv.Finite = !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0)
	return iv
}

// MedianCINeeded is the smallest number of repetitions for which the
// median has a finite confidence interval at level confidence: the
// interval [min, max] covers the median with probability 1 − 2·0.5ⁿ.
func MedianCINeeded(confidence float64) int {
	n := 2
	for 1-2*math.Pow(0.5, float64(n)) < confidence && n < 1000 {
		n++
	}
	return n
}
