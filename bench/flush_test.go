package bench

import (
	"encoding/base64"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

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
	for _, tt := range []struct {
		name string
		bell func() int
	}{{"woken by its bell", newBell}, {"parked on its channel (no eventfd)", func() int { return -1 }}} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(f func() int) { newBell = f }(newBell)
			newBell = tt.bell
			intervalEndDoesNotWait(t)
		})
	}
}

func intervalEndDoesNotWait(t *testing.T) {
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

// The coordinator's decoder reads what the flusher's encoder and
// hdrhistogram-go write: every non-zero count at its index, in order;
// bad input is an error naming what is wrong, never a panic or a count
// out of the array; and it allocates next to nothing once warm.
func TestV2DecoderReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 25))
	spread := make([]int64, histCounts)
	for range 100_000 {
		spread[bucketIndex(uint64(rng.ExpFloat64()*20_000)+900, histCounts)]++
	}
	dense := make([]int64, histCounts)
	for i := range 3000 {
		dense[i] = int64(i%3) * (1 << uint(i%40))
	}
	top := make([]int64, histCounts)
	top[histCounts-1] = 1 << 60
	e, d, h := newV2Encoder(), newV2Decoder(), results.NewHistogram()
	for name, counts := range map[string][]int64{"empty": make([]int64, histCounts), "spread": spread, "dense": dense, "the last count": top} {
		ours, err := e.encode(counts)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := results.EncodeHistogram(histogramInto(h, counts))
		if err != nil {
			t.Fatal(err)
		}
		for from, s := range map[string]string{"v2Encoder": ours, "hdrhistogram-go": theirs} {
			pairs, err := d.decode(s)
			if err != nil {
				t.Fatalf("%s from %s: %v", name, from, err)
			}
			got := make([]int64, histCounts)
			last := -1
			for _, p := range pairs {
				if p.idx <= last || p.n == 0 {
					t.Fatalf("%s from %s: pair %+v after index %d", name, from, p, last)
				}
				got[p.idx], last = p.n, p.idx
			}
			if !slices.Equal(got, counts) {
				t.Errorf("%s from %s: the decoded counts differ", name, from)
			}
		}
	}
	other := hdrhistogram.New(1, 1_000_000, 2)
	other.RecordValue(5)
	otherEnc, _ := results.EncodeHistogram(other)
	good, _ := e.encode(spread)
	raw, _ := base64.StdEncoding.DecodeString(good)
	for _, tt := range []struct{ name, s, says string }{
		{"not base64", "!!!", "illegal base64"},
		{"empty", "", "not a V2 compressed histogram"},
		{"another cookie", base64.StdEncoding.EncodeToString(append([]byte{0, 0, 0, 1}, raw[4:]...)), "not a V2 compressed histogram"},
		{"cut short", base64.StdEncoding.EncodeToString(raw[:len(raw)/2]), "past the"},
		{"not zlib", base64.StdEncoding.EncodeToString(append(raw[:8:8], make([]byte, len(raw)-8)...)), "bad histogram"},
		{"another layout", otherEnc, "want the layout of 3 from 1 to 100000000000"},
	} {
		if _, err := d.decode(tt.s); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
	if _, err := d.decode(good); err != nil { // still good after bad input
		t.Fatal(err)
	}
	// The inflater's Huffman tables make a few small slices per block;
	// what counts is that no histogram or zlib reader is made per call.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 50 {
		d.decode(good)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 50; per > 4<<10 {
		t.Errorf("%d bytes allocated per decoding, want under 4 KiB (a histogram is %d)", per, 8*histCounts)
	}
}

// highestEquivalent is what hdrhistogram-go's Max says of a histogram
// whose highest count is at the index: the .hlog line's maximum.
func TestHighestEquivalentAgrees(t *testing.T) {
	h := results.NewHistogram()
	for idx := 0; idx < histCounts; idx += 1 + idx/64 {
		h.Reset()
		h.RecordValue(valueAt(idx))
		if got, want := highestEquivalent(idx), h.Max(); got != want {
			t.Fatalf("index %d: %d, hdrhistogram-go's Max %d", idx, got, want)
		}
	}
}
