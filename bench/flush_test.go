package bench

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// An interval's end costs the measured thread a swap, not the encoding:
// with both kinds' service and response arrays full (4 histograms of 2000
// distinct values each), the fastest of 20 interval ends takes under
// 100 µs (encoding them on the thread took milliseconds, issue 25). The
// fastest, since a busy machine can only lengthen one. And what the
// flusher sends is exactly what the thread counted in that interval: the
// clear sets it hands back hold nothing of the one before.
func TestIntervalEndDoesNotWait(t *testing.T) {
	th := nullThread(t, "steady", 1, func(c *workerConfig) { c.Rate = 1000 })
	sent := make(chan *intervalMsg, 1)
	th.report = func(m *intervalMsg) { sent <- m }
	th.measuring, th.ivStart = true, verbs.Now()
	defer th.closeFlush()
	fastest := time.Hour
	for round := range 20 {
		for k, r := range th.recs {
			if r.iv[0] != 0 || r.ivResp[0] != 0 {
				t.Fatalf("round %d: %s's arrays are not clear", round, r.kind)
			}
			for i := range 2000 {
				r.iv[bucketIndex(uint64(1000+7*i), histCounts)] += int64(round + 1)
				r.ivResp[bucketIndex(uint64(1000+11*i+k), histCounts)]++
			}
			r.ivN = 2000 * int64(round+1)
		}
		t0 := verbs.Now()
		if err := th.flushIntervalAt(t0); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Duration(verbs.Now()-t0))
		m := <-sent
		for _, r := range th.recs {
			for name, want := range map[string]int64{r.kind: 2000 * int64(round+1), r.kind + results.ResponseSuffix: 2000} {
				h, err := results.DecodeHistogram(m.Hists[name])
				if err != nil {
					t.Fatalf("round %d: %s: %v", round, name, err)
				}
				if h.TotalCount() != want {
					t.Errorf("round %d: %s holds %d latencies, want the interval's %d", round, name, h.TotalCount(), want)
				}
			}
		}
	}
	if fastest >= 100*time.Microsecond {
		t.Errorf("the fastest of 20 interval ends took %v, want under 100µs: the thread waits for its report", fastest)
	}
	t.Logf("the fastest interval end took %v", fastest)
}

// The flusher's encoder writes what results.EncodeHistogram writes for
// the histogram holding the same counts, byte for byte (so every reader of
// the .hlog and result.json reads it as before), and allocates only the
// string it returns: hdrhistogram-go's encoder allocated ~850 KB per
// histogram, a garbage collection at every interval's end.
func TestV2EncoderMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	one := func(v uint64, n int64) []int64 {
		c := make([]int64, histCounts)
		c[bucketIndex(v, histCounts)] = n
		return c
	}
	spread := make([]int64, histCounts)
	for range 100_000 {
		spread[bucketIndex(uint64(rng.ExpFloat64()*20_000)+900, histCounts)]++
	}
	dense := make([]int64, histCounts)
	for i := range 3000 {
		dense[i] = int64(i%3) * (1 << uint(i%40)) // zeros alone and in runs, counts of up to 9 bytes
	}
	e := newV2Encoder()
	h := results.NewHistogram()
	for name, counts := range map[string][]int64{
		"1ns": one(1, 1), "10µs": one(10_000, 5), "past the top": one(1<<62, 3), "huge count": one(1234, 1<<60),
		"spread": spread, "dense": dense,
	} {
		got, err := e.encode(counts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := results.EncodeHistogram(histogramInto(h, counts))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: the encoder wrote %d bytes, hdrhistogram-go %d, and they differ", name, len(got), len(want))
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { e.encode(spread) }); allocs > 1 {
		t.Errorf("%.0f allocations per encoding, want the string alone", allocs)
	}
}
