package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/regfile"
	"github.com/xrcbench/xrcbench/results"
)

// ErrInput is wrapped by every error about the input folders (missing,
// truncated, another schema, runs that cannot be compared): the CLI maps it
// to exit status 2.
var ErrInput = errors.New("bad input")

// inputError keeps the message of the underlying error (which names the
// file) and still answers errors.Is(err, ErrInput).
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrInput }

func inputErrorf(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// Run is one run folder as the report sees it.
type Run struct {
	Dir    string
	Label  string // short name for legends and file names
	Result *results.Result
	// Kinds lists the op kinds present, in results.OpKinds order.
	Kinds []string
	// Hists holds each kind's merged latency histogram (from result.json).
	Hists map[string]*hdrhistogram.Histogram
	// Timelines holds each kind's per-interval summaries (from <kind>.hlog),
	// at most TimelinePoints of them.
	Timelines map[string][]Interval
	// Notes are problems reading the folder that do not stop the report
	// (a missing or damaged interval log).
	Notes []string
	// overlayPlots are the report's paths of the run's op-kind overlay
	// PNGs, for summary.md to show under the headline (set by Generate).
	overlayPlots []string
}

// Interval is one interval of a <kind>.hlog.
type Interval struct {
	Tag    string
	Start  float64 // seconds since the first interval of the log
	Length float64 // seconds
	Count  int64
	// Lines is how many lines of the log the interval came from: more
	// than one when a lagging thread's report was written late.
	Lines int64
	P50   int64
	P99   int64
	Max   int64
	// Span is the width (seconds) of the time grid a long log was summed
	// into, to keep at most TimelinePoints points: 0 while every point is
	// one interval.
	Span float64
}

// LoadRun reads a run folder: result.json (validated by results.Load), the
// merged histograms it carries, and the <kind>.hlog interval logs beside it.
func LoadRun(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, inputErrorf("%s: no such run folder", dir)
	case err != nil:
		return nil, inputError{err}
	case !st.IsDir():
		return nil, inputErrorf("%s: not a folder (give the run folder that holds result.json)", dir)
	}
	r, err := results.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, inputErrorf("%s: no %s here: not a run folder", dir, results.FileName)
	}
	if err != nil {
		return nil, inputError{err}
	}
	run := &Run{
		Dir:       dir,
		Label:     filepath.Base(filepath.Clean(dir)),
		Result:    r,
		Kinds:     kindsOf(r),
		Hists:     map[string]*hdrhistogram.Histogram{},
		Timelines: map[string][]Interval{},
	}
	for _, kind := range slices.Sorted(maps.Keys(r.Histograms)) {
		h, err := results.DecodeHistogram(r.Histograms[kind])
		if err != nil {
			return nil, inputErrorf("%s: histograms.%s: %v", filepath.Join(dir, results.FileName), kind, err)
		}
		run.Hists[kind] = h
	}
	for _, kind := range run.Kinds {
		logged, isLogged := r.Logs[kind]
		if r.Ops[kind].Count == 0 && !isLogged {
			continue
		}
		// A kind is data from the file: never let it name a path elsewhere.
		path := filepath.Join(dir, fileSafe(kind)+".hlog")
		tl, merged, runID, err := readTimeline(path)
		if errors.Is(err, regfile.ErrRefused) || errors.Is(err, errNotHlog) {
			return nil, inputError{err}
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			if err := checkLog(path, r, runID, tl, isLogged, logged); err != nil {
				return nil, err
			}
		} else if isLogged {
			return nil, inputErrorf("%s: missing: %s says the run wrote it", path, results.FileName)
		}
		if _, ok := run.Hists[kind]; !ok {
			// The interval logs hold the same samples: their sum stands
			// in, unless a damaged log makes it a part only.
			if merged != nil && merged.TotalCount() > 0 && err == nil {
				run.Hists[kind] = merged
			} else {
				run.Notes = append(run.Notes, fmt.Sprintf("result.json has no histogram for %s and %s.hlog cannot stand in: its histogram and spectrum plots are left out", kind, kind))
			}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			run.Notes = append(run.Notes, fmt.Sprintf("no %s.hlog: no timeline for %s", kind, kind))
		case err != nil:
			// Keep what was read before the damage: a timeline that stops
			// early still says something, and the note says why it stops.
			run.Notes = append(run.Notes, err.Error())
		}
		if len(tl) > 0 {
			run.Timelines[kind] = tl
		}
	}
	return run, nil
}

