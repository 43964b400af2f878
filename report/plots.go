package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"image/png"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/internal/units"
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
	PlotW = 7 * vg.Inch
	PlotH = 4 * vg.Inch
	// 240 dpi: 1680×960 pixels, twice a screen's, so a PNG prints sharp
	// at the figure's 7 inches (the SVG beside it is exact at any size).
	pngDPI  = 240
	binsPer = 20 // histogram bins per decade of latency
)

// Room around the plot, so the title and the last tick label never touch
// the edge of the image.
var (
	padLeft, padRight  = vg.Points(4), vg.Points(16)
	padBottom, padTop  = vg.Points(4), vg.Points(8)
	legendGap          = vg.Points(10)
	legendOutsideWidth = PlotW * 2 / 5 // at most; a legend is as wide as its longest entry
	legendFontSize     = vg.Points(10)
)

// Stamp is what a picture says, inside the image, about what it shows:
// a PNG pasted into a firmware report or a ticket has left its run
// folder, and without it "reg: percentile spectrum" could be of any run.
type Stamp struct {
	Line       string // workload, provider, device and firmware, QP state, date
	TestDouble bool   // measured through the libibverbs test double: marked on the picture
}

// RunStamp is the stamp of one run's pictures.
func RunStamp(r *results.Result) Stamp {
	parts := []string{title(r)}
	if d := deviceIdentity(r.Environment); d != "" {
		parts = append(parts, d)
	}
	if !r.Started.IsZero() {
		parts = append(parts, r.Started.UTC().Format("2006-01-02 15:04 UTC"))
	}
	// A figure in a paper is read without its run folder: how many
	// repetitions its spread is of, and which build measured it.
	parts = append(parts, units.Plural(len(r.Repetitions), "repetition"), versionText(r.Environment.Version))
	return Stamp{Line: strings.Join(parts, " · "), TestDouble: IsTestDouble(r)}
}

// versionText names the build that measured a run, "xrcbench unknown
// version" for a result that does not say.
func versionText(v string) string {
	if v == "" {
		return "xrcbench unknown version"
	}
	return "xrcbench " + v
}

