package results

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// seq holds the values 1..n, each exact at 3 significant digits (< 2048).
func seq(n int) *hdrhistogram.Histogram {
	h := NewHistogram()
	for v := int64(1); v <= int64(n); v++ {
		h.RecordValue(v)
	}
	return h
}

// Known answers of the nearest-rank definition: the ⌈p·n/100⌉-th value.
// At 360 values p99 is the 357th (hdrhistogram-go's ValueAtQuantile gives
// the 356th); at 1000 values p99.9 is the 999th, although p/100·n comes
// out one ulp above 999.
func TestPercentileNearestRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want int64
	}{
		{360, 99, 357},
		{360, 99.9, 360},
		{360, 50, 180},
		{1000, 99.9, 999},
		{2000, 99.9, 1998},
		{10, 99, 10},
		{10, 90, 9},
		{7, 50, 4},
		{1, 99.9, 1},
		{100, 0, 1},
		{100, 100, 100},
		{1999, 99, 1980},
	} {
		if got := ValueAtPercentile(seq(c.n), c.p); got != c.want {
			t.Errorf("n=%d p%g: %d, want %d", c.n, c.p, got, c.want)
		}
	}
	if got := ValueAtPercentile(NewHistogram(), 50); got != 0 {
		t.Errorf("empty histogram p50 = %d, want 0", got)
	}
	// Summarize, which result.json and compare use, is the same definition.
	if s := Summarize(seq(360)); s.P99 != 357 || s.P50 != 180 || s.P90 != 324 || s.P999 != 360 {
		t.Errorf("Summarize(1..360) = %+v, want p50 180, p90 324, p99 357, p99.9 360", s)
	}
}

// HdrHistogram's JavaScript reader agrees exactly with ValueAtPercentile
// on every histogram here: small and large counts, values across buckets
// (where equivalent values are reported as the bucket's highest).
func TestPercentileMatchesJSReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var hists []*hdrhistogram.Histogram
	for _, n := range []int{1, 2, 7, 10, 99, 100, 101, 360, 999, 1000, 1001, 2000, 12345} {
		hists = append(hists, seq(n))
		h := NewHistogram()
		for i := 0; i < n; i++ {
			h.RecordValue(int64(rng.ExpFloat64()*20000) + 500)
		}
		hists = append(hists, h)
	}
	var in strings.Builder
	for _, h := range hists {
		enc, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		in.WriteString(enc + "\n")
	}
	lines := strings.Split(strings.TrimSpace(hdrJS(t, in.String(), "percentiles")), "\n")
	if len(lines) != len(hists) {
		t.Fatalf("the JS reader printed %d lines for %d histograms", len(lines), len(hists))
	}
	for i, h := range hists {
		vs := ValuesAtPercentiles(h, 0, 50, 90, 99, 99.9, 100)
		want := fmt.Sprint(h.TotalCount(), " ", strings.Trim(fmt.Sprint(vs), "[]"))
		if lines[i] != want {
			t.Errorf("histogram %d: JS reader %q, xrcbench %q (count p0 p50 p90 p99 p99.9 p100)", i, lines[i], want)
		}
	}
}
