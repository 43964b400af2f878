package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
)

// LoadRun checks each .hlog against what result.json says the run wrote:
// its run id, its lines and its latencies. The engine counts lines, and a
// late report (a thread that lagged on a loaded machine) is a line of its
// own that the timeline merges into its interval: such a log is the run's
// own, not "damaged or replaced" (which failed qualify's soak under load).
func TestLoadRunChecksLogs(t *testing.T) {
	start := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	// hlog writes the lines (interval index, latencies) under run id.
	hlog := func(id string, lines [][2]int64) []byte {
		var b bytes.Buffer
		b.WriteString(results.HlogRunIDPrefix + id + "\n")
		w := hdrhistogram.NewHistogramLogWriter(&b)
		w.OutputLogFormatVersion()
		w.OutputStartTime(start.UnixMilli())
		w.OutputLegend()
		for _, ln := range lines {
			h := results.NewHistogram()
			for range ln[1] {
				h.RecordValue(1000)
			}
			h.SetStartTimeMs(start.UnixMilli() + 200*ln[0])
			h.SetEndTimeMs(start.UnixMilli() + 200*(ln[0]+1))
			if err := w.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes()
	}
	late := [][2]int64{{0, 3}, {1, 4}, {2, 5}, {0, 2}} // interval 0 again, late
	for _, tc := range []struct {
		name    string
		id      string
		lines   [][2]int64
		logged  results.LogFile
		wantErr string // "" loads
	}{
		{"a late line", "run-1", late, results.LogFile{Intervals: 4, Count: 14}, ""},
		{"a line lost", "run-1", late[:3], results.LogFile{Intervals: 4, Count: 14}, "3 intervals, 12 latencies; the run wrote 4 and 14"},
		{"latencies changed", "run-1", [][2]int64{{0, 3}, {1, 4}, {2, 5}, {0, 3}}, results.LogFile{Intervals: 4, Count: 14}, "4 intervals, 15 latencies"},
		{"another run's log", "run-2", late, results.LogFile{Intervals: 4, Count: 14}, "the folder mixes two runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.logged.File = "reg.hlog"
			h := results.NewHistogram()
			for range 14 {
				h.RecordValue(1000)
			}
			enc, err := results.EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			r := &results.Result{
				Schema: results.Schema, RunID: "run-1", Status: results.StatusOK, Started: start, Finished: start.Add(time.Second),
				Config:     results.Config{Workload: "steady", Provider: "sim", Procs: 1, Threads: 1, QPs: 1, Repetitions: 1, Interval: results.Duration(200 * time.Millisecond)},
				Ops:        map[string]results.OpStats{results.OpReg: {Count: 14, NS: results.Summarize(h)}},
				Histograms: map[string]string{results.OpReg: enc},
				Logs:       map[string]results.LogFile{results.OpReg: tc.logged},
			}
			if err := results.Write(dir, r); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "reg.hlog"), hlog(tc.id, tc.lines), 0o644); err != nil {
				t.Fatal(err)
			}
			run, err := LoadRun(dir)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("LoadRun: %v", err)
			case tc.wantErr == "":
				tl := run.Timelines[results.OpReg]
				if len(tl) != 3 || tl[0].Count != 5 || tl[0].Lines != 2 {
					t.Errorf("timeline %+v, want 3 intervals, the first of 2 lines and 5 latencies", tl)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("LoadRun: %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
}