// runsStamp is the stamp of a picture of several runs: the one's stamp
// when there is one, else what they share and how many they are.
func runsStamp(runs []*Run) Stamp {
	if len(runs) == 1 {
		return RunStamp(runs[0].Result)
	}
	var st Stamp
	seen := map[string]bool{}
	var ids, versions []string
	reps := map[int]bool{}
	for _, r := range runs {
		st.TestDouble = st.TestDouble || IsTestDouble(r.Result)
		reps[len(r.Result.Repetitions)] = true
		if v := versionText(r.Result.Environment.Version); !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
		id := r.Result.Config.WorkloadLabel() + " on " + r.Result.Config.Provider
		if d := deviceIdentity(r.Result.Environment); d != "" {
			id += " " + d
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	st.Line = units.Plural(len(runs), "run") + ": " + strings.Join(ids, "; ")
	// The repetitions and the builds, once when the runs share them.
	if len(reps) == 1 {
		for n := range reps {
			st.Line += " · " + units.Plural(n, "repetition") + " each"
		}
	} else {
		ns := slices.Sorted(maps.Keys(reps))
		st.Line += fmt.Sprintf(" · %d to %d repetitions", ns[0], ns[len(ns)-1])
	}
	st.Line += " · " + strings.Join(versions, ", ")
	return st
}

// deviceIdentity is the device's name and firmware, where known.
func deviceIdentity(env results.Environment) string {
	if !env.Device.Known() {
		return ""
	}
	name, fw := env.Device.Name, env.Device.FWVer
	switch {
	case name != "" && fw != "":
		return name + " fw " + fw
	case name != "":
		return name
	}
	return ""
}

// stampFontSize is the stamp's: small, as a caption under the frame.
var stampFontSize = vg.Points(7)

// testDoubleMark is written in red on every picture of the test double's
// figures, which say nothing about an adapter.
const testDoubleMark = "TEST DOUBLE"

// render draws p as SVG and PNG, with its legend inside the frame.
func render(p *plot.Plot, name, title, caption string, st Stamp) (Figure, error) {
	return renderPlot(p, false, name, title, caption, st)
}

// renderLegendOutside draws p with its legend in a band right of the
// frame, where it cannot cover a curve: for plots with many lines.
func renderLegendOutside(p *plot.Plot, name, title, caption string, st Stamp) (Figure, error) {
	return renderPlot(p, true, name, title, caption, st)
}

func renderPlot(p *plot.Plot, outside bool, name, title, caption string, st Stamp) (Figure, error) {
	f := Figure{Name: name, Title: title, Caption: caption}
	leg := p.Legend
	if outside {
		p.Legend = plot.NewLegend()
		defer func() { p.Legend = leg }()
		leg.TextStyle.Font.Size = legendFontSize
	}
	// The axis labels are drawn here, not by gonum/plot: it reserves
	// room for a label centred in data coordinates, which on a log axis
	// lies near the far end, and shrinks the frame by half the label.
	xl, yl := p.X.Label, p.Y.Label
	p.X.Label.Text, p.Y.Label.Text = "", ""
	defer func() { p.X.Label.Text, p.Y.Label.Text = xl.Text, yl.Text }()
	titleH := vg.Length(0)
	if p.Title.Text != "" {
		titleH = p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	}
	stampSty := p.X.Tick.Label
	stampSty.Font.Size = stampFontSize
	stampSty.Color = color.Gray{Y: 0x55}
	stampSty.XAlign, stampSty.YAlign = draw.XLeft, draw.YBottom
	markSty := stampSty
	markSty.Font.Size = stampFontSize * 9 / 7
	markSty.Color = color.RGBA{R: 0xcc, A: 0xff}
	drawOn := func(dc draw.Canvas) {
		// One white ground under frame and legend band alike.
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		c := draw.Crop(dc, padLeft, -padRight, padBottom, -padTop)
		// The stamp is a line of its own under everything else, led by
		// the test double's mark in red.
		x, h := c.Min.X, vg.Length(0)
		if st.TestDouble {
			c.FillText(markSty, vg.Point{X: x, Y: c.Min.Y}, testDoubleMark)
			x += markSty.Width(testDoubleMark) + vg.Points(6)
			h = markSty.Height(testDoubleMark)
		}
		if st.Line != "" {
			c.FillText(stampSty, vg.Point{X: x, Y: c.Min.Y}, st.Line)
			h = max(h, stampSty.Height(st.Line))
		}
		if h > 0 {
			c = draw.Crop(c, 0, 0, h+vg.Points(4), 0)
		}
		if outside {
			w := min(leg.Rectangle(c).Size().X, legendOutsideWidth)
			band := draw.Crop(c, c.Size().X-w, 0, 0, -titleH)
			leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
			leg.Draw(band)
			c = draw.Crop(c, 0, -w-legendGap, 0, 0)
		}
		xh := vg.Length(0)
		if xl.Text != "" {
			xh = xl.TextStyle.Height(xl.Text) + xl.Padding
		}
		if yl.Text != "" {
			sty := yl.TextStyle
			sty.Rotation += math.Pi / 2
			h, d := yl.TextStyle.Height(yl.Text), yl.TextStyle.FontExtents().Descent
			c.FillText(sty, vg.Point{X: c.Min.X + h - d, Y: (c.Min.Y + xh + c.Max.Y - titleH) / 2}, yl.Text)
			c = draw.Crop(c, h+d+yl.Padding, 0, 0, 0)
		}
		if xl.Text != "" {
			d := xl.TextStyle.FontExtents().Descent
			c.FillText(xl.TextStyle, vg.Point{X: c.Center().X, Y: c.Min.Y + d}, xl.Text)
			c = draw.Crop(c, 0, 0, xh, 0)
		}
		p.Draw(c)
	}
	sc := vgsvg.New(PlotW, PlotH)
	drawOn(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return f, fmt.Errorf("plot %s: svg: %w", name, err)
	}
	ic := vgimg.NewWith(vgimg.UseWH(PlotW, PlotH), vgimg.UseDPI(pngDPI))
	drawOn(draw.New(ic))
	var pb bytes.Buffer
	// Plots are flat colour: the fastest compression is nearly as small,
	// and several times quicker for a report of dozens of plots.
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&pb, ic.Image()); err != nil {
		return f, fmt.Errorf("plot %s: png: %w", name, err)
	}
	// A device or host name in a title would be a control character in
	// the XML, which no viewer parses.
	f.SVG, f.PNG = []byte(safetext.Text(sb.String())), pb.Bytes()
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

// siLabel writes a tick value with an SI prefix and no trailing zeros
// (500, 2.5k, 40k, 1.2M), so every label of an axis reads alike: never
// 25000.00 beside 5000.
func siLabel(v float64) string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	switch a := math.Abs(v); {
	case a >= 1e9:
		return num(v/1e9) + "G"
	case a >= 1e6:
		return num(v/1e6) + "M"
	case a >= 1e3:
		return num(v/1e3) + "k"
	}
	return num(v)
}

// linearTicks marks a linear axis at a 1-2-5 step, labels by siLabel.
var linearTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
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
	for i := math.Ceil(min / step); i*step <= max; i++ {
		// i*step, not a running sum: no 0.30000000000000004.
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: siLabel(v)})
		if half := v + step/2; half <= max {
			ts = append(ts, plot.Tick{Value: half})
		}
	}
	return ts
})

// rateTicks marks an operations-per-second axis.
var rateTicks = linearTicks

// logCountTicks marks decades of a log count axis (1, 10, 100, 1k, ...).
var logCountTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		d := math.Pow(10, e)
		if d >= min {
			ts = append(ts, plot.Tick{Value: d, Label: siLabel(d)})
		}
		for _, m := range []float64{2, 5} {
			if v := m * d; v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
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

// CountScale is the count axis of the latency histograms.
type CountScale string

const (
	// countsAuto: logarithmic where the tail beyond p99 would be
	// invisible on a linear axis, linear elsewhere.
	countsAuto   CountScale = "auto"
	countsLog    CountScale = "log"
	countsLinear CountScale = "linear"
)

// ParseCountScale reads a --counts value.
func ParseCountScale(s string) (CountScale, error) {
	switch c := CountScale(s); c {
	case countsAuto, countsLog, countsLinear:
		return c, nil
	case "":
		return countsAuto, nil
	}
	return "", inputErrorf("count scale %q: want auto, log or linear", s)
}

// tailVisible is the height, as a share of the tallest bin, below which a
// bin is lost on a linear count axis: at 2% of a 300-pixel frame it is
// six pixels, a hairline beside the peak.
const tailVisible = 0.02

// tailReach: a tail beyond p99 that reaches past tailReach × p99 is long
// enough to matter (slow outliers, a second mode); when every bin of it
// is below tailVisible, countsAuto draws the counts on a log axis.
const tailReach = 2

// latencyBins re-bins h into binsPer bins per decade of latency, so every
// decade gets the same resolution on screen.
type latencyBins struct {
	bins  []plotter.HistogramBin // ascending, empty bins left out
	peak  float64
	zeros int64 // operations of 0 ns, counted in the lowest bin
}

func binLatencies(h *hdrhistogram.Histogram) latencyBins {
	var lb latencyBins
	counts := map[int]float64{}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		if bar.To < 1 {
			lb.zeros += bar.Count
		}
		v := positive(float64(bar.To))
		counts[int(math.Floor(math.Log10(v)*binsPer))] += float64(bar.Count)
	}
	for _, i := range slices.Sorted(maps.Keys(counts)) {
		lb.bins = append(lb.bins, plotter.HistogramBin{
			Min: math.Pow(10, float64(i)/binsPer), Max: math.Pow(10, float64(i+1)/binsPer), Weight: counts[i],
		})
		lb.peak = math.Max(lb.peak, counts[i])
	}
	return lb
}

