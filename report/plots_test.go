package report

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/results"
)

// inked is the share of pixels of img that are not background white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}

// checkFigure decodes both renderings: the PNG must have ink on it (axes,
// labels and data, not a blank canvas) and the SVG must be well-formed XML.
func checkFigure(t *testing.T, f Figure) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(f.PNG))
	if err != nil {
		t.Fatalf("%s: png: %v", f.Name, err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("%s: png is %dx%d", f.Name, b.Dx(), b.Dy())
	}
	if ink := inked(img); ink < 0.01 {
		t.Errorf("%s: png is %.2f%% inked: blank", f.Name, 100*ink)
	}
	d := xml.NewDecoder(bytes.NewReader(f.SVG))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: svg: %v", f.Name, err)
		}
	}
	if f.Title == "" || f.Caption == "" {
		t.Errorf("%s: no title or caption", f.Name)
	}
}

func TestRunFigures(t *testing.T) {
	for _, f := range allFixtures() {
		t.Run(f.name, func(t *testing.T) {
			run := loadFixture(t, f)
			figs, err := RunFigures(run, "", CountsAuto)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{"workers": true}
			for _, k := range run.Kinds {
				want[k+"-histogram"], want[k+"-spectrum"] = true, true
				if _, ok := run.Timelines[k]; ok {
					want[k+"-timeline"] = true
				}
			}
			for _, fig := range figs {
				checkFigure(t, fig)
				if !want[fig.Name] {
					t.Errorf("unexpected figure %s", fig.Name)
				}
				delete(want, fig.Name)
			}
			for name := range want {
				t.Errorf("figure %s missing", name)
			}
		})
	}
}

// TestLogAxisGuards feeds the plots the data that makes gonum/plot panic
// on a log axis: empty histograms, zero-only values, single points.
func TestLogAxisGuards(t *testing.T) {
	one := func(v int64) *hdrhistogram.Histogram {
		h := results.NewHistogram()
		h.RecordValue(v)
		return h
	}
	hists := []struct {
		name string
		h    *hdrhistogram.Histogram
	}{
		{"empty", results.NewHistogram()},
		{"zero", one(0)},
		{"one-ns", one(1)},
		{"single", one(1234)},
		{"huge", one(results.HistMaxNS)},
	}
	for _, tt := range hists {
		t.Run(tt.name, func(t *testing.T) {
			f, err := latencyHistogram("h", "reg", tt.h, CountsAuto)
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
			f, err = spectrum("s", "reg", []string{""}, []*hdrhistogram.Histogram{tt.h})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
		})
	}
	timelines := []struct {
		name string
		ivs  []Interval
	}{
		{"none", nil},
		{"all empty", []Interval{{Start: 0, Length: 1}, {Start: 1, Length: 1}}},
		{"one interval", []Interval{{Start: 0, Length: 1, Count: 3, P50: 5, P99: 9, Max: 9}}},
		{"zeros", []Interval{{Start: 0, Length: 1, Count: 3}, {Start: 1, Length: 1, Count: 2}}},
		{"tags", []Interval{{Tag: "a", Start: 0, Length: 1, Count: 1, P50: 10, P99: 10, Max: 10}, {Tag: "b", Start: 0, Length: 1, Count: 1, P50: 20, P99: 20, Max: 20}}},
	}
	for _, tt := range timelines {
		t.Run("timeline "+tt.name, func(t *testing.T) {
			f, err := timeline("t", "reg", tt.ivs)
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
		})
	}
}

func TestOverlayFigures(t *testing.T) {
	a, b := loadFixture(t, lifecycleFixture()), loadFixture(t, noisyFixture())
	figs, err := OverlayFigures([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// Only reg and unreg are in both runs.
	if len(figs) != 2 {
		t.Fatalf("%d overlay figures, want 2 (reg, unreg)", len(figs))
	}
	for _, f := range figs {
		checkFigure(t, f)
	}
}

// TestHistogramsFromHlog: a result.json without merged histograms still
// gets its distribution plots from the interval logs, with the same counts.
func TestHistogramsFromHlog(t *testing.T) {
	dir := copyRun(t, fixtureDir(t, lifecycleFixture()))
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for k, s := range r.Ops {
		want[k] = s.Count
	}
	r.Histograms = nil
	if err := results.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range want {
		h, ok := run.Hists[k]
		if !ok {
			t.Errorf("%s: no histogram from %s.hlog; notes %v", k, k, run.Notes)
			continue
		}
		if h.TotalCount() != n {
			t.Errorf("%s: %d samples from the log, result says %d", k, h.TotalCount(), n)
		}
	}
}

func TestWorkerCounts(t *testing.T) {
	tc := func(th int, reg int64) results.ThreadCounts {
		return results.ThreadCounts{Thread: th, CPU: -1, Counts: map[string]int64{"reg": reg}}
	}
	tests := []struct {
		name    string
		workers []results.Worker
		labels  []string
		reg     []int64
	}{
		{"per thread, one entry per process", []results.Worker{
			{Index: 0, PerThread: []results.ThreadCounts{tc(0, 10), tc(1, 20)}},
			{Index: 1, PerThread: []results.ThreadCounts{tc(0, 30), tc(1, 40)}},
		}, []string{"p0 t0", "p0 t1", "p1 t0", "p1 t1"}, []int64{10, 20, 30, 40}},
		{"fresh processes per repetition are summed", []results.Worker{
			{Index: 0, Repetition: 0, PerThread: []results.ThreadCounts{tc(0, 10)}},
			{Index: 0, Repetition: 1, PerThread: []results.ThreadCounts{tc(0, 15)}},
			{Index: 1, Repetition: 0, PerThread: []results.ThreadCounts{tc(0, 7)}},
			{Index: 1, Repetition: 1, PerThread: []results.ThreadCounts{tc(0, 8)}},
		}, []string{"p0 t0", "p1 t0"}, []int64{25, 15}},
		{"process counts only", []results.Worker{
			{Index: 0, Counts: map[string]int64{"reg": 5}},
			{Index: 0, Repetition: 1, Counts: map[string]int64{"reg": 6}},
		}, []string{"p0"}, []int64{11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels, counts := workerCounts(&results.Result{Workers: tt.workers})
			if strings.Join(labels, ",") != strings.Join(tt.labels, ",") {
				t.Fatalf("labels %v, want %v", labels, tt.labels)
			}
			for i, want := range tt.reg {
				if counts[i]["reg"] != want {
					t.Errorf("%s: reg %d, want %d", labels[i], counts[i]["reg"], want)
				}
			}
		})
	}
}
