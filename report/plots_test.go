package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/xrcbench/xrcbench/internal/units"
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
	// Twice a screen's pixels: the 7-inch figure prints at 240 dpi.
	if b := img.Bounds(); b.Dx() < 1600 || b.Dy() < 900 {
		t.Errorf("%s: png is %dx%d, too small to print (want at least 1600x900)", f.Name, b.Dx(), b.Dy())
	}
	if ink := inked(img); ink < 0.01 {
		t.Errorf("%s: png is %.2f%% inked: blank", f.Name, 100*ink)
	}
	checkMargins(t, f.Name, img)
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
			figs, err := runFigures(run, "", countsAuto)
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
			f, err := LatencyHistogram("h", "reg", tt.h, countsAuto, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
			f, err = spectrum("s", "reg", []string{""}, []*hdrhistogram.Histogram{tt.h}, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
		})
	}
	timelines := []struct {
		name string
		ivs  []results.Interval
	}{
		{"none", nil},
		{"all empty", []results.Interval{{Start: 0, Length: 1}, {Start: 1, Length: 1}}},
		{"one interval", []results.Interval{{Start: 0, Length: 1, Count: 3, P50: 5, P99: 9, Max: 9}}},
		{"zeros", []results.Interval{{Start: 0, Length: 1, Count: 3}, {Start: 1, Length: 1, Count: 2}}},
		{"tags", []results.Interval{{Tag: "a", Start: 0, Length: 1, Count: 1, P50: 10, P99: 10, Max: 10}, {Tag: "b", Start: 0, Length: 1, Count: 1, P50: 20, P99: 20, Max: 20}}},
	}
	for _, tt := range timelines {
		t.Run("timeline "+tt.name, func(t *testing.T) {
			f, err := timeline("t", "reg", tt.ivs, 1, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
		})
	}
}

func TestOverlayFigures(t *testing.T) {
	a, b := loadFixture(t, lifecycleFixture()), loadFixture(t, noisyFixture())
	figs, err := overlayFigures([]*Run{a, b})
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

// svgText is one text element of a gonum SVG: where it starts and what
// it says.
type svgText struct {
	x    float64
	text string
}

var svgTextRE = regexp.MustCompile(`(?s)<text x="([-0-9.]+)"[^>]*>([^<]*)</text>`)

func svgTexts(svg []byte) []svgText {
	var out []svgText
	for _, m := range svgTextRE.FindAllSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(string(m[1]), 64)
		out = append(out, svgText{x, html.UnescapeString(string(m[2]))})
	}
	return out
}

// checkMargins: no plot draws on its outermost pixels, so titles,
// legends and the last tick label never touch the edge of the image.
func checkMargins(t *testing.T, name string, img image.Image) {
	t.Helper()
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("%s: %T has no SubImage", name, img)
	}
	b := img.Bounds()
	const edge = 3 // pixels
	for _, r := range []image.Rectangle{
		image.Rect(b.Min.X, b.Min.Y, b.Max.X, b.Min.Y+edge), // top: the title
		image.Rect(b.Max.X-edge, b.Min.Y, b.Max.X, b.Max.Y), // right: legend, last tick label
		image.Rect(b.Min.X, b.Min.Y, b.Min.X+edge, b.Max.Y), // left: the axis label
	} {
		if ink := inked(sub.SubImage(r)); ink > 0 {
			t.Errorf("%s: %.1f%% of the edge %v is inked: something touches the edge", name, 100*ink, r)
		}
	}
}