// tailHidden reports whether a long tail beyond p99 holds operations
// that a linear count axis would not show.
func (lb latencyBins) tailHidden(p99 float64) bool {
	tail, far := 0.0, false
	for _, b := range lb.bins {
		if b.Min >= p99 {
			tail = math.Max(tail, b.Weight)
			far = far || b.Max > tailReach*p99
		}
	}
	return far && tail < tailVisible*lb.peak
}

// countAxis sets the count axis of a histogram of at most peak per bin
// and says what it chose.
func countAxis(p *plot.Plot, log bool, peak float64) {
	p.Y.Label.Text = "operations per bin"
	if log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logCountTicks
		// Below 1 so a bin of one operation still shows; head room above
		// the peak for the legend.
		p.Y.Min, p.Y.Max = 0.5, math.Max(peak, 1)*4
		return
	}
	p.Y.Tick.Marker = linearTicks
	p.Y.Min, p.Y.Max = 0, peak*1.15
}

// useLog decides the count axis for scale and the histograms' tails.
func useLog(scale CountScale, hidden bool) bool {
	switch scale {
	case countsLog:
		return true
	case countsLinear:
		return false
	}
	return hidden
}

const logCountNote = " The count axis is logarithmic: on a linear one the long tail beyond p99 would be under 2% of the tallest bin, invisible."

// LatencyHistogram draws h on a log time axis, binsPer bins per decade.
func LatencyHistogram(name, kind string, h *hdrhistogram.Histogram, scale CountScale, st Stamp) (Figure, error) {
	title := kind + ": latency histogram"
	p := newPlot(title, "latency", "operations per bin")
	lb := binLatencies(h)
	caption := fmt.Sprintf("%s of %s binned %d to a decade; the lines mark p50 and p99.", units.Plural(int(h.TotalCount()), "operation"), kind, binsPer)
	if lb.zeros > 0 {
		caption += fmt.Sprintf(" %s of 0 ns (below the timer's resolution) counted in the lowest bin.", units.Plural(int(lb.zeros), "operation"))
	}
	if len(lb.bins) == 0 {
		return emptyFigure(p, name, title, "no operations recorded", st)
	}
	p99 := float64(results.ValueAtPercentile(h, 99))
	log := useLog(scale, lb.tailHidden(p99))
	if log {
		caption += logCountNote
	}
	hist := &plotter.Histogram{Bins: lb.bins, FillColor: color.RGBA{R: 70, G: 130, B: 180, A: 255}, LineStyle: plotter.DefaultLineStyle, LogY: log}
	hist.LineStyle.Width = vg.Points(0.3)
	p.Add(hist)
	countAxis(p, log, lb.peak)
	for i, q := range []float64{50, 99} {
		v := positive(float64(results.ValueAtPercentile(h, q)))
		l, err := plotter.NewLine(plotter.XYs{{X: v, Y: p.Y.Min}, {X: v, Y: lb.peak}})
		if err != nil {
			return Figure{}, err
		}
		l.Color = plotutil.Color(i + 1)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("p%g %s", q, units.FormatNS(float64(results.ValueAtPercentile(h, q)))), l)
	}
	p.Legend.Top = true
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = nsTicks
	p.X.Min, p.X.Max = logRange(lb.bins[0].Min, lb.bins[len(lb.bins)-1].Max)
	return render(p, name, title, caption, st)
}

// overlayHistogram draws the histograms of several op kinds (or runs) as
// outlines on one log latency axis, so their shapes compare at a glance.
func overlayHistogram(name, title string, labels []string, hs []*hdrhistogram.Histogram, scale CountScale, st Stamp) (Figure, error) {
	p := newPlot(title, "latency", "operations per bin")
	var all []latencyBins
	hidden, peak := false, 0.0
	lo, hi := math.Inf(1), 0.0
	for _, h := range hs {
		lb := binLatencies(h)
		all = append(all, lb)
		if len(lb.bins) == 0 {
			continue
		}
		hidden = hidden || lb.tailHidden(float64(results.ValueAtPercentile(h, 99)))
		peak = math.Max(peak, lb.peak)
		lo, hi = math.Min(lo, lb.bins[0].Min), math.Max(hi, lb.bins[len(lb.bins)-1].Max)
	}
	if peak == 0 {
		return emptyFigure(p, name, title, "no operations recorded", st)
	}
	log := useLog(scale, hidden)
	countAxis(p, log, peak)
	floor := p.Y.Min
	for i, lb := range all {
		if len(lb.bins) == 0 {
			continue
		}
		// A step outline: along each bin's top, down to the floor across
		// empty bins, so lines of different kinds never hide each other's
		// bars.
		var xys plotter.XYs
		for j, b := range lb.bins {
			if j > 0 && b.Min > lb.bins[j-1].Max*1.0001 {
				xys = append(xys, plotter.XY{X: lb.bins[j-1].Max, Y: floor}, plotter.XY{X: b.Min, Y: floor})
			}
			xys = append(xys, plotter.XY{X: b.Min, Y: b.Weight}, plotter.XY{X: b.Max, Y: b.Weight})
		}
		xys = append(plotter.XYs{{X: lb.bins[0].Min, Y: floor}}, append(xys, plotter.XY{X: lb.bins[len(lb.bins)-1].Max, Y: floor})...)
		l, err := plotter.NewLine(xys)
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, i)
		p.Add(l)
		p.Legend.Add(labels[i], l)
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = nsTicks
	p.X.Min, p.X.Max = logRange(lo, hi)
	caption := fmt.Sprintf("%s on one latency axis, binned %d to a decade; each outline is one kind's histogram.", strings.Join(labels, ", "), binsPer)
	if log {
		caption += logCountNote
	}
	return renderLegendOutside(p, name, title, caption, st)
}

