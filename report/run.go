package report

import (
	"fmt"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
)

// inputErrorf is an error about the input (results.InputErrorf).
func inputErrorf(format string, args ...any) error { return results.InputErrorf(format, args...) }

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
	// at most results.TimelinePoints of them.
	Timelines map[string][]results.Interval
	// Notes are problems reading the folder that do not stop the report
	// (a missing or damaged interval log).
	Notes []string
	// overlayPlots are the report's paths of the run's op-kind overlay
	// PNGs, for summary.md to show under the headline (set by Generate).
	overlayPlots []string
}

// LoadRun reads a run folder through results.ReadRunFolder, which holds
// the folder to the contract: the report reads nothing of it itself.
func LoadRun(dir string) (*Run, error) {
	rf, err := results.ReadRunFolder(dir)
	if err != nil {
		return nil, err
	}
	return &Run{
		Dir: rf.Dir, Label: filepath.Base(filepath.Clean(dir)), Result: rf.Result,
		Kinds: rf.Kinds, Hists: rf.Hists, Timelines: rf.Timelines, Notes: rf.Notes,
	}, nil
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
