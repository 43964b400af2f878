package hdrv2

import (
	"encoding/base64"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
)

// layout is results.NewHistogram's, the one xrcbench encodes, and
// histCounts its counts' length.
var (
	histCounts = len(results.NewHistogram().Export().Counts)
	layout     = func() Layout {
		h := results.NewHistogram()
		return Layout{Digits: int32(h.SignificantFigures()), Lowest: h.LowestTrackableValue(), Highest: h.HighestTrackableValue(), Counts: histCounts}
	}()
)

// index is v's index in the counts of results.NewHistogram, as
// hdrhistogram-go records it (past the top: the last).
func index(h *hdrhistogram.Histogram, v uint64) int {
	if v > uint64(h.HighestTrackableValue()) {
		return histCounts - 1
	}
	h.Reset()
	h.RecordValue(int64(v))
	return slices.IndexFunc(h.Export().Counts, func(c int64) bool { return c != 0 })
}

// histogramOf is the histogram of results.NewHistogram's layout holding
// counts.
func histogramOf(counts []int64) *hdrhistogram.Histogram {
	s := results.NewHistogram().Export()
	s.Counts = counts
	return hdrhistogram.Import(s)
}

// The encoder writes what results.EncodeHistogram (hdrhistogram-go)
// writes for the histogram holding the same counts, byte for byte (so every reader of
// the .hlog and result.json reads it as before), and allocates only the
// string it returns: hdrhistogram-go's encoder allocated ~850 KB per
// histogram, a garbage collection at every interval's end.
func TestEncoderMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	scratch := results.NewHistogram()
	one := func(v uint64, n int64) []int64 {
		c := make([]int64, histCounts)
		c[index(scratch, v)] = n
		return c
	}
	spread := results.NewHistogram()
	for range 100_000 {
		spread.RecordValue(int64(rng.ExpFloat64()*20_000) + 900)
	}
	dense := make([]int64, histCounts)
	for i := range 3000 {
		dense[i] = int64(i%3) * (1 << uint(i%40)) // zeros alone and in runs, counts of up to 9 bytes
	}
	e := NewEncoder(layout)
	for name, counts := range map[string][]int64{
		"1ns": one(1, 1), "10µs": one(10_000, 5), "past the top": one(1<<62, 3), "huge count": one(1234, 1<<60),
		"spread": spread.Export().Counts, "dense": dense,
	} {
		got, err := e.Encode(counts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := results.EncodeHistogram(histogramOf(counts))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: the encoder wrote %d bytes, hdrhistogram-go %d, and they differ", name, len(got), len(want))
		}
	}
	sc := spread.Export().Counts
	if allocs := testing.AllocsPerRun(20, func() { e.Encode(sc) }); allocs > 1 {
		t.Errorf("%.0f allocations per encoding, want the string alone", allocs)
	}
}

// The decoder reads what the encoder and hdrhistogram-go write: every non-zero count at its index, in order;
// bad input is an error naming what is wrong, never a panic or a count
// out of the array; and it allocates next to nothing once warm.
func TestDecoderReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 25))
	sh := results.NewHistogram()
	for range 100_000 {
		sh.RecordValue(int64(rng.ExpFloat64()*20_000) + 900)
	}
	spread := sh.Export().Counts
	dense := make([]int64, histCounts)
	for i := range 3000 {
		dense[i] = int64(i%3) * (1 << uint(i%40))
	}
	top := make([]int64, histCounts)
	top[histCounts-1] = 1 << 60
	e, d := NewEncoder(layout), NewDecoder(layout)
	for name, counts := range map[string][]int64{"empty": make([]int64, histCounts), "spread": spread, "dense": dense, "the last count": top} {
		ours, err := e.Encode(counts)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := results.EncodeHistogram(histogramOf(counts))
		if err != nil {
			t.Fatal(err)
		}
		for from, s := range map[string]string{"Encoder": ours, "hdrhistogram-go": theirs} {
			pairs, err := d.Decode(s)
			if err != nil {
				t.Fatalf("%s from %s: %v", name, from, err)
			}
			got := make([]int64, histCounts)
			last := -1
			for _, p := range pairs {
				if p.Index <= last || p.N == 0 {
					t.Fatalf("%s from %s: pair %+v after index %d", name, from, p, last)
				}
				got[p.Index], last = p.N, p.Index
			}
			if !slices.Equal(got, counts) {
				t.Errorf("%s from %s: the decoded counts differ", name, from)
			}
		}
	}
	other := hdrhistogram.New(1, 1_000_000, 2)
	other.RecordValue(5)
	otherEnc, _ := results.EncodeHistogram(other)
	good, _ := e.Encode(spread)
	raw, _ := base64.StdEncoding.DecodeString(good)
	for _, tt := range []struct{ name, s, says string }{
		{"not base64", "!!!", "illegal base64"},
		{"empty", "", "not a V2 compressed histogram"},
		{"another cookie", base64.StdEncoding.EncodeToString(append([]byte{0, 0, 0, 1}, raw[4:]...)), "not a V2 compressed histogram"},
		{"cut short", base64.StdEncoding.EncodeToString(raw[:len(raw)/2]), "past the"},
		{"not zlib", base64.StdEncoding.EncodeToString(append(raw[:8:8], make([]byte, len(raw)-8)...)), "bad histogram"},
		{"another layout", otherEnc, "want the layout of 3 from 1 to 100000000000"},
	} {
		if _, err := d.Decode(tt.s); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
	if _, err := d.Decode(good); err != nil { // still good after bad input
		t.Fatal(err)
	}
	// The inflater's Huffman tables make a few small slices per block;
	// what counts is that no histogram or zlib reader is made per call.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 50 {
		d.Decode(good)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 50; per > 4<<10 {
		t.Errorf("%d bytes allocated per decoding, want under 4 KiB (a histogram is %d)", per, 8*histCounts)
	}
}

// FuzzDecoder: whatever a worker's pipe carries, the decoder returns an error or counts inside the array, in index order,
// and what it returns encodes back to a histogram it reads the same.
func FuzzDecoder(f *testing.F) {
	e, scratch := NewEncoder(layout), results.NewHistogram()
	counts := make([]int64, histCounts)
	for _, v := range []uint64{1, 900, 10_000, 10_001, 1 << 40, 1 << 62} {
		counts[index(scratch, v)] += int64(v%7 + 1)
		s, _ := e.Encode(counts)
		f.Add(s)
	}
	f.Add("")
	d := NewDecoder(layout)
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := d.Decode(s)
		if err != nil {
			return
		}
		got := make([]int64, histCounts)
		last := -1
		for _, p := range pairs {
			if p.Index <= last || p.Index >= histCounts || p.N <= 0 {
				t.Fatalf("pair %+v after index %d", p, last)
			}
			got[p.Index], last = p.N, p.Index
		}
		again, err := e.Encode(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := d.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded: %v", err)
		}
		if len(back) != len(pairs) {
			t.Fatalf("%d counts, %d after encoding them again", len(pairs), len(back))
		}
	})
}