// styleLine gives the i-th line of a plot its own colour and dash
// pattern, so lines that coincide or cross stay distinguishable (and a
// reader without colour vision can tell them apart).
func styleLine(l *plotter.Line, i int) {
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i % 4)
	l.Width = vg.Points(1.5)
}

// spectrumGrid is the x = 1/(1−p) of a spectrum, 50 points per decade,
// up to the last percentile n operations resolve (at most 1e6), and the
// percentiles p there. A smaller n's grid is a prefix of a larger one's.
func spectrumGrid(n float64) (xs, qs []float64) {
	for e := 0.0; ; e += 0.02 {
		x := math.Pow(10, e)
		if x > n || x > 1e6 {
			break
		}
		xs, qs = append(xs, x), append(qs, 100*(1-1/x))
	}
	return xs, qs
}

// spectrumPoints samples h's percentile spectrum on spectrumGrid.
func spectrumPoints(h *hdrhistogram.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	if n == 0 {
		return nil
	}
	xs, qs := spectrumGrid(n)
	var xys plotter.XYs
	for i, v := range results.ValuesAtPercentiles(h, qs...) {
		xys = append(xys, plotter.XY{X: xs[i], Y: positive(float64(v))})
	}
	return xys
}

// stretchPercentiles are the percentiles a kind's repetitions are read
// at (results.ReadStretches): the whole spectrumGrid, then spectrumMarks.
func stretchPercentiles() []float64 {
	_, qs := spectrumGrid(math.Inf(1))
	return append(qs, spectrumMarks...)
}

// kindStretches reads one repetition's figures per repetition of kind from
// its .hlog: nil where there is no log, or it does not split into the
// run's repetitions (a damaged log, or one from before logs were
// written per repetition), so that no band misattributes a repetition.
func kindStretches(run *Run, kind string) []results.Stretch {
	if run.Dir == "" || len(run.Result.Repetitions) < 2 {
		return nil
	}
	st, err := results.ReadStretches(filepath.Join(run.Dir, results.SafeFileName(kind)+".hlog"), stretchPercentiles())
	if err != nil || len(st) != len(run.Result.Repetitions) {
		return nil
	}
	for i, s := range st {
		if s.Count != run.Result.Repetitions[i].Ops[kind].Count {
			return nil
		}
	}
	return st
}

// nOps is a figure's n: "n = 12,480 operations".
func nOps(n int64) string {
	if n == 1 {
		return "n = 1 operation"
	}
	return "n = " + groupDigits(n) + " operations"
}

// groupDigits writes n with thousands separated: 12,480.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// bandShade fills the band across repetitions: the line's colour, light.
var bandShade = color.NRGBA{R: 0xcc, G: 0x33, B: 0x33, A: 0x40}

