package results

import (
	"bufio"
	"fmt"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/regfile"
)

// RepetitionGap is the least pause (seconds) between two lines of a
// <kind>.hlog that ends one repetition: within a repetition each interval
// begins where the one before it ended (to the microsecond, ms once read
// back), and between two the next repetition's processes start and warm
// up, which takes far longer than this.
const RepetitionGap = 0.002

// Stretch is one repetition's share of an interval log: the lines that
// follow one another without a RepetitionGap.
type Stretch struct {
	Start, End float64 // seconds since the log's first line
	Count      int64
	// Values are the latencies at the percentiles asked for, up to the
	// highest one Count resolves (100·(1−1/Count)); the rest are 0.
	Values []int64
}

// ReadStretches reads the interval log at path as the repetitions it
// holds, one Stretch each, with the latencies at qs: what a plot of the
// spread across repetitions needs, in the memory of one histogram
// whatever the log's length. A late line (a lagging thread's, written
// after later intervals) starts before the latest end read, so it never
// opens a stretch. A damaged line ends the reading with an error and the
// stretches before it. A stretch may count no operation (a repetition
// of none of the kind): it is kept, so the i-th stretch is the i-th
// repetition.
func ReadStretches(path string, qs []float64) ([]Stretch, error) {
	f, err := regfile.OpenReader(path, regfile.MaxHlog, regfile.MaxHlogLine)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines := &hlogLines{rd: bufio.NewReader(f), path: path}
	rd := hdrhistogram.NewHistogramLogReader(lines)
	var out []Stretch
	cur := NewHistogram()
	var firstMs, startMs, endMs int64
	started := false
	flush := func() {
		if !started {
			return
		}
		s := Stretch{Start: float64(startMs-firstMs) / 1000, End: float64(endMs-firstMs) / 1000, Count: cur.TotalCount()}
		var in []float64
		var at []int
		for i, q := range qs {
			if 1/(1-q/100) <= float64(s.Count)*(1+1e-9) {
				in, at = append(in, q), append(at, i)
			}
		}
		s.Values = make([]int64, len(qs))
		for j, v := range ValuesAtPercentiles(cur, in...) {
			s.Values[at[j]] = v
		}
		out = append(out, s)
		cur.Reset()
	}
	for i := 0; ; i++ {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			flush()
			return out, fmt.Errorf("%s: interval %d: %w", filepath.Base(path), i+1, err)
		}
		if h == nil {
			break
		}
		switch {
		case !started:
			started, firstMs, startMs, endMs = true, h.StartTimeMs(), h.StartTimeMs(), h.EndTimeMs()
		case float64(h.StartTimeMs()-endMs)/1000 > RepetitionGap:
			flush()
			startMs, endMs = h.StartTimeMs(), h.EndTimeMs()
		}
		endMs = max(endMs, h.EndTimeMs())
		cur.Merge(h)
	}
	flush()
	return out, nil
}
