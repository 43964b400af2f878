package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xrcbench/xrcbench/results"
)

// Figure is one rendered plot.
type Figure struct {
	Name    string // file stem under plots/, e.g. "reg-spectrum"
	Title   string
	Caption string // what it shows and how to read it
	SVG     []byte
	PNG     []byte
}

const (
	plotW   = 7 * vg.Inch
	plotH   = 4 * vg.Inch
	pngDPI  = 120
	binsPer = 20 // histogram bins per decade of latency
)

// render draws p as SVG and PNG.
func render(p *plot.Plot, name, title, caption string) (Figure, error) {
	f := Figure{Name: name, Title: title, Caption: caption}
	sc := vgsvg.New(plotW, plotH)
	p.Draw(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return f, fmt.Errorf("plot %s: svg: %w", name, err)
	}
	ic := vgimg.NewWith(vgimg.UseWH(plotW, plotH), vgimg.UseDPI(pngDPI))
	p.Draw(draw.New(ic))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return f, fmt.Errorf("plot %s: png: %w", name, err)
	}
	f.SVG, f.PNG = sb.Bytes(), pb.Bytes()
	return f, nil
}

// The log axes. gonum/plot panics on a value ≤ 0 anywhere on a log axis,
// and on an empty range (it widens min == max to min−1, which may be 0):
// every value put on a log axis goes through positive, and every log
// axis gets its range from logRange.

// minPositive stands in for 0 ns on a log axis: the histograms' resolution
// is 1 ns, so a 0 is "below 1 ns".
const minPositive = 1.0

func positive(v float64) float64 {
	if !(v >= minPositive) { // also catches NaN
		return minPositive
	}
	return v
}

// logRange returns whole decades around [lo, hi], at least one decade wide.
func logRange(lo, hi float64) (float64, float64) {
	lo, hi = positive(lo), positive(hi)
	if hi < lo {
		lo, hi = hi, lo
	}
	a := math.Pow(10, math.Floor(math.Log10(lo)))
	b := math.Pow(10, math.Ceil(math.Log10(hi)))
	if b <= a {
		b = a * 10
	}
	return a, b
}

// nsTicks marks decades of nanoseconds with duration labels, and 2× and 5×
// in between as minor ticks.
var nsTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		d := math.Pow(10, e)
		ts = append(ts, plot.Tick{Value: d, Label: decadeLabel(d)})
		for _, m := range []float64{2, 5} {
			if v := m * d; v <= max {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	return ts
})

// decadeLabel writes a power of ten of nanoseconds as 1ns, 10µs, 100ms.
func decadeLabel(d float64) string {
	for _, u := range []struct {
		scale float64
		unit  string
	}{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}} {
		if d >= u.scale {
			return fmt.Sprintf("%g%s", d/u.scale, u.unit)
		}
	}
	return fmt.Sprintf("%gns", d)
}

// rateTicks marks a linear axis from 0 at a 1-2-5 step with SI labels.
var rateTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	if !(max > min) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10((max-min)/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (max-min)/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strings.TrimSuffix(FormatRate(v), "/s")})
	}
	return ts
})

func logY(p *plot.Plot, lo, hi float64) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = nsTicks
	p.Y.Min, p.Y.Max = logRange(lo, hi)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	// Keep the legend off the frame's edge.
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(4)
	return p
}