// kindSpectrum draws one op kind's percentile spectrum: with two or more
// repetitions read from its log (reps, kindStretches), the median
// across them as the line, in a band from the lowest to the highest
// repetition at every percentile; else the spectrum of all operations
// together. Its legend gives n, the operations and repetitions it is of.
func kindSpectrum(name, kind string, h *hdrhistogram.Histogram, reps []results.Stretch, nReps int, st Stamp) (Figure, error) {
	title := kind + ": percentile spectrum"
	n := h.TotalCount()
	var band []results.Stretch
	minCount := int64(math.MaxInt64)
	for _, r := range reps {
		if r.Count > 0 {
			band = append(band, r)
			minCount = min(minCount, r.Count)
		}
	}
	if n == 0 || len(band) < 2 || minCount < 2 {
		label := ""
		if n > 0 {
			label = nOps(n)
			if nReps > 1 {
				label += " of " + strconv.Itoa(nReps) + " repetitions, pooled"
			}
		}
		f, err := spectrum(name, title, []string{label}, []*hdrhistogram.Histogram{h}, st)
		if err == nil && n > 0 && nReps > 1 {
			f.Caption += " The repetitions are pooled: the interval log does not split into them, so no band across them is drawn."
		}
		return f, err
	}
	p := newPlot(title, "percentile (%)", "latency")
	xs, _ := spectrumGrid(float64(minCount))
	var med, upper, lower plotter.XYs
	lo, hi := math.Inf(1), 0.0
	vals := make([]float64, len(band))
	for i, x := range xs {
		for j, r := range band {
			vals[j] = positive(float64(r.Values[i]))
		}
		slices.Sort(vals)
		m := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			m = (vals[len(vals)/2-1] + m) / 2
		}
		med = append(med, plotter.XY{X: x, Y: m})
		lower = append(lower, plotter.XY{X: x, Y: vals[0]})
		upper = append(upper, plotter.XY{X: x, Y: vals[len(vals)-1]})
		lo, hi = math.Min(lo, vals[0]), math.Max(hi, vals[len(vals)-1])
	}
	outline := append(slices.Clone(upper), lower...)
	slices.Reverse(outline[len(upper):])
	poly, err := plotter.NewPolygon(outline)
	if err != nil {
		return Figure{}, err
	}
	poly.Color = bandShade
	poly.LineStyle.Width = 0
	l, err := plotter.NewLine(med)
	if err != nil {
		return Figure{}, err
	}
	styleLine(l, 0)
	l.Dashes = nil
	p.Add(poly, l)
	p.Legend.Add(fmt.Sprintf("median of %d repetitions", len(band)), l)
	p.Legend.Add("lowest to highest repetition", poly)
	p.Legend.Add(nOps(n))
	p.Legend.Top, p.Legend.Left = true, true
	// Inside the frame's left edge, not over the axis (newPlot's offset is for a legend on the right).
	p.Legend.XOffs = vg.Points(8)
	p.Legend.TextStyle.Font.Size = legendFontSize
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	xmax := xs[len(xs)-1]
	p.X.Min, p.X.Max = 1, math.Max(10, xmax)
	logY(p, lo, hi)
	// The marks are the median repetition's too, as the line.
	marks := make([]int64, len(spectrumMarks))
	mv := make([]int64, len(band))
	for i := range spectrumMarks {
		for j, r := range band {
			mv[j] = r.Values[len(r.Values)-len(spectrumMarks)+i]
		}
		slices.Sort(mv)
		marks[i] = mv[len(mv)/2]
		if len(mv)%2 == 0 {
			marks[i] = (mv[len(mv)/2-1] + mv[len(mv)/2]) / 2
		}
	}
	if err := markValues(p, marks, xmax); err != nil {
		return Figure{}, err
	}
	caption := fmt.Sprintf("Latency at each percentile of %s: the line is the median of the %d repetitions at each percentile, the band spans the lowest to the highest of them (n = %s operations in all). The x axis is 1/(1−p), so every added nine gets the same width; the line ends at the highest percentile the smallest repetition (%s operations) resolves. The marked figures are the median repetition's.", kind, len(band), groupDigits(n), groupDigits(minCount))
	return render(p, name, title, caption, st)
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
func spectrum(name, title string, labels []string, hs []*hdrhistogram.Histogram, st Stamp) (Figure, error) {
	p := newPlot(title, "percentile (%)", "latency")
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
		styleLine(l, i)
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
		return emptyFigure(p, name, title, "no operations recorded", st)
	}
	p.Legend.Top, p.Legend.Left = true, true
	// Inside the frame's left edge, not over the axis (newPlot's offset is for a legend on the right).
	p.Legend.XOffs = vg.Points(8)
	p.Legend.TextStyle.Font.Size = legendFontSize
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.X.Min, p.X.Max = 1, math.Max(10, xmax)
	logY(p, lo, hi)
	if len(hs) == 1 {
		if err := markPercentiles(p, hs[0], xmax); err != nil {
			return Figure{}, err
		}
	}
	rend := render
	if len(hs) > 1 {
		rend = renderLegendOutside
	}
	return rend(p, name, title, "Latency at each percentile; the x axis is 1/(1−p), so every added nine gets the same width. Each line ends at the highest percentile its operation count resolves.", st)
}

// spectrumMarks are the percentiles a lone spectrum names on itself: the
// figures a firmware report quotes, readable off the picture alone.
var spectrumMarks = []float64{50, 99, 99.9}

// markPercentiles marks and labels h's spectrumMarks that its operation
// count resolves (those at most xmax on the 1/(1−p) axis).
func markPercentiles(p *plot.Plot, h *hdrhistogram.Histogram, xmax float64) error {
	return markValues(p, results.ValuesAtPercentiles(h, spectrumMarks...), xmax)
}

// markValues marks and labels the latencies vals at spectrumMarks, those
// at most xmax on the 1/(1−p) axis.
func markValues(p *plot.Plot, vals []int64, xmax float64) error {
	var xys plotter.XYs
	var labels []string
	for i, q := range spectrumMarks {
		x := 1 / (1 - q/100)
		if x > xmax*(1+1e-9) {
			break
		}
		xys = append(xys, plotter.XY{X: x, Y: positive(float64(vals[i]))})
		labels = append(labels, fmt.Sprintf("p%s %s", strconv.FormatFloat(q, 'f', -1, 64), fmtDur(vals[i])))
	}
	if len(xys) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Radius = vg.Points(2.5)
	sc.GlyphStyle.Color = color.Black
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(8)
		// Left of and above the point: the line rises to the right.
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XRight, draw.YBottom
	}
	l.Offset = vg.Point{X: -vg.Points(3), Y: vg.Points(3)}
	p.Add(sc, l)
	return nil
}