// TestCountScale: the histogram's count axis is logarithmic by default
// exactly where a linear one would hide the tail beyond p99.
func TestCountScale(t *testing.T) {
	spike := results.NewHistogram() // a tall peak and a long, thin tail
	for i := 0; i < 100_000; i++ {
		spike.RecordValue(1000)
	}
	for i := 0; i < 2_000; i++ {
		spike.RecordValue(int64(20_000 * math.Pow(10, 1.5*float64(i)/1000)))
	}
	broad := loadFixture(t, lifecycleFixture()).Hists[results.OpReg] // log-normal, σ 0.25
	tests := []struct {
		name  string
		h     *hdrhistogram.Histogram
		scale CountScale
		log   bool
	}{
		{"hidden tail, auto", spike, countsAuto, true},
		{"hidden tail, linear asked", spike, countsLinear, false},
		{"visible tail, auto", broad, countsAuto, false},
		{"visible tail, log asked", broad, countsLog, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LatencyHistogram("h", "reg", tt.h, tt.scale, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
			if got := strings.Contains(f.Caption, "logarithmic"); got != tt.log {
				t.Errorf("log count axis %v, want %v (caption %q)", got, tt.log, f.Caption)
			}
			// Log decades are labelled 1, 10, 100, 1k...; a linear axis of
			// this histogram has labels like 20k, 40k.
			var labels []string
			for _, tx := range svgTexts(f.SVG) {
				labels = append(labels, tx.text)
			}
			all := strings.Join(labels, " ")
			if tt.log != (strings.Contains(all, " 10 ") && strings.Contains(all, " 100 ")) {
				t.Errorf("tick labels %q do not match a log=%v count axis", all, tt.log)
			}
			for _, l := range labels {
				if tickLike.MatchString(l) && (strings.HasSuffix(l, ".0") || strings.Contains(l, ".00")) {
					t.Errorf("tick label %q has trailing zeros", l)
				}
			}
		})
	}
	for s, want := range map[string]CountScale{"": countsAuto, "auto": countsAuto, "log": countsLog, "linear": countsLinear} {
		if got, err := ParseCountScale(s); err != nil || got != want {
			t.Errorf("ParseCountScale(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseCountScale("logarithmic"); !errors.Is(err, results.ErrInput) {
		t.Errorf("ParseCountScale(logarithmic): %v, want an input error", err)
	}
}

var tickLike = regexp.MustCompile(`^-?[0-9.]+[kMG]?$`)

// TestKindOverlayFigures: every op kind of a run on one axis, with a
// legend entry each, right of the frame where it covers no curve.
func TestKindOverlayFigures(t *testing.T) {
	for _, f := range allFixtures() {
		t.Run(f.name, func(t *testing.T) {
			run := loadFixture(t, f)
			figs, err := kindOverlayFigures(run, "", countsAuto)
			if err != nil {
				t.Fatal(err)
			}
			if len(figs) != 2 || figs[0].Name != "overlay-spectrum" || figs[1].Name != "overlay-histogram" {
				t.Fatalf("figures %v, want overlay-spectrum and overlay-histogram", figNames(figs))
			}
			for _, fig := range figs {
				checkFigure(t, fig)
				checkLegendOutside(t, fig, run.Kinds)
			}
		})
	}
	one := loadFixture(t, lifecycleFixture())
	one.Kinds = one.Kinds[:1]
	if figs, err := kindOverlayFigures(one, "", countsAuto); err != nil || len(figs) != 0 {
		t.Errorf("one kind: %v %v, want nothing to overlay", figNames(figs), err)
	}
}

// checkLegendOutside: each legend entry is a text right of every other
// text of the plot (tick labels, axis labels, the title): in the band
// beside the frame, not over the data.
func checkLegendOutside(t *testing.T, f Figure, entries []string) {
	t.Helper()
	texts := svgTexts(f.SVG)
	isEntry := map[string]bool{}
	for _, e := range entries {
		isEntry[e] = true
	}
	left, found := math.Inf(1), 0
	for _, tx := range texts {
		if isEntry[tx.text] {
			left = math.Min(left, tx.x)
			found++
		}
	}
	if found != len(entries) {
		t.Fatalf("%s: %d of the legend entries %q found among %v", f.Name, found, entries, texts)
	}
	for _, tx := range texts {
		if !isEntry[tx.text] && tx.x >= left {
			t.Errorf("%s: %q at x=%v is not left of the legend (x=%v)", f.Name, tx.text, tx.x, left)
		}
	}
}

func figNames(figs []Figure) []string {
	var out []string
	for _, f := range figs {
		out = append(out, f.Name)
	}
	return out
}

// TestSweepFigureAxes: throughput and p99 against total threads and, as
// the sweep varies it, against the QP count; each point with error bars
// from its repetitions; every line in the legend beside the frame.
func TestSweepFigureAxes(t *testing.T) {
	figs := sweepDirFigures(t)
	byName := map[string]Figure{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	for name, xlabel := range map[string]string{
		"sweep-ops_per_sec": "total threads (processes × threads per process)", "sweep-p99": "total threads (processes × threads per process)",
		"sweep-qps-ops_per_sec": "QPs (processes × threads per line)", "sweep-qps-p99": "QPs (processes × threads per line)",
	} {
		f, ok := byName[name]
		if !ok {
			t.Errorf("no %s among %v", name, figNames(figs))
			continue
		}
		checkFigure(t, f)
		var texts []string
		for _, tx := range svgTexts(f.SVG) {
			texts = append(texts, tx.text)
		}
		if !slices.Contains(texts, xlabel) {
			t.Errorf("%s: no x label %q in %q", name, xlabel, texts)
		}
		if !strings.Contains(f.Caption, "the bars spanning the lowest to the highest repetition") {
			t.Errorf("%s: caption %q says nothing of the error bars", name, f.Caption)
		}
		var entries []string
		for _, tx := range texts {
			if strings.HasPrefix(tx, "reg, ") || strings.HasPrefix(tx, "unreg") || strings.HasPrefix(tx, "create, ") {
				entries = append(entries, tx)
			}
		}
		checkLegendOutside(t, f, entries)
	}
	// The total-thread axis is marked at the totals the sweep ran.
	var ticks []string
	for _, tx := range svgTexts(byName["sweep-ops_per_sec"].SVG) {
		if _, err := strconv.Atoi(tx.text); err == nil {
			ticks = append(ticks, tx.text)
		}
	}
	for _, want := range []string{"1", "2", "4"} {
		if !slices.Contains(ticks, want) {
			t.Errorf("total-thread ticks %v lack %s", ticks, want)
		}
	}
}

// TestResponseSpectrum: an open loop's kind gets its service and response
// times in one spectrum; a kind without response times gets none.
func TestResponseSpectrum(t *testing.T) {
	run := loadFixture(t, lifecycleFixture())
	resp := results.NewHistogram()
	for v := int64(1000); v < 200000; v += 997 {
		resp.RecordValue(v)
	}
	run.Hists["reg"+results.ResponseSuffix] = resp
	figs, err := runFigures(run, "", countsAuto)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range figs {
		if strings.HasSuffix(f.Name, "-response-spectrum") {
			checkFigure(t, f)
			got = append(got, f.Name)
		}
	}
	if want := []string{"reg-response-spectrum"}; !slices.Equal(got, want) {
		t.Errorf("response spectra %v, want %v", got, want)
	}
}

// TestPictureStamp: every picture of a run names, inside the image, the
// run it shows (workload, provider, shape, QP state, device and firmware,
// date) and carries the TEST DOUBLE mark exactly when the run went
// through the double; a lone spectrum names its p50, p99 and p99.9.
func TestPictureStamp(t *testing.T) {
	for _, f := range allFixtures() {
		t.Run(f.name, func(t *testing.T) {
			run := loadFixture(t, f)
			st := RunStamp(run.Result)
			// The footer names the build and how many repetitions the
			// figures are of: a picture in a paper has left its folder.
			reps := units.Plural(len(run.Result.Repetitions), "repetition")
			for _, part := range []string{title(run.Result), run.Result.Started.UTC().Format("2006-01-02"), reps, "xrcbench " + run.Result.Environment.Version} {
				if !strings.Contains(st.Line, part) {
					t.Errorf("stamp %q lacks %q", st.Line, part)
				}
			}
			if f.device != nil && f.device.FWVer != "" && !strings.Contains(st.Line, "fw "+f.device.FWVer) {
				t.Errorf("stamp %q lacks the firmware %s", st.Line, f.device.FWVer)
			}
			figs, err := runFigures(run, "", countsAuto)
			if err != nil {
				t.Fatal(err)
			}
			for _, fig := range figs {
				var texts []string
				for _, tx := range svgTexts(fig.SVG) {
					texts = append(texts, tx.text)
				}
				if !slices.Contains(texts, st.Line) {
					t.Errorf("%s: no stamp %q among its texts", fig.Name, st.Line)
				}
				if got := slices.Contains(texts, testDoubleMark); got != IsTestDouble(run.Result) {
					t.Errorf("%s: TEST DOUBLE mark %v, the run through the double %v", fig.Name, got, IsTestDouble(run.Result))
				}
				if strings.HasSuffix(fig.Name, "-spectrum") && !strings.Contains(fig.Name, "response") {
					kind := strings.TrimSuffix(fig.Name, "-spectrum")
					h := run.Hists[kind]
					v := results.ValuesAtPercentiles(h, 50, 99)
					if slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, "median of ") }) {
						// A band across repetitions: the marks are the
						// median repetition's, as result.json has each.
						v = []int64{medianRep(run.Result, kind, func(l results.Latency) int64 { return l.P50 }), medianRep(run.Result, kind, func(l results.Latency) int64 { return l.P99 })}
					}
					for i, want := range []string{"p50 " + fmtDur(v[0]), "p99 " + fmtDur(v[1])} {
						if h.TotalCount() >= []int64{2, 100}[i] && !slices.Contains(texts, want) {
							t.Errorf("%s: no mark %q among %q", fig.Name, want, texts)
						}
					}
				}
			}
		})
	}
}

