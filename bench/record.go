package bench

import (
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/hdrv2"
	"github.com/xrcbench/xrcbench/results"
)

// The hot path records a latency by incrementing one count in an array
// laid out exactly as an HDR histogram with the project's bounds (1 ns to
// 100 s, 3 significant digits: unit magnitude 0, 2048 sub-buckets). This
// is the index computation of hdrhistogram-go without its per-value
// checks, which cost as much as the null provider's operation itself;
// histogramInto turns the array back into a histogram where one is needed
// (the flusher encodes the array itself, internal/hdrv2).
// The op programs' C loop counts with its own copy of bucketIndex
// (xb_bucket_index in verbs/xb.h); TestBucketIndexAgrees holds Go, C and
// hdrhistogram-go together.
const (
	subBucketHalfCountMag = 10 // log2(2048) - 1, for 3 significant digits
	subBucketHalfCount    = 1 << subBucketHalfCountMag
	subBucketMask         = 2*subBucketHalfCount - 1
)

// histCounts is the length of the counts array of results.NewHistogram.
var histCounts = len(results.NewHistogram().Export().Counts)

// hdrLayout is results.NewHistogram's layout, for the intervals' codec
// (the flushers encode, the coordinator decodes).
var hdrLayout = func() hdrv2.Layout {
	h := results.NewHistogram()
	return hdrv2.Layout{Digits: int32(h.SignificantFigures()), Lowest: h.LowestTrackableValue(), Highest: h.HighestTrackableValue(), Counts: histCounts}
}()

// recordAll adds one count per value of ns to counts, and returns their
// sum. Values past the histogram's top (100 s) count in its last bucket.
func recordAll(counts []int64, ns []uint64) (sum uint64) {
	for _, v := range ns {
		sum += v
		counts[bucketIndex(v, len(counts))]++
	}
	return sum
}

// bucketIndex is v's index in a counts array of length n; values past the
// top count in the last bucket. Small enough for the compiler to inline.
func bucketIndex(v uint64, n int) int {
	bucket := 64 - bits.LeadingZeros64(v|subBucketMask) - (subBucketHalfCountMag + 1)
	idx := (bucket+1)<<subBucketHalfCountMag + int(v>>uint(bucket)) - subBucketHalfCount
	if uint(idx) >= uint(n) {
		idx = n - 1
	}
	return idx
}

// histogramInto makes h (a results.NewHistogram) hold exactly counts. It
// reuses h, so a thread allocates no histogram per interval and its
// memory does not grow with the run.
func histogramInto(h *hdrhistogram.Histogram, counts []int64) *hdrhistogram.Histogram {
	h.Reset()
	for idx, c := range counts {
		if c != 0 {
			h.RecordValues(valueAt(idx), c)
		}
	}
	return h
}

// valueAt is the lowest value that recordAll counts at index idx: the
// inverse of its index computation.
func valueAt(idx int) int64 {
	bucket := idx>>subBucketHalfCountMag - 1
	sub := idx&(subBucketHalfCount-1) + subBucketHalfCount
	if bucket < 0 {
		bucket, sub = 0, idx
	}
	return int64(sub) << bucket
}

// highestEquivalent is the highest value that recordAll counts at index
// idx (what hdrhistogram-go's Max gives for a histogram whose highest
// count is there).
func highestEquivalent(idx int) int64 {
	bucket := max(idx>>subBucketHalfCountMag-1, 0)
	return valueAt(idx) + 1<<bucket - 1
}
