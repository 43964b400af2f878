package stats

import (
	"math"
	"testing"

	"golang.org/x/perf/benchmath"
)

// TestRepetitionsNeeded checks the minimum sample sizes against what
// benchmath itself says when it is given fewer.
func TestRepetitionsNeeded(t *testing.T) {
	for _, alpha := range []float64{0.2, 0.05, 0.01} {
		n := RepetitionsNeeded(alpha)
		thr := &benchmath.Thresholds{CompareAlpha: alpha}
		sep := func(n int, off float64) *benchmath.Sample {
			var v []float64
			for i := 0; i < n; i++ {
				v = append(v, off+float64(i))
			}
			return benchmath.NewSample(v, thr)
		}
		// Fully separated samples: significant with n, impossible with n−1.
		if c := benchmath.AssumeNothing.Compare(sep(n, 0), sep(n, 100)); c.P > alpha {
			t.Errorf("alpha %g: n=%d gives p=%g", alpha, n, c.P)
		}
		if c := benchmath.AssumeNothing.Compare(sep(n-1, 0), sep(n-1, 100)); c.P <= alpha || len(c.Warnings) == 0 {
			t.Errorf("alpha %g: n=%d gives p=%g, warnings %v; want not significant with a warning", alpha, n-1, c.P, c.Warnings)
		}
	}
	for _, conf := range []float64{0.9, 0.95, 0.99} {
		n := MedianCINeeded(conf)
		s := func(n int) benchmath.Summary {
			var v []float64
			for i := 0; i < n; i++ {
				v = append(v, float64(i))
			}
			return benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), conf)
		}
		if got := s(n); math.IsInf(got.Lo, 0) || math.IsInf(got.Hi, 0) {
			t.Errorf("confidence %g: n=%d has an infinite interval", conf, n)
		}
		if got := s(n - 1); !math.IsInf(got.Lo, 0) && !math.IsInf(got.Hi, 0) {
			t.Errorf("confidence %g: n=%d already has a finite interval", conf, n-1)
		}
	}
}

func TestMedianCINeededAt95(t *testing.T) {
	if n := MedianCINeeded(0.95); n != 6 {
		t.Errorf("MedianCINeeded(0.95) = %d, want 6 (1 − 2/32 = 93.75%% < 95%% ≤ 1 − 2/64)", n)
	}
}

// TestMedian holds the one median of the tree: the mean of the middle two
// of an even count (not the upper one the calibrations once took), no
// figure for none, and its input left as it was.
func TestMedian(t *testing.T) {
	big := math.MaxFloat64
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{big, big}, big},
		{[]float64{-big, big}, 0},
	} {
		in := append([]float64(nil), tt.in...)
		if got := Median(in); got != tt.want {
			t.Errorf("Median(%v) = %g, want %g", tt.in, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Fatalf("Median changed its input: %v, was %v", in, tt.in)
			}
		}
	}
	for _, in := range [][]float64{nil, {1, math.NaN(), 2}} {
		if got := Median(in); !math.IsNaN(got) {
			t.Errorf("Median(%v) = %g, want NaN", in, got)
		}
	}
	if got := MAD([]float64{1, 2, 3, 4, 100}); got != 1 {
		t.Errorf("MAD = %g, want 1 (|x−3|: 2 1 0 1 97)", got)
	}
	if got := TukeyOutliers([]float64{10, 11, 10, 12, 11, 10, 50}); len(got) != 1 || got[0] != 50 {
		t.Errorf("TukeyOutliers = %v, want [50]", got)
	}
	if got := TukeyOutliers([]float64{1, 2, 100}); got != nil {
		t.Errorf("TukeyOutliers of 3 values = %v, want none", got)
	}
}

func TestHolmAdjust(t *testing.T) {
	got := HolmAdjust([]float64{0.04, 0.01, 0.03})
	// Sorted 0.01·3, 0.03·2, 0.04·1, made monotone: 0.03, 0.06, 0.06.
	want := []float64{0.06, 0.03, 0.06}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("HolmAdjust = %v, want %v", got, want)
		}
	}
}