// latencyHistogram draws h on a log time axis, re-binned into binsPer bins
// per decade so every decade gets the same resolution on screen.
func latencyHistogram(name, kind string, h *hdrhistogram.Histogram) (Figure, error) {
	p := newPlot(kind+": latency histogram", "latency", "operations")
	counts := map[int]float64{}
	zeros := int64(0)
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		if bar.To < 1 {
			zeros += bar.Count
		}
		v := positive(float64(bar.To))
		counts[int(math.Floor(math.Log10(v)*binsPer))] += float64(bar.Count)
	}
	caption := fmt.Sprintf("%d %s operations binned %d to a decade; the lines mark p50 and p99.", h.TotalCount(), kind, binsPer)
	if zeros > 0 {
		caption += fmt.Sprintf(" %d operations of 0 ns (below the timer's resolution) are counted in the lowest bin.", zeros)
	}
	if len(counts) == 0 {
		return emptyFigure(p, name, kind+": latency histogram", "no operations recorded")
	}
	idx := make([]int, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var bins []plotter.HistogramBin
	peak := 0.0
	for _, i := range idx {
		bins = append(bins, plotter.HistogramBin{
			Min: math.Pow(10, float64(i)/binsPer), Max: math.Pow(10, float64(i+1)/binsPer), Weight: counts[i],
		})
		peak = math.Max(peak, counts[i])
	}
	hist := &plotter.Histogram{Bins: bins, FillColor: color.RGBA{R: 70, G: 130, B: 180, A: 255}, LineStyle: plotter.DefaultLineStyle}
	hist.LineStyle.Width = vg.Points(0.3)
	p.Add(hist)
	for i, q := range []float64{50, 99} {
		v := positive(float64(results.ValueAtPercentile(h, q)))
		l, err := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: peak}})
		if err != nil {
			return Figure{}, err
		}
		l.Color = plotutil.Color(i + 1)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("p%g %s", q, FormatNS(float64(results.ValueAtPercentile(h, q)))), l)
	}
	p.Legend.Top = true
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = nsTicks
	p.X.Min, p.X.Max = logRange(bins[0].Min, bins[len(bins)-1].Max)
	p.Y.Min, p.Y.Max = 0, peak*1.05
	return render(p, name, kind+": latency histogram", caption)
}

// spectrumPoints samples h's percentile spectrum at x = 1/(1−p), 50 points
// per decade, up to the last percentile the count can resolve.
func spectrumPoints(h *hdrhistogram.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	if n == 0 {
		return nil
	}
	var xs, qs []float64
	for e := 0.0; ; e += 0.02 {
		x := math.Pow(10, e)
		if x > n || x > 1e6 {
			break
		}
		xs, qs = append(xs, x), append(qs, 100*(1-1/x))
	}
	var xys plotter.XYs
	for i, v := range results.ValuesAtPercentiles(h, qs...) {
		xys = append(xys, plotter.XY{X: xs[i], Y: positive(float64(v))})
	}
	return xys
}

// percentileTicks labels x = 1/(1−p) with p.
var percentileTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range []struct {
		x     float64
		label string
	}{{1, "0"}, {2, "50"}, {10, "90"}, {100, "99"}, {1e3, "99.9"}, {1e4, "99.99"}, {1e5, "99.999"}, {1e6, "99.9999"}} {
		if t.x >= min && t.x <= max {
			ts = append(ts, plot.Tick{Value: t.x, Label: t.label})
		}
	}
	return ts
})

// spectrum draws the percentile spectra of one or more histograms.
func spectrum(name, title string, labels []string, hs []*hdrhistogram.Histogram) (Figure, error) {
	p := newPlot(title, "percentile", "latency")
	lo, hi, xmax := math.Inf(1), 0.0, 1.0
	for i, h := range hs {
		xys := spectrumPoints(h)
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return Figure{}, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7) // the palette has 7 colours
		l.Width = vg.Points(1.5)
		p.Add(l)
		// A single point draws no line: mark the points as well.
		if len(xys) < 3 {
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return Figure{}, err
			}
			s.Color = l.Color
			p.Add(s)
		}
		if len(hs) > 1 || labels[i] != "" {
			p.Legend.Add(labels[i], l)
		}
		for _, xy := range xys {
			lo, hi, xmax = math.Min(lo, xy.Y), math.Max(hi, xy.Y), math.Max(xmax, xy.X)
		}
	}
	if hi == 0 {
		return emptyFigure(p, name, title, "no operations recorded")
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.X.Min, p.X.Max = 1, math.Max(10, xmax)
	logY(p, lo, hi)
	return render(p, name, title, "Latency at each percentile; the x axis is 1/(1−p), so every added nine gets the same width. Each line ends at the highest percentile its operation count resolves.")
}