// checkLog refuses a .hlog that is not the run's own: another run's id in
// it (two runs mixed in one folder, or a killed run's logs beside an
// earlier result), or other counts than the run wrote. Results from before
// run ids are read as they are.
func checkLog(path string, r *results.Result, runID string, tl []Interval, isLogged bool, logged results.LogFile) error {
	if r.RunID == "" {
		return nil
	}
	if runID != r.RunID {
		if runID == "" {
			runID = "none"
		}
		return inputErrorf("%s: not this run's interval log (run id %s, %s says %s): the folder mixes two runs", path, runID, results.FileName, r.RunID)
	}
	if !isLogged {
		return nil
	}
	// The engine counts the lines it wrote: a late report is a line of
	// its own, which the timeline merges into its interval.
	var n, count int64
	for _, iv := range tl {
		n += iv.Lines
		count += iv.Count
	}
	if n != logged.Intervals || count != logged.Count {
		return inputErrorf("%s: %d intervals, %d latencies; the run wrote %d and %d (%s): damaged or replaced", path, n, count, logged.Intervals, logged.Count, results.FileName)
	}
	return nil
}

// errNotHlog is a file that is no HdrHistogram interval log at all.
var errNotHlog = errors.New("not an HdrHistogram interval log")

// hlogLines passes an interval log through line by line, refusing a line
// that is none of an interval log's (a comment, the legend, an interval),
// and noting the run id line.
type hlogLines struct {
	rd    *bufio.Reader
	path  string
	n     int
	runID string
	rest  []byte
	err   error // the first error, as the line reader says it
}

// intervalLine is an interval: [Tag=...,]start,length,max,payload.
var intervalLine = regexp.MustCompile(`^(Tag=[^,]*,)?[0-9.]+,[0-9.]+,[0-9.]+,[A-Za-z0-9+/=]+\r?\n?$`)

func (h *hlogLines) Read(p []byte) (int, error) {
	for len(h.rest) == 0 {
		line, err := h.rd.ReadBytes('\n')
		if len(line) > 0 {
			h.n++
			switch {
			case bytes.HasPrefix(line, []byte(results.HlogRunIDPrefix)):
				h.runID = strings.TrimSpace(string(line[len(results.HlogRunIDPrefix):]))
			case line[0] == '#', bytes.HasPrefix(line, []byte(`"StartTimestamp"`)), len(bytes.TrimSpace(line)) == 0:
			case !intervalLine.Match(line):
				h.err = fmt.Errorf("%s: %w: line %d is none of its lines (comment, legend, interval)", h.path, errNotHlog, h.n)
				return 0, h.err
			}
			h.rest = line
		}
		if err != nil {
			if len(h.rest) > 0 {
				break
			}
			if err != io.EOF && h.err == nil {
				h.err = err
			}
			return 0, err
		}
	}
	n := copy(p, h.rest)
	h.rest = h.rest[n:]
	return n, nil
}

// readTimeline reads an HdrHistogram interval log: its intervals, their
// sum and the run id it names. On a damaged interval it returns what came
// before it and an error naming the file and the interval; a file that is
// no interval log at all (errNotHlog), or not one xrcbench reads
// (regfile.ErrRefused: a FIFO, a device, too big), is an error of its own.
func readTimeline(path string) ([]Interval, *hdrhistogram.Histogram, string, error) {
	f, err := regfile.OpenReader(path, regfile.MaxHlog, regfile.MaxHlogLine)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	lines := &hlogLines{rd: bufio.NewReader(f), path: path}
	tl, sum, err := readIntervals(path, lines)
	if lines.err != nil && (errors.Is(lines.err, errNotHlog) || errors.Is(lines.err, regfile.ErrRefused)) {
		return nil, nil, "", lines.err
	}
	return tl, sum, lines.runID, err
}

// kindsOf lists the op kinds of r: the known ones in report order, then
// any others sorted, so a newer engine's kinds are shown, not dropped.
func kindsOf(r *results.Result) []string {
	var kinds []string
	known := map[string]bool{}
	for _, k := range results.OpKinds {
		known[k] = true
		if _, ok := r.Ops[k]; ok {
			kinds = append(kinds, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Ops)) {
		if !known[k] {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// labelRuns gives runs distinct labels: the folder name, with a suffix
// when two folders share a name.
func LabelRuns(runs []*Run) {
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Label]++
	}
	n := map[string]int{}
	for _, r := range runs {
		if seen[r.Label] > 1 {
			n[r.Label]++
			r.Label = fmt.Sprintf("%s#%d", r.Label, n[r.Label])
		}
	}
}
