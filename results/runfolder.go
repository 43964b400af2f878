package results

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/regfile"
)

// ErrInput is wrapped by every error about an input folder (missing,
// truncated, another schema, a log of another run): the CLI maps it to
// exit status 2.
var ErrInput = errors.New("bad input")

// inputError keeps the message of the underlying error (which names the
// file) and still answers errors.Is(err, ErrInput).
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrInput }

// InputError is err, answering errors.Is(err, ErrInput) and keeping its
// message, for the readers of run folders above results (report, analysis).
func InputError(err error) error { return inputError{err} }

// InputErrorf is an error about the input, formatted as fmt.Errorf.
func InputErrorf(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// RunFolder is one run folder as it was read: its result, the op kinds
// it has, each kind's merged latency histogram and timeline, and what
// could not be read without the folder being unreadable.
type RunFolder struct {
	Dir    string
	Result *Result
	// Kinds lists the op kinds present, in OpKinds order (KindsOf).
	Kinds []string
	// Hists holds each kind's merged latency histogram (from result.json,
	// or the sum of its interval log where result.json has none).
	Hists map[string]*hdrhistogram.Histogram
	// Timelines holds each kind's per-interval summaries (from <kind>.hlog),
	// at most TimelinePoints of them.
	Timelines map[string][]Interval
	// Notes are problems reading the folder that do not stop a reader
	// (a missing or damaged interval log).
	Notes []string
}

// ReadRunFolder reads a run folder: result.json (validated by Load), the
// merged histograms it carries, and the <kind>.hlog interval logs beside
// it, each held to the run's own counts and id. Every error about the
// folder wraps ErrInput.
func ReadRunFolder(dir string) (*RunFolder, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, InputErrorf("%s: no such run folder", dir)
	case err != nil:
		return nil, inputError{err}
	case !st.IsDir():
		return nil, InputErrorf("%s: not a folder (give the run folder that holds result.json)", dir)
	}
	r, err := Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, InputErrorf("%s: no %s here: not a run folder", dir, FileName)
	}
	if err != nil {
		return nil, inputError{err}
	}
	run := &RunFolder{
		Dir:       dir,
		Result:    r,
		Kinds:     KindsOf(r),
		Hists:     map[string]*hdrhistogram.Histogram{},
		Timelines: map[string][]Interval{},
	}
	for _, kind := range slices.Sorted(maps.Keys(r.Histograms)) {
		h, err := DecodeHistogram(r.Histograms[kind])
		if err != nil {
			return nil, InputErrorf("%s: histograms.%s: %v", filepath.Join(dir, FileName), kind, err)
		}
		run.Hists[kind] = h
	}
	for _, kind := range run.Kinds {
		logged, isLogged := r.Logs[kind]
		if r.Ops[kind].Count == 0 && !isLogged {
			continue
		}
		// A kind is data from the file: never let it name a path elsewhere.
		path := filepath.Join(dir, SafeFileName(kind)+".hlog")
		tl, merged, runID, err := ReadTimeline(path)
		if errors.Is(err, regfile.ErrRefused) || errors.Is(err, ErrNotHlog) {
			return nil, inputError{err}
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			if err := checkLog(path, r, runID, tl, isLogged, logged); err != nil {
				return nil, err
			}
		} else if isLogged {
			return nil, InputErrorf("%s: missing: %s says the run wrote it", path, FileName)
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

// MixedLogError is a .hlog of another run than the result.json read
// before it: a folder holding two runs' files, or one that a run replaced
// while it was being read (then result.json now says another run id than
// ResultRunID).
type MixedLogError struct {
	Path                  string
	LogRunID, ResultRunID string
}

func (e *MixedLogError) Error() string {
	return fmt.Sprintf("%s: not this run's interval log (run id %s, %s says %s): the folder mixes two runs", e.Path, e.LogRunID, FileName, e.ResultRunID)
}

// checkLog refuses a .hlog that is not the run's own: another run's id in
// it (two runs mixed in one folder, or a killed run's logs beside an
// earlier result), or other counts than the run wrote. Results from before
// run ids are read as they are.
func checkLog(path string, r *Result, runID string, tl []Interval, isLogged bool, logged LogFile) error {
	if r.RunID == "" {
		return nil
	}
	if runID != r.RunID {
		if runID == "" {
			runID = "none"
		}
		return InputError(&MixedLogError{Path: path, LogRunID: runID, ResultRunID: r.RunID})
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
		return InputErrorf("%s: %d intervals, %d latencies; the run wrote %d and %d (%s): damaged or replaced", path, n, count, logged.Intervals, logged.Count, FileName)
	}
	return nil
}

// KindsOf lists the op kinds of r: the known ones in report order, then
// any others sorted, so a newer engine's kinds are shown, not dropped.
func KindsOf(r *Result) []string {
	var kinds []string
	known := map[string]bool{}
	for _, k := range OpKinds {
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

// SafeFileName is s with every character but letters, digits, '-', '_'
// and '.' replaced by '_', for a file name made of a name from a result
// (an op kind's interval log, a run label's plot prefix): it never names
// a path elsewhere.
func SafeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