// timeline draws p50, p99 and max per interval of a .hlog, each of the
// run's reps repetitions shaded and named, so the points read per
// repetition and a drift within one is told from a step between two.
func timeline(name, kind string, ivs []results.Interval, reps int, st Stamp) (Figure, error) {
	title := kind + ": latency over time"
	p := newPlot(title, "time since the first interval (s)", "latency")
	type series struct {
		label string
		get   func(results.Interval) int64
	}
	ss := []series{{"p50", func(iv results.Interval) int64 { return iv.P50 }}, {"p99", func(iv results.Interval) int64 { return iv.P99 }}, {"max", func(iv results.Interval) int64 { return iv.Max }}}
	lo, hi := math.Inf(1), 0.0
	// One line per tag (e.g. per repetition) and series; the legend
	// names each series once.
	tags := []string{}
	byTag := map[string][]results.Interval{}
	for _, iv := range ivs {
		if iv.Count == 0 {
			continue // an empty interval has no latency: a gap, not a zero
		}
		if _, ok := byTag[iv.Tag]; !ok {
			tags = append(tags, iv.Tag)
		}
		byTag[iv.Tag] = append(byTag[iv.Tag], iv)
	}
	// The lines are added after the repetitions' shading, which they
	// must be drawn over: the shading needs the axis range they set.
	var lines []plot.Plotter
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
				lines = append(lines, l, sc)
				if first {
					p.Legend.Add(s.label, l)
					first = false
				}
			}
		}
	}
	if hi == 0 {
		return emptyFigure(p, name, title, "no interval recorded an operation", st)
	}
	logY(p, lo, hi)
	p.X.Tick.Marker = linearTicks
	stretches := ivStretches(ivs)
	named := len(stretches) == reps
	if err := shadeStretches(p, stretches, named); err != nil {
		return Figure{}, err
	}
	p.Add(lines...)
	caption := fmt.Sprintf("p50, p99 and max of %s in each interval of %s.hlog; a drift or a spike shows what a single summary hides.", kind, kind)
	if len(ivs) > 0 && ivs[0].Span > 0 {
		// A long log, summed into spans to keep the plot (and report's
		// memory) the same size whatever the run's length.
		caption = fmt.Sprintf("p50, p99 and max of %s in each %s span of %s.hlog (the log's intervals summed, to draw at most %d points); a drift or a spike shows what a single summary hides.", kind, units.FormatNS(ivs[0].Span*1e9), kind, results.TimelinePoints)
	}
	switch {
	case named && reps > 1:
		caption += fmt.Sprintf(" The shaded blocks are the %d repetitions (rep 1 to rep %d), the white between them the pauses (fresh workers, warm-up) that were not measured.", reps, reps)
	case named:
		caption += " The shaded block is the one repetition."
	case len(stretches) > 1:
		caption += fmt.Sprintf(" The shaded blocks are the log's %d stretches of measured time, not the run's %s: spans of the summed log join some of them.", len(stretches), units.Plural(reps, "repetition"))
	}
	return renderLegendOutside(p, name, title, caption, st)
}

// ivStretches are the stretches of time (seconds) a timeline's intervals
// cover without a pause of results.RepetitionGap: one per repetition, as
// the engine writes the log. Empty intervals count: a repetition that
// measured nothing for a while is still one.
func ivStretches(ivs []results.Interval) [][2]float64 {
	sorted := slices.Clone(ivs)
	slices.SortStableFunc(sorted, func(a, b results.Interval) int { return cmp.Compare(a.Start, b.Start) })
	var out [][2]float64
	for _, iv := range sorted {
		end := iv.Start + iv.Length
		if n := len(out); n > 0 && iv.Start <= out[n-1][1]+results.RepetitionGap {
			out[n-1][1] = math.Max(out[n-1][1], end)
			continue
		}
		out = append(out, [2]float64{iv.Start, end})
	}
	return out
}

// repShade is the fill of a repetition's block: light enough that the
// grid and every point stay readable over it.
var repShade = color.NRGBA{R: 0x46, G: 0x82, B: 0xb4, A: 0x1c}

// maxRepLabels is the most repetitions named on a timeline; past it every
// k-th is, so the names never run into one another.
const maxRepLabels = 12

// shadeStretches shades each stretch over the full height of p's frame
// (its y range must be set) and, when named, writes "rep i" at its top.
func shadeStretches(p *plot.Plot, stretches [][2]float64, named bool) error {
	var xys plotter.XYs
	var labels []string
	every := (len(stretches) + maxRepLabels - 1) / maxRepLabels
	for i, s := range stretches {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: s[0], Y: p.Y.Min}, {X: s[1], Y: p.Y.Min}, {X: s[1], Y: p.Y.Max}, {X: s[0], Y: p.Y.Max}})
		if err != nil {
			return err
		}
		poly.Color = repShade
		poly.LineStyle.Width = 0
		p.Add(poly)
		if named && i%every == 0 {
			xys = append(xys, plotter.XY{X: (s[0] + s[1]) / 2, Y: p.Y.Max})
			labels = append(labels, fmt.Sprintf("rep %d", i+1))
		}
	}
	if len(labels) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(7)
		l.TextStyle[i].Color = color.Gray{Y: 0x55}
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XCenter, draw.YTop
	}
	l.Offset = vg.Point{Y: -vg.Points(2)}
	p.Add(l)
	return nil
}

// segments splits intervals where time jumps (between repetitions, or
// across empty intervals), so a line never bridges time nothing was measured.
func segments(ivs []results.Interval) [][]results.Interval {
	var out [][]results.Interval
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
func emptyFigure(p *plot.Plot, name, title, why string, st Stamp) (Figure, error) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{why}})
	if err != nil {
		return Figure{}, err
	}
	p.Add(l)
	return render(p, name, title, why+".", st)
}

// workerEven is the max/min ratio of the workers' rates under which they
// are called equal when the result has no per-repetition counts to judge
// by: 5%, about what one worker's rate varies from one repetition to the
// next on a shared machine.
const workerEven = 1.05

