package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// ivMsg is thread's report of interval idx holding n reg latencies.
func ivMsg(t *testing.T, thread int, idx int64, n int) *intervalMsg {
	t.Helper()
	h := results.NewHistogram()
	for i := 0; i < n; i++ {
		h.RecordValue(1000)
	}
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return &intervalMsg{Thread: thread, Index: idx, Hists: map[string]string{"reg": enc}}
}

// A thread that lags: its report of an interval still pending merges into
// it; its report of one already written (the others ran far ahead) is
// counted as late and kept in the totals, never written a second time.
func TestHlogsLateReport(t *testing.T) {
	dir := t.TempDir()
	l, err := newHlogs(dir, []string{"reg"}, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.startRep(2)
	base := verbs.Now()
	steps := []struct {
		thread int
		idx    int64
		n      int
	}{
		{0, 0, 1}, {0, 1, 2}, {0, 2, 4}, {0, 3, 8}, {0, 4, 16}, // thread 0 runs ahead: 0 and 1 are written
		{1, 0, 100}, // late: interval 0 is in the log already
		{1, 2, 200}, // still pending: merged
		{1, 3, 400},
		{1, 4, 800},
	}
	var sum int64
	for _, s := range steps {
		if err := l.add(ivMsg(t, s.thread, s.idx, s.n), base); err != nil {
			t.Fatal(err)
		}
		sum += int64(s.n)
	}
	l.endRep()
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if l.late != 1 {
		t.Errorf("%d late reports, want 1", l.late)
	}
	if got := l.totals["reg"].TotalCount(); got != sum {
		t.Errorf("totals hold %d latencies, want all %d", got, sum)
	}

	f, err := os.Open(filepath.Join(dir, "reg.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var counts []int64
	starts := map[int64]bool{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if starts[h.StartTimeMs()] {
			t.Errorf("two intervals start at %d ms", h.StartTimeMs())
		}
		starts[h.StartTimeMs()] = true
		counts = append(counts, h.TotalCount())
	}
	want := []int64{1, 2, 4 + 200, 8 + 400, 16 + 800}
	if len(counts) != len(want) {
		t.Fatalf("intervals %v, want %v", counts, want)
	}
	for i := range want {
		if counts[i] != want[i] {
			t.Errorf("intervals %v, want %v", counts, want)
			break
		}
	}
}