// medianRep is the median over r's repetitions of a figure of kind's
// latency, as the engine summarised each repetition.
func medianRep(r *results.Result, kind string, f func(results.Latency) int64) int64 {
	var vs []int64
	for _, rep := range r.Repetitions {
		vs = append(vs, f(rep.Ops[kind].NS))
	}
	slices.Sort(vs)
	if len(vs)%2 == 0 {
		return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return vs[len(vs)/2]
}

func svgStrings(svg []byte) []string {
	var out []string
	for _, tx := range svgTexts(svg) {
		out = append(out, tx.text)
	}
	return out
}

// bandPaths counts the SVG's filled, translucent paths of at least min
// vertices: a band, not a legend's sample square.
func bandPaths(svg []byte, min int) int {
	n := 0
	for _, m := range regexp.MustCompile(`<path d="([^"]*)" style="fill:#[0-9A-F]{6};fill-opacity:`).FindAllSubmatch(svg, -1) {
		if bytes.Count(m[1], []byte("L"))+1 >= min {
			n++
		}
	}
	return n
}

// TestSpectrumBand: a kind's spectrum of several repetitions draws their
// median as the line in a band from the lowest to the highest, and says
// n; one whose log cannot be split into the repetitions (a damaged log),
// or of one repetition, pools them, says n, and draws no band.
func TestSpectrumBand(t *testing.T) {
	tests := []struct {
		fix  fixture
		kind string
		band bool
	}{
		{lifecycleFixture(), results.OpReg, true},
		{lifecycleFixture(), results.OpUnregLast, true},
		{errorsFixture(), results.OpRegInvalid, true}, // its last repetition stopped early
		{noisyFixture(), results.OpReg, false},        // its log is cut short
		{noisyFixture(), results.OpUnreg, false},      // no log at all
		{tinyFixture(), results.OpCreate, false},      // one repetition
	}
	for _, tt := range tests {
		t.Run(tt.fix.name+"/"+tt.kind, func(t *testing.T) {
			run := loadFixture(t, tt.fix)
			figs, err := runFigures(run, "", countsAuto)
			if err != nil {
				t.Fatal(err)
			}
			var f Figure
			for _, g := range figs {
				if g.Name == tt.kind+"-spectrum" {
					f = g
				}
			}
			if f.Name == "" {
				t.Fatalf("no %s-spectrum among %v", tt.kind, figNames(figs))
			}
			checkFigure(t, f)
			texts := svgStrings(f.SVG)
			n := run.Hists[tt.kind].TotalCount()
			wantN := fmt.Sprintf("n = %s operation", strconv.FormatInt(n, 10))
			if n >= 1000 {
				wantN = fmt.Sprintf("n = %d,%03d operation", n/1000, n%1000)
			}
			if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, wantN) }) {
				t.Errorf("no %q in the legend %q", wantN, texts)
			}
			reps := len(run.Result.Repetitions)
			median := fmt.Sprintf("median of %d repetitions", reps)
			if got := slices.Contains(texts, median); got != tt.band {
				t.Errorf("legend %q has %q: %v, want %v", texts, median, got, tt.band)
			}
			if got := bandPaths(f.SVG, 20); got != map[bool]int{true: 1, false: 0}[tt.band] {
				t.Errorf("%d band polygons, want band %v", got, tt.band)
			}
			if tt.band && !strings.Contains(f.Caption, "the band spans the lowest to the highest") {
				t.Errorf("caption %q does not say what the band is", f.Caption)
			}
			if !tt.band && reps > 1 && !strings.Contains(f.Caption, "pooled") {
				t.Errorf("caption %q does not say the repetitions are pooled", f.Caption)
			}
		})
	}
}