// workerThroughput draws each thread's (or, without per-thread counts,
// each worker process's) operations per second, every op kind together,
// sorted, with the range of its repetitions, the mean as a line and the
// fastest over the slowest in the title: unequal bars mean some threads
// got the contended resource more often, and the caption says in figures
// whether they are.
func workerThroughput(name string, run *Run, st Stamp) (Figure, error) {
	r := run.Result
	secs := 0.0
	durs := map[int]float64{}
	for _, rep := range r.Repetitions {
		secs += rep.Duration.D().Seconds()
		durs[rep.Index] = rep.Duration.D().Seconds()
	}
	unit := "operations per second"
	if secs <= 0 {
		secs, unit = 1, "operations"
	}
	labels, counts := workerCounts(r)
	perRep := workerRepRates(r, durs)
	what := "worker thread"
	if len(labels) > 0 && !strings.Contains(labels[0], " t") {
		what = "worker process"
	}
	title := "operations per " + what
	p := newPlot(title, what+", fastest first", unit)
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
		return emptyFigure(p, name, title, "the result has no per-worker counts", st)
	}
	type worker struct {
		label        string
		rate, lo, hi float64
		reps         int
	}
	ws := make([]worker, len(labels))
	lockstep := true
	for i, c := range counts {
		var total int64
		for _, k := range kinds {
			total += c[k]
			lockstep = lockstep && c[k] == c[kinds[0]]
		}
		w := worker{label: labels[i], rate: float64(total) / secs}
		w.lo, w.hi = w.rate, w.rate
		if rs := perRep[labels[i]]; len(rs) > 1 && unit != "operations" {
			w.lo, w.hi, w.reps = slices.Min(rs), slices.Max(rs), len(rs)
		}
		ws[i] = w
	}
	slices.SortStableFunc(ws, func(a, b worker) int { return cmp.Compare(b.rate, a.rate) })
	var vals plotter.Values
	var pts sweepPoints
	var sorted []string
	peak, mean, overlapLo, overlapHi := 0.0, 0.0, 0.0, math.Inf(1)
	withReps := true
	for i, w := range ws {
		vals = append(vals, w.rate)
		pts = append(pts, sweepPoint{x: float64(i), y: w.rate, lo: w.lo, hi: w.hi})
		sorted = append(sorted, w.label)
		peak = math.Max(peak, w.hi)
		mean += w.rate / float64(len(ws))
		overlapLo, overlapHi = math.Max(overlapLo, w.lo), math.Min(overlapHi, w.hi)
		withReps = withReps && w.reps > 1
	}
	ratio := math.Inf(1)
	if last := ws[len(ws)-1].rate; last > 0 {
		ratio = ws[0].rate / last
	}
	width := vg.Length(float64(PlotW-vg.Inch) / float64(2*len(ws)))
	if width > vg.Points(28) {
		width = vg.Points(28)
	}
	b, err := plotter.NewBarChart(vals, width)
	if err != nil {
		return Figure{}, err
	}
	b.Color = plotutil.Color(0)
	b.LineStyle.Width = 0
	p.Add(b)
	p.Legend.Add(strings.Join(kinds, " + "), b)
	if withReps {
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return Figure{}, err
		}
		eb.LineStyle.Width = vg.Points(1)
		p.Add(eb)
		// Error bars draw no legend sample of their own: a line of their style.
		p.Legend.Add(fmt.Sprintf("lowest to highest of %d repetitions", ws[0].reps), &plotter.Line{LineStyle: eb.LineStyle})
	}
	ml, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: mean}, {X: float64(len(ws)) - 0.5, Y: mean}})
	if err != nil {
		return Figure{}, err
	}
	ml.Color = plotutil.Color(1)
	ml.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	ml.Width = vg.Points(1.5)
	p.Add(ml)
	meanText := siLabel(mean)
	if unit != "operations" {
		meanText += "/s"
	}
	p.Legend.Add("mean "+meanText, ml)
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = legendFontSize
	p.NominalX(sorted...)
	p.X.Min, p.X.Max = -0.5, float64(len(ws))-0.5
	p.Y.Tick.Marker = rateTicks
	// Head room for the legend above the bars.
	p.Y.Min, p.Y.Max = 0, peak*1.35
	ratioText := "∞"
	if !math.IsInf(ratio, 1) {
		ratioText = strconv.FormatFloat(ratio, 'f', 2, 64)
	}
	title += ": fastest/slowest " + ratioText
	p.Title.Text = title
	caption := fmt.Sprintf("Operations per second of each %s (%s together) over %.3gs of measured repetitions, fastest first; the dashed line is the mean, %s.", what, strings.Join(kinds, ", "), secs, meanText)
	if unit == "operations" {
		caption = fmt.Sprintf("Operations of each %s (%s together; the result records no repetition durations, so no rate), most first; the dashed line is the mean, %s.", what, strings.Join(kinds, ", "), meanText)
	}
	if withReps {
		caption += fmt.Sprintf(" Each bar spans the %s's lowest to highest of the %d repetitions.", what, ws[0].reps)
	}
	if lockstep && len(kinds) > 1 {
		caption += fmt.Sprintf(" Every %s ran each kind as often as the others (one of each per cycle), so the kinds are summed, not drawn apart.", what)
	}
	spread := 100 * (ratio - 1)
	switch {
	case len(ws) == 1:
		caption += " One worker: nothing to compare it with."
	case withReps && overlapLo <= overlapHi:
		caption += fmt.Sprintf(" The %ss are equal: the fastest did %.1f%% more than the slowest (fastest/slowest %s), less than their rates moved between repetitions (every worker's range shares %s).", what, spread, ratioText, siLabel(overlapLo))
	case !withReps && ratio <= workerEven:
		caption += fmt.Sprintf(" The %ss are equal to within %.1f%% (fastest/slowest %s, under %g).", what, spread, ratioText, workerEven)
	default:
		caption += fmt.Sprintf(" The %ss are not equal: the fastest did %.1f%% more than the slowest (fastest/slowest %s), beyond what their repetitions vary: some got the contended resource more often.", what, spread, ratioText)
	}
	return render(p, name, title, caption, st)
}

