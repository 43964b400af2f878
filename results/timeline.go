package results

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TimelinePoints is the most points a kind's timeline keeps. A log of more
// intervals is summed into spans of whole time (twice the interval, four
// times, ...) so that it fits: what report holds and draws for a kind stays
// the same for a minute's run and for a week's at --interval 1ms.
const TimelinePoints = 1000

// hotSpans is how many spans keep a dense histogram, for the lines still
// arriving in them; the others keep a sparse one (a few bytes per latency
// bucket seen, where a dense histogram is over 200 KB). Lines arrive in
// time order but for a lagging thread's late ones, so a few suffice.
const hotSpans = 4

// span is one point of a timeline: every line of the log for one tag and
// one stretch of time (one interval's start, or one width of the grid).
type span struct {
	tag            string
	startMs, endMs int64 // earliest start and latest end of its lines
	lines, count   int64
	hist           *hdrhistogram.Histogram       // while hot
	packed         *hdrhistogram.PackedHistogram // while cold
	used           int64                         // for the least recently used hot span
}

type spanKey struct {
	tag string
	at  int64 // the interval's start (ms) while width is 0, else its cell of the grid
}

// timelineBuilder sums a log's lines into at most TimelinePoints spans in
// memory independent of the log's length: one interval per span until
// there are too many, then spans of a time grid whose width doubles each
// time they are too many again.
type timelineBuilder struct {
	firstMs int64
	started bool
	width   int64 // ms; 0: a span per interval start
	baseMs  int64 // the longest line's length (the interval), the grid's first width (halved)
	loMs    int64 // earliest start and latest end of any line
	hiMs    int64
	limit   int // coarsen past this many spans
	spans   map[spanKey]*span
	hot     []*span
	clock   int64
}

func newTimelineBuilder() *timelineBuilder {
	return &timelineBuilder{spans: map[spanKey]*span{}, limit: TimelinePoints}
}