// TestTimelineRepetitions: each repetition of a timeline is a shaded
// block named rep 1 to rep N; a log whose stretches are not the run's
// repetitions is shaded but names none.
func TestTimelineRepetitions(t *testing.T) {
	iv := func(start, length float64) results.Interval {
		return results.Interval{Start: start, Length: length, Count: 10, P50: 100, P99: 200, Max: 300}
	}
	three := []results.Interval{iv(0, 1), iv(1, 1), iv(3, 1), iv(4, 0.5), {Start: 4.5, Length: 1}, iv(7, 1)}
	tests := []struct {
		name   string
		ivs    []results.Interval
		reps   int
		blocks int
		named  bool
	}{
		{"three repetitions", three, 3, 3, true},
		{"an empty interval inside one", three[:5], 2, 2, true},
		{"one", three[:2], 1, 1, true},
		{"log and result disagree", three, 4, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := timeline("t", "reg", tt.ivs, tt.reps, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
			texts := svgStrings(f.SVG)
			var names []string
			for _, s := range texts {
				if strings.HasPrefix(s, "rep ") {
					names = append(names, s)
				}
			}
			var want []string
			for i := range tt.reps {
				if tt.named {
					want = append(want, "rep "+strconv.Itoa(i+1))
				}
			}
			if !slices.Equal(names, want) {
				t.Errorf("repetitions named %q, want %q", names, want)
			}
			if got := strings.Count(string(f.SVG), "fill-opacity"); got != tt.blocks {
				t.Errorf("%d shaded blocks, want %d", got, tt.blocks)
			}
		})
	}
	// The fixtures' logs, written as the engine writes them.
	for _, fx := range []fixture{lifecycleFixture(), noisyFixture()} {
		run := loadFixture(t, fx)
		figs, err := runFigures(run, "", countsAuto)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			if strings.HasSuffix(f.Name, "-timeline") {
				last := "rep " + strconv.Itoa(len(run.Result.Repetitions))
				if texts := svgStrings(f.SVG); !slices.Contains(texts, "rep 1") || !slices.Contains(texts, last) {
					t.Errorf("%s/%s: no rep 1 .. %s among %q", fx.name, f.Name, last, texts)
				}
			}
		}
	}
}

