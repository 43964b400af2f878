package results

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A thread that lagged has its report of an interval written late, as a
// second line with the same start: the timeline shows one interval with
// both lines' latencies, at its place in time.
func TestReadTimelineMergesLateLines(t *testing.T) {
	path := writeTestLog(t,
		logLine{0, 1000, []int64{100, 200}},
		logLine{1000, 2000, []int64{300}},
		logLine{2000, 3000, []int64{400}},
		logLine{0, 1000, []int64{5000, 6000, 7000}}) // the late part of interval 0
	ivs, sum, _, err := ReadTimeline(path)
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

// A log of many more intervals than TimelinePoints is summed into spans of
// whole time: the timeline keeps at most TimelinePoints points, every line
// and latency is in one of them (a late line too, however far back), and
// each span's figures are those of all its intervals' latencies together.
func TestReadTimelineSumsLongLogsIntoSpans(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines int
		span  float64 // want: seconds per point, 0 for one per interval
	}{
		{"one point per interval", TimelinePoints, 0},
		{"one interval too many", TimelinePoints + 1, 0.002},
		{"five thousand", 5000, 0.008},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reg.hlog")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			b := bufio.NewWriter(f)
			b.WriteString("#[StartTime: 1796084174.216 (seconds since epoch), 2026-11-30T00:56:14.216Z]\n#[BaseTime: 1796084174.216 (seconds since epoch)]\n")
			// Interval i (of 1ms) holds i%7+1 latencies of 1000+i%50 ns, and
			// interval 3 another line at the end, as a lagging thread's
			// late report: 1ms of the whole log's time, far back.
			all := NewHistogram()
			first := NewHistogram() // the first point's latencies
			var count int64
			// Encoding a histogram is slow; the log has few distinct ones.
			payloads := map[[2]int64]string{}
			line := func(i int64, n int, v int64) {
				all.RecordValues(v, int64(n))
				count += int64(n)
				if tc.span == 0 && i == 0 || tc.span > 0 && float64(i) < tc.span*1000 {
					first.RecordValues(v, int64(n))
				}
				p, ok := payloads[[2]int64{int64(n), v}]
				if !ok {
					h := NewHistogram()
					h.RecordValues(v, int64(n))
					if p, err = EncodeHistogram(h); err != nil {
						t.Fatal(err)
					}
					payloads[[2]int64{int64(n), v}] = p
				}
				fmt.Fprintf(b, "%.3f,0.001,%d.0,%s\n", float64(i)/1000, v, p)
			}
			for i := range int64(tc.lines) {
				line(i, int(i%7+1), 1000+i%50)
			}
			line(0, 3, 900_000)
			b.Flush()
			f.Close()
			ivs, sum, _, err := ReadTimeline(path)
			if err != nil {
				t.Fatal(err)
			}
			var lines, n int64
			for _, iv := range ivs {
				lines += iv.Lines
				n += iv.Count
				if iv.Span != tc.span {
					t.Fatalf("a point of span %gs, want %gs", iv.Span, tc.span)
				}
			}
			if len(ivs) > TimelinePoints || lines != int64(tc.lines+1) || n != count || sum.TotalCount() != count {
				t.Fatalf("%d points of %d lines and %d latencies (sum %d), want at most %d of %d and %d", len(ivs), lines, n, sum.TotalCount(), TimelinePoints, tc.lines+1, count)
			}
			want := Interval{Count: first.TotalCount(), P50: ValueAtPercentile(first, 50), P99: ValueAtPercentile(first, 99), Max: first.Max()}
			got := ivs[0]
			if got.Start != 0 || got.Count != want.Count || got.P50 != want.P50 || got.P99 != want.P99 || got.Max != want.Max {
				t.Errorf("first point %+v, want start 0 and %+v (the late line summed into it)", got, want)
			}
			for i := 1; i < len(ivs); i++ {
				if ivs[i].Start <= ivs[i-1].Start {
					t.Fatalf("point %d starts at %gs, after point %d at %gs", i, ivs[i].Start, i-1, ivs[i-1].Start)
				}
			}
		})
	}
}

// A log of more tags (repetitions) than TimelinePoints cannot be summed
// below a span per tag: the reader keeps one per tag and ends, where the
// grid would otherwise widen for ever.
func TestReadTimelineManyTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg.hlog")
	var b strings.Builder
	h := NewHistogram()
	h.RecordValue(1000)
	p, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	const tags = TimelinePoints + 500
	for tag := range tags {
		for i := range 3 {
			fmt.Fprintf(&b, "Tag=rep%d,%.3f,0.001,1.0,%s\n", tag, float64(i)/1000, p)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Interval, 1)
	go func() {
		ivs, _, _, err := ReadTimeline(path)
		if err != nil {
			t.Error(err)
		}
		done <- ivs
	}()
	select {
	case ivs := <-done:
		var lines int64
		for _, iv := range ivs {
			lines += iv.Lines
		}
		if len(ivs) < tags || len(ivs) > 2*tags || lines != 3*tags {
			t.Errorf("%d points of %d lines, want %d to %d of %d", len(ivs), lines, tags, 2*tags, 3*tags)
		}
	case <-time.After(time.Minute):
		t.Fatal("ReadTimeline of many tags did not end")
	}
}

// A log whose first line is short (a first repetition shorter than one
// interval: .hlog lengths are the time each interval covered) still sums
// into spans of whole intervals: the grid starts from the interval, the
// longest line, not from the first line's length.
func TestReadTimelineGridFromLongestLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg.hlog")
	h := NewHistogram()
	h.RecordValue(1000)
	p, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#[StartTime: 1796084174.216 (seconds since epoch), 2026-11-30T00:56:14.216Z]\n#[BaseTime: 1796084174.216 (seconds since epoch)]\n")
	fmt.Fprintf(&b, "0.000,0.001,1.0,%s\n", p) // the first repetition: 1 ms of a 3 ms interval
	for i := range 2 * TimelinePoints {
		fmt.Fprintf(&b, "%.3f,0.003,1.0,%s\n", 0.010+0.003*float64(i), p)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ivs, _, _, err := ReadTimeline(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) == 0 {
		t.Fatal("no timeline")
	}
	// 2, 4, ... intervals of 3 ms (the first line's 1 ms made 2, 4, 8 ms).
	n := int(math.Round(ivs[0].Span / 0.003))
	if n < 2 || n&(n-1) != 0 || math.Abs(ivs[0].Span-0.003*float64(n)) > 1e-9 {
		t.Errorf("%d points of span %gs, want spans of 2, 4, ... 3 ms intervals", len(ivs), ivs[0].Span)
	}
}
