package bench

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

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
// decoded and encoded by a v2Decoder and v2Encoder that keep their
// buffers: the coordinator shares the machine with the measured threads,
// and its garbage and page faults once took their CPUs (v2enc.go).
type hlogs struct {
	dir      *safedir.Dir // the run's temporary folder: the logs are made beneath it
	interval time.Duration
	files    map[string]*os.File
	bufs     map[string]*bufio.Writer
	pending  map[int64]map[string][]int64
	free     [][]int64 // cleared counts arrays for the next intervals
	enc      *v2Encoder
	dec      *v2Decoder
	late1    []int64                            // a late report's counts, written on their own
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
	wrote   bool   // any interval at all, in any log
	base    uint64 // CLOCK_MONOTONIC ns of interval 0 of this repetition
	// first is the earliest thread start reported (intervalMsg.Start): the
	// repetition's measured time, and so its first interval, begins there.
	first    uint64
	wallBase time.Time
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
		logged: map[string]*results.LogFile{}, enc: newV2Encoder(), dec: newV2Decoder(), baseMs: start.UnixMilli()}
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
	l.base, l.first = 0, 0
}

// add merges one thread's interval. base is the measurement start of the
// repetition (from the shared segment), which maps interval indexes to
// wall-clock times.
func (l *hlogs) add(m *intervalMsg, base uint64) error {
	if l.base == 0 {
		l.base = base
		now := verbs.Now()
		l.wallBase = time.Now().Add(-time.Duration(int64(now) - int64(base)))
	}
	if m.Start > 0 && (l.first == 0 || m.Start < l.first) {
		l.first = m.Start
	}
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
		pairs, err := l.dec.decode(enc)
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
			counts[p.idx] += p.n
			l.totals[kind].RecordValues(valueAt(p.idx), p.n)
			n += p.n
		}
		if isLate {
			l.write(m.Index, kind, counts, m.End)
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

// threadsDone marks threads that will report no more intervals.
func (l *hlogs) threadsDone(trs []threadResult) {
	for _, tr := range trs {
		l.progress[tr.Thread] = 1 << 62
	}
	l.flush(false)
}

func (l *hlogs) endRep() { l.flush(true) }

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
		for kind, counts := range l.pending[i] {
			l.write(i, kind, counts, l.ends[i])
		}
		l.release(l.pending[i])
		delete(l.pending, i)
		delete(l.ends, i)
	}
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

// write writes h as interval i of kind's log, ending at end
// (CLOCK_MONOTONIC ns; 0: the interval's planned end). Its length is the
// time it covered, so the last, short interval of a repetition does not
// claim a whole interval (a rate read from it would be low) nor overlap
// the next repetition's, and the first begins where the earliest thread
// began measuring (l.first): a reader's sum of counts over the sum of
// lengths is the run's operations per second.
func (l *hlogs) write(i int64, kind string, counts []int64, end uint64) {
	from := time.Duration(i) * l.interval
	to := from + l.interval
	if l.first > l.base {
		from = max(from, min(to, time.Duration(l.first-l.base)))
	}
	if end > l.base {
		to = min(to, max(from, time.Duration(end-l.base)))
	}
	enc, err := encodeInterval(l.enc, counts)
	if err != nil {
		if l.err == nil {
			l.err = fmt.Errorf("encoding interval %d of the %s log: %w", i, kind, err)
		}
		return
	}
	// The line hdrhistogram-go's log writer writes: start and length in
	// seconds from BaseTime (at the milliseconds histograms are stamped
	// with), the maximum in milliseconds, the histogram.
	startMs, endMs := l.wallBase.Add(from).UnixMilli(), l.wallBase.Add(to).UnixMilli()
	start, stop := float64(startMs-l.baseMs)/1000.0, float64(endMs-l.baseMs)/1000.0
	var total, top int64
	for idx, c := range counts {
		if c != 0 {
			total += c
			top = highestEquivalent(idx)
		}
	}
	if _, err := fmt.Fprintf(l.bufs[kind], "%f,%f,%f,%s\n", start, stop-start, float64(top)/hdrhistogram.MsToNsRatio, enc); err != nil && l.err == nil {
		l.err = err
	}
	l.wrote = true
	l.logged[kind].Intervals++
	l.logged[kind].Count += total
}

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