// TestWorkerFigure: the per-worker plot says in its title how far apart
// the fastest and slowest workers are, sorts them, and says in its
// caption, with the measured spread, whether they are equal: within
// the spread of their repetitions where the result has one entry per
// repetition, else within 5%.
func TestWorkerFigure(t *testing.T) {
	tc := func(th int, n int64) results.ThreadCounts {
		return results.ThreadCounts{Thread: th, CPU: -1, Counts: map[string]int64{"reg": n, "unreg": n}}
	}
	w := func(p, rep int, n ...int64) results.Worker {
		wk := results.Worker{Index: p, Repetition: rep}
		for th, c := range n {
			wk.PerThread = append(wk.PerThread, tc(th, c))
		}
		return wk
	}
	reps := []results.Repetition{{Index: 0, Duration: results.Duration(time.Second)}, {Index: 1, Duration: results.Duration(time.Second)}}
	tests := []struct {
		name    string
		workers []results.Worker
		reps    []results.Repetition
		ratio   string
		order   []string
		verdict string
	}{
		{"equal within the repetitions", []results.Worker{w(0, 0, 100, 120), w(0, 1, 120, 100)}, reps,
			"1.00", []string{"p0 t0", "p0 t1"}, "are equal"},
		{"one slower beyond the repetitions", []results.Worker{w(0, 0, 100, 200), w(0, 1, 110, 210)}, reps,
			"1.95", []string{"p0 t1", "p0 t0"}, "are not equal"},
		{"whole-run counts, within 5%", []results.Worker{w(0, 0, 1000, 1010, 1020)}, reps[:1],
			"1.02", []string{"p0 t2", "p0 t1", "p0 t0"}, "are equal to within 2.0%"},
		{"whole-run counts, 20% apart", []results.Worker{w(0, 0, 1000, 1200)}, reps[:1],
			"1.20", []string{"p0 t1", "p0 t0"}, "are not equal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &Run{Kinds: []string{"reg", "unreg"}, Result: &results.Result{Workers: tt.workers, Repetitions: tt.reps}}
			f, err := workerThroughput("workers", run, Stamp{})
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, f)
			texts := svgStrings(f.SVG)
			if want := "operations per worker thread: fastest/slowest " + tt.ratio; !slices.Contains(texts, want) {
				t.Errorf("no title %q among %q", want, texts)
			}
			var order []string
			for _, s := range texts {
				if strings.HasPrefix(s, "p0 t") {
					order = append(order, s)
				}
			}
			if !slices.Equal(order, tt.order) {
				t.Errorf("workers in the order %q, want %q", order, tt.order)
			}
			if !strings.Contains(f.Caption, tt.verdict) || !strings.Contains(f.Caption, "fastest/slowest "+tt.ratio) {
				t.Errorf("caption %q does not say %q with the ratio %s", f.Caption, tt.verdict, tt.ratio)
			}
			if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, "mean ") }) {
				t.Errorf("no mean line in the legend %q", texts)
			}
		})
	}
	// The fixture's threads differ in speed, 10:11:11:12: the plot says so.
	run := loadFixture(t, lifecycleFixture())
	f, err := workerThroughput("workers", run, Stamp{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(svgStrings(f.SVG), "operations per worker thread: fastest/slowest 1.20") || !strings.Contains(f.Caption, "are not equal") {
		t.Errorf("fixture workers: texts %q, caption %q", svgStrings(f.SVG), f.Caption)
	}
}