// workerRepRates are each worker thread's (process's) operations per
// second, every kind together, in each repetition: nil where the result
// has one entry per process for the whole run, as results did before
// workers were recorded per repetition.
func workerRepRates(r *results.Result, durs map[int]float64) map[string][]float64 {
	type key struct {
		label string
		rep   int
	}
	ops := map[key]int64{}
	reps := map[int]bool{}
	add := func(label string, rep int, c map[string]int64) {
		for _, n := range c {
			ops[key{label, rep}] += n
		}
	}
	for _, w := range r.Workers {
		reps[w.Repetition] = true
		if len(w.PerThread) == 0 {
			add(fmt.Sprintf("p%d", w.Index), w.Repetition, w.Counts)
			continue
		}
		for _, t := range w.PerThread {
			add(fmt.Sprintf("p%d t%d", w.Index, t.Thread), w.Repetition, t.Counts)
		}
	}
	if len(reps) < 2 {
		return nil
	}
	out := map[string][]float64{}
	for _, k := range slices.SortedFunc(maps.Keys(ops), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.label, b.label), cmp.Compare(a.rep, b.rep))
	}) {
		if d := durs[k.rep]; d > 0 {
			out[k.label] = append(out[k.label], float64(ops[k])/d)
		}
	}
	return out
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

// runFigures draws every plot of one run: per op kind a latency
// histogram, a percentile spectrum (in an open loop, one of service and
// response time too) and a timeline, then per-worker
// throughput. prefix is prepended to the file names (several runs in one
// report); scale is the histograms' count axis.
func runFigures(run *Run, prefix string, scale CountScale) ([]Figure, error) {
	st := RunStamp(run.Result)
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
			if err := add(LatencyHistogram(prefix+results.SafeFileName(kind)+"-histogram", kind, h, scale, st)); err != nil {
				return nil, err
			}
			if err := add(kindSpectrum(prefix+results.SafeFileName(kind)+"-spectrum", kind, h, kindStretches(run, kind), len(run.Result.Repetitions), st)); err != nil {
				return nil, err
			}
		}
		if hr, ok := run.Hists[kind+results.ResponseSuffix]; ok && h != nil {
			// An open loop (--rate): response time from the intended start
			// beside service time, as wrk2 plots them; where the curves part
			// is time spent behind the schedule.
			if err := add(spectrum(prefix+results.SafeFileName(kind)+"-response-spectrum", kind+": service and response time", []string{"service", "response"}, []*hdrhistogram.Histogram{h, hr}, st)); err != nil {
				return nil, err
			}
		}
		if ivs, ok := run.Timelines[kind]; ok {
			if err := add(timeline(prefix+results.SafeFileName(kind)+"-timeline", kind, ivs, len(run.Result.Repetitions), st)); err != nil {
				return nil, err
			}
		}
	}
	if err := add(workerThroughput(prefix+"workers", run, st)); err != nil {
		return nil, err
	}
	if storm := run.Result.Storm; storm != nil {
		sf, err := stormFigures(storm, prefix, st)
		if err != nil {
			return nil, err
		}
		figs = append(figs, sf...)
	}
	return figs, nil
}

// kindOverlayFigures draws every op kind of run on one shared log latency
// axis: overlay-spectrum and overlay-histogram (after prefix), the plots
// the headline points at. A run of one kind has nothing to overlay.
func kindOverlayFigures(run *Run, prefix string, scale CountScale) ([]Figure, error) {
	st := RunStamp(run.Result)
	var labels []string
	var hs []*hdrhistogram.Histogram
	for _, k := range run.Kinds {
		if h, ok := run.Hists[k]; ok && h.TotalCount() > 0 {
			labels = append(labels, k)
			hs = append(hs, h)
		}
	}
	if len(hs) < 2 {
		return nil, nil
	}
	sp, err := spectrum(prefix+"overlay-spectrum", "all op kinds: percentile spectra", labels, hs, st)
	if err != nil {
		return nil, err
	}
	hi, err := overlayHistogram(prefix+"overlay-histogram", "all op kinds: latency histograms", labels, hs, scale, st)
	if err != nil {
		return nil, err
	}
	return []Figure{sp, hi}, nil
}

// overlayFigures draws, per op kind, the spectra of several runs in one plot.
func overlayFigures(runs []*Run) ([]Figure, error) {
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
		f, err := spectrum("overlay-"+results.SafeFileName(kind)+"-spectrum", kind+": percentile spectra of "+units.Plural(len(hs), "run"), labels, hs, runsStamp(runs))
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

// RenderSized draws p as SVG at w×h, for a picture that grows with what
// it shows (the fleet's heatmap with its nodes).
func RenderSized(p *plot.Plot, name, title, caption string, w, h vg.Length) (Figure, error) {
	f := Figure{Name: name, Title: title, Caption: caption}
	sc := vgsvg.New(w, h)
	dc := draw.New(sc)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, padLeft, -padRight, padBottom, -padTop))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return f, fmt.Errorf("plot %s: svg: %w", name, err)
	}
	f.SVG = sb.Bytes()
	return f, nil
}
