package results

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestReadStretches: a log of repetitions, each of intervals that follow
// one another and a pause between repetitions, reads back as one stretch
// per repetition with its own count and percentiles; a late line stays in
// its repetition, and a repetition without operations is still counted.
func TestReadStretches(t *testing.T) {
	// Repetition 1: two intervals and a late line; 2: none of the kind;
	// 3: one interval, short.
	path := writeTestLog(t,
		logLine{0, 1000, []int64{100, 100}},
		logLine{1000, 1999, []int64{100, 100}},
		logLine{0, 1000, []int64{100, 100, 900, 900}}, // late, for interval 1
		logLine{3500, 4500, nil},
		logLine{6000, 6400, []int64{50, 60, 70, 80}})
	// The percentiles out of order, p50 last, as a caller may ask: each
	// value stays at its percentile's place.
	st, err := ReadStretches(path, []float64{90, 99, 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 {
		t.Fatalf("%d stretches %+v, want 3", len(st), st)
	}
	want := []struct {
		start, end float64
		count      int64
	}{{0, 1.999, 8}, {3.5, 4.5, 0}, {6, 6.4, 4}}
	for i, w := range want {
		if st[i].Start != w.start || st[i].End != w.end || st[i].Count != w.count {
			t.Errorf("stretch %d: %+v, want %v..%v with %d operations", i+1, st[i], w.start, w.end, w.count)
		}
	}
	// 8 operations resolve p50 and p90 (1/(1−0.9) = 10 > 8: not p90); the
	// late line's 900s are the first repetition's tail.
	if v := st[0].Values; v[0] != 0 || v[1] != 0 || v[2] != 100 {
		t.Errorf("stretch 1 values %v, want [0 0 100]", v)
	}
	if v := st[2].Values; v[2] < 60 || v[2] > 61 {
		t.Errorf("stretch 3 p50 %v, want 60", v)
	}
}

// logLine is one interval line of a test log: from and to in ms after
// the log's BaseTime, and the latencies it holds.
type logLine struct {
	fromMs, toMs int64
	vals         []int64
}

// writeTestLog writes an .hlog of lines, in the order given (a late line
// after those it lags), as the engine writes one, and returns its path.
func writeTestLog(t *testing.T, lines ...logLine) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reg.hlog")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := bufio.NewWriter(f)
	w := hdrhistogram.NewHistogramLogWriter(b)
	const base = 1796084174216
	w.SetBaseTime(base)
	b.WriteString("#[StartTime: 1796084174.216 (seconds since epoch), 2026-11-30T00:56:14.216Z]\n#[BaseTime: 1796084174.216 (seconds since epoch)]\n")
	for _, l := range lines {
		h := NewHistogram()
		for _, v := range l.vals {
			h.RecordValue(v)
		}
		h.SetStartTimeMs(base + l.fromMs)
		h.SetEndTimeMs(base + l.toMs)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}
