package bench

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// indexValues are the latencies the index functions are checked at: every
// value of the exact range and beyond, every power of two and its
// neighbours, random ones, and the top.
func indexValues() []uint64 {
	var values []uint64
	for v := uint64(0); v < 5000; v++ {
		values = append(values, v)
	}
	for s := 0; s < 64; s++ {
		p := uint64(1) << s
		values = append(values, p-1, p, p+1, p+p/2)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		values = append(values, r.Uint64N(results.HistMaxNS))
	}
	return append(values, results.HistMaxNS-1, results.HistMaxNS)
}

// recordAll and histogramInto must give the very histogram RecordValue
// gives, over the whole range.
func TestRecordMatchesHDR(t *testing.T) {
	var values []uint64
	for _, v := range indexValues() {
		if v <= results.HistMaxNS {
			values = append(values, v)
		}
	}
	counts := make([]int64, histCounts)
	recordAll(counts, values)
	got := histogramInto(results.NewHistogram(), counts)
	want := results.NewHistogram()
	for _, v := range values {
		if err := want.RecordValue(int64(v)); err != nil {
			t.Fatalf("RecordValue(%d): %v", v, err)
		}
	}
	if !got.Equals(want) {
		t.Fatalf("histograms differ: total %d vs %d, p50 %d vs %d, max %d vs %d",
			got.TotalCount(), want.TotalCount(), got.ValueAtQuantile(50), want.ValueAtQuantile(50), got.Max(), want.Max())
	}
	// Past the top: kept, in the last bucket, not dropped.
	counts = make([]int64, histCounts)
	recordAll(counts, []uint64{results.HistMaxNS * 10, 1 << 63})
	if h := histogramInto(results.NewHistogram(), counts); h.TotalCount() != 2 {
		t.Errorf("values past the top: total %d, want 2", h.TotalCount())
	}
}

// The op programs' C loop counts latencies with its own index function
// (xb_bucket_index): it must agree with Go's at every value, past the top
// included (the last bucket), and with hdrhistogram-go's, which
// TestRecordMatchesHDR holds Go's to, value by value here for the exact
// range and the powers of two.
func TestBucketIndexAgrees(t *testing.T) {
	bad := 0
	for _, v := range indexValues() {
		if g, c := bucketIndex(v, histCounts), verbs.HistogramIndex(v, histCounts); g != c {
			if bad++; bad < 10 {
				t.Errorf("value %d: Go index %d, C index %d", v, g, c)
			}
		}
	}
	top := uint64(valueAt(histCounts)) // the first value past the array
	for _, v := range []uint64{top, top + 1, results.HistMaxNS * 10, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		if g, c := bucketIndex(v, histCounts), verbs.HistogramIndex(v, histCounts); g != histCounts-1 || c != histCounts-1 {
			t.Errorf("value %d past the top: Go index %d, C index %d, want the last, %d", v, g, c, histCounts-1)
		}
	}
	h := results.NewHistogram()
	for _, v := range []uint64{0, 1, 2047, 2048, 2049, 4095, 4096, 4097, 1 << 20, 1<<20 + 1, 1<<30 - 1, results.HistMaxNS} {
		h.Reset()
		if err := h.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
		idx := slices.IndexFunc(h.Export().Counts, func(c int64) bool { return c != 0 })
		if c := verbs.HistogramIndex(v, histCounts); c != idx {
			t.Errorf("value %d: C index %d, hdrhistogram-go's %d", v, c, idx)
		}
	}
}