// timeline draws p50, p99 and max per interval of a .hlog.
func timeline(name, kind string, ivs []Interval) (Figure, error) {
	title := kind + ": latency over time"
	p := newPlot(title, "time (s)", "latency")
	type series struct {
		label string
		get   func(Interval) int64
	}
	ss := []series{{"p50", func(iv Interval) int64 { return iv.P50 }}, {"p99", func(iv Interval) int64 { return iv.P99 }}, {"max", func(iv Interval) int64 { return iv.Max }}}
	lo, hi := math.Inf(1), 0.0
	// One line per tag (e.g. per repetition) and series; the legend
	// names each series once.
	tags := []string{}
	byTag := map[string][]Interval{}
	for _, iv := range ivs {
		if iv.Count == 0 {
			continue // an empty interval has no latency: a gap, not a zero
		}
		if _, ok := byTag[iv.Tag]; !ok {
			tags = append(tags, iv.Tag)
		}
		byTag[iv.Tag] = append(byTag[iv.Tag], iv)
	}
	for si, s := range ss {
		first := true
		for _, tag := range tags {
			for _, seg := range segments(byTag[tag]) {
				var xys plotter.XYs
				for _, iv := range seg {
					v := positive(float64(s.get(iv)))
					xys = append(xys, plotter.XY{X: iv.Start + iv.Length/2, Y: v})
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				l, sc, err := plotter.NewLinePoints(xys)
				if err != nil {
					return Figure{}, err
				}
				l.Color, sc.Color = plotutil.Color(si), plotutil.Color(si)
				sc.Radius = vg.Points(1.5)
				p.Add(l, sc)
				if first {
					p.Legend.Add(s.label, l)
					first = false
				}
			}
		}
	}
	if hi == 0 {
		return emptyFigure(p, name, title, "no interval recorded an operation")
	}
	p.Legend.Top = true
	logY(p, lo, hi)
	return render(p, name, title, fmt.Sprintf("p50, p99 and max of %s in each interval of %s.hlog; a drift or a spike shows what a single summary hides.", kind, kind))
}

// segments splits intervals where time jumps (between repetitions, or
// across empty intervals), so a line never bridges time nothing was measured.
func segments(ivs []Interval) [][]Interval {
	var out [][]Interval
	start := 0
	for i := 1; i <= len(ivs); i++ {
		if i == len(ivs) || ivs[i].Start > ivs[i-1].Start+1.5*math.Max(ivs[i-1].Length, 1e-3) {
			out = append(out, ivs[start:i])
			start = i
		}
	}
	return out
}

// emptyFigure renders a plot that says why it has no data, rather than
// leaving a hole in the report.
func emptyFigure(p *plot.Plot, name, title, why string) (Figure, error) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{why}})
	if err != nil {
		return Figure{}, err
	}
	p.Add(l)
	return render(p, name, title, why+".")
}

