package report

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
)

// A thread that lagged has its report of an interval written late, as a
// second line with the same start: the timeline shows one interval with
// both lines' latencies, at its place in time.
func TestReadTimelineMergesLateLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg.hlog")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b := bufio.NewWriter(f)
	w := hdrhistogram.NewHistogramLogWriter(b)
	const base = 1796084174216
	w.SetBaseTime(base)
	b.WriteString("#[StartTime: 1796084174.216 (seconds since epoch), 2026-11-30T00:56:14.216Z]\n#[BaseTime: 1796084174.216 (seconds since epoch)]\n")
	line := func(i int64, vals ...int64) {
		h := results.NewHistogram()
		for _, v := range vals {
			h.RecordValue(v)
		}
		h.SetStartTimeMs(base + 1000*i)
		h.SetEndTimeMs(base + 1000*(i+1))
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	line(0, 100, 200)
	line(1, 300)
	line(2, 400)
	line(0, 5000, 6000, 7000) // the late part of interval 0
	b.Flush()
	f.Close()
	ivs, sum, _, err := readTimeline(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalCount() != 7 {
		t.Errorf("sum of %d latencies, want 7", sum.TotalCount())
	}
	if len(ivs) != 3 || ivs[0].Start != 0 || ivs[0].Count != 5 || ivs[0].Max < 7000 || ivs[1].Count != 1 || ivs[2].Start != 2 {
		t.Errorf("intervals %+v, want 3 with the first holding 5 latencies up to 7µs", ivs)
	}
}
