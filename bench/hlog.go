package bench

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/xrcbench/xrcbench/internal/hdrv2"
	"github.com/xrcbench/xrcbench/internal/safedir"
	"github.com/xrcbench/xrcbench/results"
	"github.com/xrcbench/xrcbench/verbs"
)

// hlogs writes one HdrHistogram interval log per op kind (<kind>.hlog),
// and sums the intervals into the repetition's latency totals.
// Threads report each interval when they leave it; an interval is merged
// across threads and written once every thread has moved past it (or it
// is far behind the newest one), so the coordinator holds a few intervals
// at a time whatever the run length. Intervals are held as counts arrays
// (results.NewHistogram's layout) reused from one interval to the next,
// decoded and encoded by an hdrv2.Decoder and Encoder that keep their
// buffers: the coordinator shares the machine with the measured threads,
// and its garbage and page faults once took their CPUs (internal/hdrv2).
type hlogs struct {
	dir      *safedir.Dir // the run's temporary folder: the logs are made beneath it
	interval time.Duration
	files    map[string]*os.File
	bufs     map[string]*bufio.Writer
	pending  map[int64]map[string][]int64
	free     [][]int64 // cleared counts arrays for the next intervals
	enc      *hdrv2.Encoder
	dec      *hdrv2.Decoder
	late1    []int64                            // a late report's counts, written on their own
	empty    string                             // an interval of no latencies, encoded
	order    []string                           // the kinds, sorted
	baseMs   int64                              // the logs' BaseTime, in ms since the epoch
	ends     map[int64]uint64                   // pending interval → the latest end a thread reported for it
	totals   map[string]*hdrhistogram.Histogram // of the repetition, per op kind
	progress map[int]int64                      // thread → first interval it has not reported
	threads  int
	newest   int64
	// written: every interval below it is in the logs. A report for one
	// of them (from a thread that lagged more than the flush allows) is
	// written late: a line of its own with the interval's start time,
	// after later intervals. Readers sum the lines of a time range, so
	// nothing is lost; late counts such reports.
	written int64
	late    int64
	wrote   bool // any interval at all, in any log
	// The repetition's intervals follow one another: each begins where the
	// one written before it ended (the first where the earliest thread
	// began measuring, first: intervalMsg.Start) and ends where the last
	// thread to leave it did (ends), so an interval spans its operations,
	// overruns included, and the lengths add up to the repetition's
	// measured time. last is the end of the latest written (0: none yet);
	// spans the spans written, for late reports (lateSpans at most).
	first uint64
	last  uint64
	spans []ivSpan
	// monoWall maps CLOCK_MONOTONIC ns to wall-clock ns since the epoch.
	monoWall int64
	err      error
	// written per kind: what result.json's logs record, for a reader to
	// check the file against.
	logged map[string]*results.LogFile
	// reported counts, per thread and kind, the latencies each thread sent
	// this repetition: the counts of a thread whose worker was stopped
	// before it could send its final ones.
	reported map[int]map[string]int64
}

// newHlogs makes the logs in dir, new (O_EXCL, never through a link), with
// the mode of every other file of a run whatever the umask.
func newHlogs(dir *safedir.Dir, runID string, kinds []string, start time.Time, interval time.Duration) (*hlogs, error) {
	l := &hlogs{dir: dir, interval: interval, files: map[string]*os.File{}, bufs: map[string]*bufio.Writer{},
		logged: map[string]*results.LogFile{}, enc: hdrv2.NewEncoder(hdrLayout), dec: hdrv2.NewDecoder(hdrLayout), baseMs: start.UnixMilli()}
	for _, k := range kinds {
		f, err := dir.Create(k+".hlog", 0o644)
		if err != nil {
			l.close()
			return nil, err
		}
		b := bufio.NewWriter(f)
		w := hdrhistogram.NewHistogramLogWriter(b)
		w.OutputComment(fmt.Sprintf("xrcbench %s latency, ns, interval %v; repetitions follow one another", k, interval))
		fmt.Fprintf(b, "%s%s\n", results.HlogRunIDPrefix, runID)
		w.OutputLogFormatVersion()
		writeLogTimes(b, start)
		w.OutputLegend()
		l.files[k], l.bufs[k] = f, b
		l.logged[k] = &results.LogFile{File: k + ".hlog"}
	}
	return l, nil
}

