package results

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Percentiles are nearest-rank: the value at percentile p of n recorded
// values is the ⌈p/100·n⌉-th smallest (at least the first), reported as
// the highest value equivalent to it at the histogram's precision. This
// is the definition of HdrHistogram's Java and JavaScript implementations
// (including their guard against a floating-point product one ulp above
// an integer), so result.json, the report, compare and any standard
// HdrHistogram reader of the .hlog files give the same figure.
// hdrhistogram-go's ValueAtQuantile rounds the rank to nearest instead,
// which at small counts takes the value one rank too low; nothing in
// xrcbench calls it.

// PercentileRank is the 1-based rank of percentile p (0 to 100) among n
// values under the nearest-rank definition.
func PercentileRank(p float64, n int64) int64 {
	if n <= 0 {
		return 0
	}
	p = min(max(p, 0), 100)
	fp := p / 100 * float64(n)
	rank := int64(1)
	if fp > 0 {
		// fp can come out one ulp above the true integer (99.9/100·1000 is
		// 999.0000000000001); the readers take that ulp off before
		// rounding up, and so does this.
		rank = max(rank, int64(math.Ceil(fp-ulp(fp))))
	}
	return min(rank, n)
}

// ulp is the unit in the last place of x > 0, as the JavaScript reader
// computes it.
func ulp(x float64) float64 { return math.Pow(2, math.Floor(math.Log2(x))-52) }

// ValueAtPercentile is the nearest-rank value of h at percentile p (0 to
// 100); 0 for an empty histogram.
func ValueAtPercentile(h *hdrhistogram.Histogram, p float64) int64 {
	return ValuesAtPercentiles(h, p)[0]
}

// ValuesAtPercentiles is ValueAtPercentile for several percentiles.
func ValuesAtPercentiles(h *hdrhistogram.Histogram, ps ...float64) []int64 {
	out := make([]int64, len(ps))
	n := h.TotalCount()
	if n == 0 {
		return out
	}
	for i, p := range ps {
		if p <= 0 {
			// The 0th percentile is the lowest equivalent value of the
			// first, as in the readers; the library does the same.
			out[i] = h.ValueAtPercentile(0)
			continue
		}
		// hdrhistogram-go takes rank ⌊q/100·n + 0.5⌋; asking it for
		// q = 100·(r − 0.25)/n makes that r, a quarter rank away from
		// either neighbour, far beyond floating-point error, and keeps
		// its fast scan.
		r := PercentileRank(p, n)
		q := 100.0
		if r < n {
			q = 100 * (float64(r) - 0.25) / float64(n)
		}
		out[i] = h.ValueAtPercentile(q)
	}
	return out
}