// workerThroughput draws each thread's (or, without per-thread counts, each
// worker process's) operations per second, one bar group per op kind:
// unequal bars mean some threads got the contended resource more often.
func workerThroughput(name string, run *Run) (Figure, error) {
	r := run.Result
	title := "operations per worker thread"
	secs := 0.0
	for _, rep := range r.Repetitions {
		secs += rep.Duration.D().Seconds()
	}
	unit := "operations per second"
	if secs <= 0 {
		secs, unit = 1, "operations"
	}
	labels, counts := workerCounts(r)
	p := newPlot(title, "worker process / thread", unit)
	var kinds []string
	for _, k := range run.Kinds {
		for _, c := range counts {
			if c[k] > 0 {
				kinds = append(kinds, k)
				break
			}
		}
	}
	if len(labels) == 0 || len(kinds) == 0 {
		return emptyFigure(p, name, title, "the result has no per-worker counts")
	}
	peak := 0.0
	// Bars of one group share the room of one x unit.
	width := vg.Length(float64(plotW-vg.Inch) / float64(len(labels)*(len(kinds)+1)))
	if width > vg.Points(20) {
		width = vg.Points(20)
	}
	for i, k := range kinds {
		vals := make(plotter.Values, len(labels))
		for j, c := range counts {
			vals[j] = float64(c[k]) / secs
			peak = math.Max(peak, vals[j])
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return Figure{}, err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(float64(i)-float64(len(kinds)-1)/2)
		p.Add(b)
		p.Legend.Add(k, b)
	}
	p.Legend.Top = true
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	p.Y.Tick.Marker = rateTicks
	// Head room for the legend above the bars.
	p.Y.Min, p.Y.Max = 0, peak*(1.1+0.08*float64(len(kinds)))
	caption := fmt.Sprintf("Operations per second of each worker thread over %.3gs of measured repetitions; even bars mean fair access.", secs)
	if unit == "operations" {
		caption = "Operations of each worker thread (the result records no repetition durations, so no rate)."
	}
	return render(p, name, title, caption)
}

// workerCounts sums each worker thread's (or, without per-thread counts,
// each worker process's) operations per kind over the repetitions.
func workerCounts(r *results.Result) (labels []string, counts []map[string]int64) {
	// Each repetition starts fresh worker processes, so r.Workers has one
	// entry per process and repetition: sum a process's (thread's) counts
	// over the repetitions, which the rate divides by their total time.
	slot := map[string]int{}
	addCounts := func(label string, c map[string]int64) {
		i, ok := slot[label]
		if !ok {
			i = len(labels)
			slot[label] = i
			labels = append(labels, label)
			counts = append(counts, map[string]int64{})
		}
		for k, n := range c {
			counts[i][k] += n
		}
	}
	for _, w := range r.Workers {
		if len(w.PerThread) == 0 {
			addCounts(fmt.Sprintf("p%d", w.Index), w.Counts)
			continue
		}
		for _, t := range w.PerThread {
			addCounts(fmt.Sprintf("p%d t%d", w.Index, t.Thread), t.Counts)
		}
	}
	return labels, counts
}

// RunFigures draws every plot of one run: per op kind a latency
// histogram, a percentile spectrum and a timeline, then per-worker
// throughput. prefix is prepended to the file names (several runs in one
// report).
func RunFigures(run *Run, prefix string) ([]Figure, error) {
	var figs []Figure
	add := func(f Figure, err error) error {
		if err == nil {
			figs = append(figs, f)
		}
		return err
	}
	for _, kind := range run.Kinds {
		h, ok := run.Hists[kind]
		if ok {
			if err := add(latencyHistogram(prefix+fileSafe(kind)+"-histogram", kind, h)); err != nil {
				return nil, err
			}
			if err := add(spectrum(prefix+fileSafe(kind)+"-spectrum", kind+": percentile spectrum", []string{""}, []*hdrhistogram.Histogram{h})); err != nil {
				return nil, err
			}
		}
		if ivs, ok := run.Timelines[kind]; ok {
			if err := add(timeline(prefix+fileSafe(kind)+"-timeline", kind, ivs)); err != nil {
				return nil, err
			}
		}
	}
	if err := add(workerThroughput(prefix+"workers", run)); err != nil {
		return nil, err
	}
	return figs, nil
}

// OverlayFigures draws, per op kind, the spectra of several runs in one plot.
func OverlayFigures(runs []*Run) ([]Figure, error) {
	var figs []Figure
	for _, kind := range unionKinds(runs) {
		var labels []string
		var hs []*hdrhistogram.Histogram
		for _, r := range runs {
			if h, ok := r.Hists[kind]; ok {
				labels = append(labels, r.Label)
				hs = append(hs, h)
			}
		}
		if len(hs) < 2 {
			continue
		}
		f, err := spectrum("overlay-"+fileSafe(kind)+"-spectrum", kind+": percentile spectra of "+plural(len(hs), "run"), labels, hs)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

func unionKinds(runs []*Run) []string {
	seen := map[string]bool{}
	var kinds []string
	for _, r := range runs {
		for _, k := range r.Kinds {
			if !seen[k] {
				seen[k] = true
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}
