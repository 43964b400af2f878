package bench

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// recordAll and histogramOf must give the very histogram RecordValue
// gives, over the whole range: tiny, exact-resolution, every power of two
// and its neighbours, random, and the top.
func TestRecordMatchesHDR(t *testing.T) {
	var values []uint64
	for v := uint64(0); v < 5000; v++ {
		values = append(values, v)
	}
	for s := 0; s < 37; s++ {
		p := uint64(1) << s
		values = append(values, p-1, p, p+1, p+p/2)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		values = append(values, r.Uint64N(results.HistMaxNS))
	}
	values = append(values, results.HistMaxNS-1, results.HistMaxNS)
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

// foldSteps records each step's latency in its own kind's counts, exactly
// as recordAll would kind by kind, and sums them per kind.
func TestFoldStepsByKind(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	steps := make([]verbs.Step, 10000)
	ns := make([]uint64, len(steps))
	byKind := [3][]uint64{}
	var wantSums [3]uint64
	for i := range steps {
		k := r.IntN(3)
		steps[i].Tag = uint32(k)
		ns[i] = r.Uint64N(1 << uint(r.IntN(40)))
		byKind[k] = append(byKind[k], ns[i])
		wantSums[k] += ns[i]
	}
	ivs := [][]int64{make([]int64, histCounts), make([]int64, histCounts), make([]int64, histCounts)}
	counts, sums := make([]int64, 3), make([]uint64, 3)
	total := foldSteps(steps, ns, ivs, counts, sums)
	for k := range 3 {
		want := make([]int64, histCounts)
		recordAll(want, byKind[k])
		if !slices.Equal(ivs[k], want) || counts[k] != int64(len(byKind[k])) || sums[k] != wantSums[k] {
			t.Errorf("kind %d: %d steps summing %d; want %d summing %d, and the same counts", k, counts[k], sums[k], len(byKind[k]), wantSums[k])
		}
	}
	if total != wantSums[0]+wantSums[1]+wantSums[2] {
		t.Errorf("total %d", total)
	}
}