func (b *timelineBuilder) key(tag string, startMs int64) spanKey {
	if b.width == 0 {
		return spanKey{tag, startMs}
	}
	return spanKey{tag, floorDiv(startMs-b.firstMs, b.width)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// add sums one line's histogram into its span; h becomes the span's own.
func (b *timelineBuilder) add(h *hdrhistogram.Histogram) {
	if !b.started {
		b.started, b.firstMs = true, h.StartTimeMs()
		b.baseMs = max(1, h.EndTimeMs()-h.StartTimeMs())
		b.loMs, b.hiMs = h.StartTimeMs(), h.EndTimeMs()
	}
	// Lines last the time they covered: a repetition's last is short, and
	// may come first (a repetition shorter than an interval). The grid
	// starts from the interval, the longest line.
	b.baseMs = max(b.baseMs, h.EndTimeMs()-h.StartTimeMs())
	b.loMs, b.hiMs = min(b.loMs, h.StartTimeMs()), max(b.hiMs, h.EndTimeMs())
	k := b.key(h.Tag(), h.StartTimeMs())
	s := b.spans[k]
	if s == nil {
		s = &span{tag: h.Tag(), startMs: h.StartTimeMs(), endMs: h.EndTimeMs()}
		b.spans[k] = s
	}
	s.startMs, s.endMs = min(s.startMs, h.StartTimeMs()), max(s.endMs, h.EndTimeMs())
	s.lines++
	s.count += h.TotalCount()
	switch {
	case s.hist != nil:
		s.hist.Merge(h)
	case s.packed != nil:
		// A late line for a span already cooled: rare, and cheap enough
		// in the sparse form.
		s.packed.MergeFrom(h)
	default:
		s.hist = h
	}
	if s.hist != nil {
		b.touch(s)
	}
	if len(b.spans) > b.limit {
		b.coarsen()
	}
}

// touch makes s the most recently used hot span, cooling the least
// recently used one past hotSpans.
func (b *timelineBuilder) touch(s *span) {
	b.clock++
	s.used = b.clock
	if !slices.Contains(b.hot, s) {
		b.hot = append(b.hot, s)
	}
	if len(b.hot) > hotSpans {
		i := 0
		for j, o := range b.hot {
			if o.used < b.hot[i].used {
				i = j
			}
		}
		b.cool(b.hot[i])
		b.hot = slices.Delete(b.hot, i, i+1)
	}
}

func (b *timelineBuilder) cool(s *span) {
	if s.hist == nil {
		return
	}
	s.packed = hdrhistogram.NewPacked(s.hist.LowestTrackableValue(), s.hist.HighestTrackableValue(), int(s.hist.SignificantFigures()))
	s.packed.MergeFrom(s.hist)
	s.hist = nil
}

// dense is s's histogram in the form results' percentiles read.
func (s *span) dense() *hdrhistogram.Histogram {
	if s.hist != nil {
		return s.hist
	}
	h := hdrhistogram.New(s.packed.LowestTrackableValue(), s.packed.HighestTrackableValue(), int(s.packed.SignificantFigures()))
	s.packed.MergeInto(h)
	return h
}

// coarsen doubles the grid's width (from one interval to two, on the
// first call) until the spans fit in TimelinePoints, merging the
// spans that come to share a cell.
func (b *timelineBuilder) coarsen() {
	for _, s := range b.hot {
		b.cool(s)
	}
	b.hot = nil
	// Once a cell spans the whole log, a tag is one span or two: a log
	// of more tags than TimelinePoints (repetitions) keeps a span per tag.
	for len(b.spans) > TimelinePoints && b.width <= b.hiMs-b.loMs {
		if b.width == 0 {
			b.width = b.baseMs
		}
		b.width *= 2
		next := make(map[spanKey]*span, len(b.spans)/2+1)
		// In time order, so the merged spans' figures do not depend on
		// the map's order.
		for _, s := range b.sorted() {
			k := spanKey{s.tag, floorDiv(s.startMs-b.firstMs, b.width)}
			t := next[k]
			if t == nil {
				next[k] = s
				continue
			}
			t.startMs, t.endMs = min(t.startMs, s.startMs), max(t.endMs, s.endMs)
			t.lines += s.lines
			t.count += s.count
			t.packed.Merge(s.packed)
		}
		b.spans = next
	}
	b.limit = max(TimelinePoints, 2*len(b.spans))
}

// sorted lists the spans by tag, then time, so lines never run backwards
// (logs may hold several tags, e.g. one per repetition, each starting
// again at zero).
func (b *timelineBuilder) sorted() []*span {
	out := make([]*span, 0, len(b.spans))
	for _, s := range b.spans {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y *span) int {
		return cmp.Or(cmp.Compare(x.tag, y.tag), cmp.Compare(x.startMs, y.startMs))
	})
	return out
}

// intervals is the timeline: one Interval per span, by tag and time.
func (b *timelineBuilder) intervals() []Interval {
	first := float64(b.firstMs) / 1000
	width := float64(b.width) / 1000
	var out []Interval
	for _, s := range b.sorted() {
		iv := Interval{
			Tag:    s.tag,
			Start:  float64(s.startMs)/1000 - first,
			Length: float64(s.endMs-s.startMs) / 1000,
			Count:  s.count,
			Lines:  s.lines,
			Span:   width,
		}
		if s.count > 0 {
			h := s.dense()
			iv.P50, iv.P99, iv.Max = ValueAtPercentile(h, 50), ValueAtPercentile(h, 99), h.Max()
		}
		out = append(out, iv)
	}
	return out
}

// readIntervals streams an interval log into its timeline (at most
// TimelinePoints points) and the sum of its intervals. A thread that
// lagged far behind has its report of an interval written late, as a
// second line with the same start: it is summed into that interval.
func readIntervals(path string, f io.Reader) ([]Interval, *hdrhistogram.Histogram, error) {
	rd := hdrhistogram.NewHistogramLogReader(f)
	sum := NewHistogram()
	b := newTimelineBuilder()
	for i := 0; ; i++ {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			return b.intervals(), sum, fmt.Errorf("%s: interval %d: %w (timeline stops there)", filepath.Base(path), i+1, err)
		}
		if h == nil {
			break
		}
		sum.Merge(h)
		b.add(h)
	}
	return b.intervals(), sum, nil
}
