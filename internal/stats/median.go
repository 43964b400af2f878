package stats

import (
	"math"
	"slices"

	"github.com/montanaflynn/stats"
)

// Median is the median of xs: the middle value, or the mean of the two
// middle values of an even count; NaN when xs is empty (there is no
// median, and a NaN cannot pass for a figure: callers that may have none
// ask first) or holds a NaN (which has no rank). xs is not changed.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 || slices.ContainsFunc(xs, math.IsNaN) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	a, b := s[n/2-1], s[n/2]
	if m := (a + b) / 2; !math.IsInf(m, 0) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return m
	}
	// Two finite values near the largest float64: their sum overflows,
	// their mean does not.
	return a/2 + b/2
}

// MAD is the median absolute deviation of xs from their median (NaN when
// xs is empty): the spread that one wild value does not move.
func MAD(xs []float64) float64 {
	med := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return Median(dev)
}

// TukeyOutliers are the values of xs outside Tukey's fences, below
// Q1 − 1.5·IQR or above Q3 + 1.5·IQR, in no particular order. Quartiles
// of fewer than 4 values are the values themselves, so no fence can be
// drawn and none is an outlier.
func TukeyOutliers(xs []float64) []float64 {
	if len(xs) < 4 {
		return nil
	}
	out, err := stats.QuartileOutliers(stats.Float64Data(xs))
	if err != nil {
		return nil
	}
	return append(out.Mild, out.Extreme...)
}