// writeLogTimes writes the StartTime and BaseTime lines with the
// millisecond precision the log format defines (as HdrHistogram's Java
// writer does). hdrhistogram-go's writer cuts both to whole seconds while
// the interval timestamps count from the exact start, so a standard
// reader placed every interval up to a second early.
func writeLogTimes(w *bufio.Writer, start time.Time) {
	ms := start.UnixMilli()
	secs := fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
	fmt.Fprintf(w, "#[StartTime: %s (seconds since epoch), %s]\n", secs, time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	fmt.Fprintf(w, "#[BaseTime: %s (seconds since epoch)]\n", secs)
}

// ivSpan is a written interval's index and time (CLOCK_MONOTONIC ns).
type ivSpan struct {
	idx      int64
	from, to uint64
}

// lateSpans is how many written intervals' spans a repetition keeps for
// late reports: a thread that far behind has long been stalled.
const lateSpans = 1024

func (l *hlogs) startRep(threads int) {
	for _, iv := range l.pending {
		l.release(iv)
	}
	l.pending = map[int64]map[string][]int64{}
	l.ends = map[int64]uint64{}
	l.totals = map[string]*hdrhistogram.Histogram{}
	l.progress = map[int]int64{}
	l.reported = map[int]map[string]int64{}
	l.threads = threads
	l.newest = 0
	l.written, l.late = 0, 0
	l.first, l.last, l.spans = 0, 0, l.spans[:0]
	l.monoWall = time.Now().UnixNano() - int64(verbs.Now())
}

// add merges one thread's interval.
func (l *hlogs) add(m *intervalMsg) error {
	l.started(m.Start)
	isLate := m.Index < l.written
	if isLate {
		l.late++
	}
	iv := l.pending[m.Index]
	if iv == nil && !isLate {
		iv = map[string][]int64{}
		l.pending[m.Index] = iv
	}
	if !isLate {
		l.ends[m.Index] = max(l.ends[m.Index], m.End)
	}
	for kind, enc := range m.Hists {
		if l.bufs[kind] == nil {
			return fmt.Errorf("%w: interval of op kind %q the workload does not have", errProto, kind)
		}
		pairs, err := l.dec.Decode(enc)
		if err != nil {
			return err
		}
		counts := l.late1
		if isLate {
			if counts == nil {
				counts = make([]int64, histCounts)
				l.late1 = counts
			}
		} else {
			if iv[kind] == nil {
				iv[kind] = l.counts()
			}
			counts = iv[kind]
		}
		if l.totals[kind] == nil {
			l.totals[kind] = results.NewHistogram()
		}
		var n int64
		for _, p := range pairs {
			counts[p.Index] += p.N
			l.totals[kind].RecordValues(valueAt(p.Index), p.N)
			n += p.N
		}
		if isLate {
			sp := l.spanOf(m.Index)
			l.write(kind, counts, sp.from, sp.to)
			clear(counts)
		}
		if l.reported[m.Thread] == nil {
			l.reported[m.Thread] = map[string]int64{}
		}
		l.reported[m.Thread][kind] += n
	}
	if m.Index+1 > l.progress[m.Thread] {
		l.progress[m.Thread] = m.Index + 1
	}
	l.newest = max(l.newest, m.Index)
	l.flush(false)
	return nil
}

// started notes a thread's measurement start (0: none said).
func (l *hlogs) started(at uint64) {
	if at > 0 && (l.first == 0 || at < l.first) {
		l.first = at
	}
}

// threadsDone marks threads that will report no more intervals.
func (l *hlogs) threadsDone(trs []threadResult) {
	for _, tr := range trs {
		l.progress[tr.Thread] = 1 << 62
		// A thread that did nothing sent no interval, yet the
		// repetition's time runs from its start too.
		l.started(tr.Started)
	}
	l.flush(false)
}

// endRep writes what is left of the repetition, whose threads measured
// from start to end (threadSpan: what its ops/s divide by). When the last
// interval written ends before end (the threads' last stretch held no
// operation: a final barrier, a teardown's wait) a line of no latencies
// per kind covers the rest, so the logs' lengths still add up to the
// repetition's; a repetition of no operations at all is one such line.
func (l *hlogs) endRep(start, end uint64) {
	if l.last == 0 {
		l.started(start)
	}
	l.flush(true)
	if from := max(l.last, l.first); end > from && l.first > 0 {
		for _, kind := range l.kinds() {
			l.write(kind, nil, from, end)
		}
		l.last = end
	}
}

// kinds are the logs' op kinds, in order.
func (l *hlogs) kinds() []string {
	if len(l.order) != len(l.bufs) {
		l.order = l.order[:0]
		for k := range l.bufs {
			l.order = append(l.order, k)
		}
		sort.Strings(l.order)
	}
	return l.order
}

func (l *hlogs) flush(all bool) {
	complete := int64(1 << 62)
	if len(l.progress) < l.threads {
		complete = 0
	}
	for _, p := range l.progress {
		complete = min(complete, p)
	}
	// Intervals every thread has left are complete; those far behind the
	// newest are written anyway, to bound what is held, and a thread
	// still reporting one of them is late.
	upTo := max(complete, l.newest-2)
	if all {
		upTo = 1 << 62
	}
	l.written = max(l.written, upTo)
	var idx []int64
	for i := range l.pending {
		if i < upTo {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		// From where the previous interval ended (intervals no thread
		// reported, with no operation, are in this one) to where the last
		// thread left it: a thread leaves an interval after its batch in
		// flight, so this covers the batch.
		from := l.first
		if l.last > 0 {
			from = l.last
		}
		to := max(from, l.ends[i])
		iv := l.pending[i]
		// Every kind has a line for every interval, of no latencies when
		// it had none, so that each log's lengths add up to the
		// repetition's: a reader's count over the lengths is its ops/s.
		for _, kind := range l.kinds() {
			l.write(kind, iv[kind], from, to)
		}
		l.last = to
		if len(l.spans) == lateSpans {
			l.spans = append(l.spans[:0], l.spans[1:]...)
		}
		l.spans = append(l.spans, ivSpan{i, from, to})
		l.release(iv)
		delete(l.pending, i)
		delete(l.ends, i)
	}
}

// spanOf is the time a late report of interval i shares: that of the
// first interval written at or after i (intervals nobody reported in time
// are in the next one written; the oldest kept for an older one), or of
// the latest written.
func (l *hlogs) spanOf(i int64) ivSpan {
	k := sort.Search(len(l.spans), func(k int) bool { return l.spans[k].idx >= i })
	switch {
	case k < len(l.spans):
		return l.spans[k]
	case len(l.spans) > 0:
		return l.spans[len(l.spans)-1]
	}
	return ivSpan{i, l.first, l.first}
}

// counts is a cleared counts array for an interval's kind.
func (l *hlogs) counts() []int64 {
	if n := len(l.free); n > 0 {
		c := l.free[n-1]
		l.free = l.free[:n-1]
		return c
	}
	return make([]int64, histCounts)
}

// release clears an interval's arrays and keeps them for the next.
func (l *hlogs) release(iv map[string][]int64) {
	for _, c := range iv {
		clear(c)
		l.free = append(l.free, c)
	}
}

// write writes counts (nil: none) as an interval of kind's log from
// CLOCK_MONOTONIC ns from to to: the time the interval covered, so that a
// reader's sum of counts over the sum of lengths is the operations per
// second of result.json. The line is the one hdrhistogram-go's log writer
// writes (start and length in seconds from BaseTime, the maximum in
// milliseconds, the histogram), but for its times, which carry
// microseconds where that writer's carry the milliseconds histograms are
// stamped with: a storm's repetition lasts a few ms, and a millisecond in
// its length is its rate wrong by a tenth or more. Lengths are the
// differences of the rounded times, so that the lengths of intervals that
// follow one another add up to the time they cover, to the microsecond.
func (l *hlogs) write(kind string, counts []int64, from, to uint64) {
	var enc string
	var total, top int64
	for idx, c := range counts {
		if c != 0 {
			total += c
			top = highestEquivalent(idx)
		}
	}
	var err error
	switch {
	case total > 0:
		enc, err = encodeInterval(l.enc, counts)
	case l.empty == "":
		enc, err = encodeInterval(l.enc, make([]int64, histCounts))
		l.empty = enc
	default:
		enc = l.empty
	}
	if err != nil {
		if l.err == nil {
			l.err = fmt.Errorf("encoding an interval of the %s log: %w", kind, err)
		}
		return
	}
	start, stop := l.sinceBase(from), l.sinceBase(max(from, to))
	if _, err := fmt.Fprintf(l.bufs[kind], "%s,%s,%f,%s\n", micros(start), micros(stop-start), float64(top)/hdrhistogram.MsToNsRatio, enc); err != nil && l.err == nil {
		l.err = err
	}
	l.wrote = true
	l.logged[kind].Intervals++
	l.logged[kind].Count += total
}

// sinceBase is CLOCK_MONOTONIC ns at as microseconds since the logs'
// BaseTime (not before it).
func (l *hlogs) sinceBase(at uint64) int64 {
	ns := l.monoWall + int64(at) - l.baseMs*int64(time.Millisecond)
	return max(0, (ns+500)/1000)
}

// micros is us as seconds with six decimals, as %f writes them.
func micros(us int64) string { return fmt.Sprintf("%d.%06d", us/1e6, us%1e6) }

// logs is what was written, per kind, for result.json.
func (l *hlogs) logs() map[string]results.LogFile {
	out := map[string]results.LogFile{}
	for k, lf := range l.logged {
		out[k] = *lf
	}
	return out
}

// removeIfEmpty removes the logs (closed) when not one interval went in,
// and says whether it did: a run that failed before measuring (a full
// disk, a device that would not open) leaves no header-only logs that
// look like data.
func (l *hlogs) removeIfEmpty() bool {
	if l.wrote {
		return false
	}
	l.remove()
	return true
}

// remove removes the logs, beneath the folder's handle.
func (l *hlogs) remove() {
	for k := range l.files {
		unix.Unlinkat(l.dir.Fd(), k+".hlog", 0)
	}
}

func (l *hlogs) close() error {
	err := l.err
	for k, f := range l.files {
		if l.bufs[k] != nil {
			if e := l.bufs[k].Flush(); e != nil && err == nil {
				err = e
			}
		}
		if e := f.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}
