package report

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/xrcbench/xrcbench/internal/stats"
)

// CriterionPlot is what a criterion's figure draws beside the runs.
type CriterionPlot struct {
	// BaseLabel and CandLabel name the two runs in the legend ("fw=1.0"):
	// "baseline" and "candidate" alone do not say which firmware is which.
	BaseLabel, CandLabel string
	// Limit is an absolute limit (a dashed line); RelPct a limit relative
	// to the baseline's median, in percent in the regression's direction
	// (the band from the median to it: where the candidate passes).
	Limit  *float64
	RelPct *float64
	// Failed draws the candidate in red: it failed the criterion.
	Failed bool
}

var (
	baseColor = color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff}
	candColor = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	failColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	bandColor = color.RGBA{R: 0xdd, G: 0xee, B: 0xdd, A: 0xff}
)

// CriterionFigure draws the evidence of one qualification criterion: the
// kind's metric in every repetition of the candidate run, of the baseline
// run beside it when there is one, and the limit: a dashed line when
// absolute, a band from the baseline's median when relative. The axis is
// linear around the figures: on a log axis an 18% regression is a
// sliver, and the question is whether the points clear the band.
func CriterionFigure(name, title string, kind string, m Metric, cand, base *Run, cp CriterionPlot) (Figure, error) {
	st := RunStamp(cand.Result)
	ylabel := m.Name
	if m.Latency {
		ylabel += " latency"
	}
	p := newPlot(title, "repetition", ylabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, r := range []*Run{base, cand} {
		if r != nil {
			n = max(n, len(r.Result.Repetitions))
		}
	}
	x0, x1 := 0.5, float64(max(n, 1))+0.5
	var baseMedian float64
	if base != nil {
		if rs := RepetitionStats(base.Result, kind, m); len(rs.Values) > 0 {
			baseMedian = stats.Median(rs.Values) // the median compare's change is from
		}
	}
	if cp.RelPct != nil && baseMedian > 0 {
		edge := baseMedian * (1 + *cp.RelPct/100)
		if m.BetterHigher {
			edge = baseMedian * (1 - *cp.RelPct/100)
		}
		band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: baseMedian}, {X: x1, Y: baseMedian}, {X: x1, Y: edge}, {X: x0, Y: edge}})
		if err != nil {
			return Figure{}, err
		}
		band.Color, band.LineStyle.Width = bandColor, 0
		p.Add(band)
		sign := "+"
		if m.BetterHigher {
			sign = "-"
		}
		// Short: the legend sits beside the plot and is cut beyond it.
		p.Legend.Add(fmt.Sprintf("limit: baseline median %s%g%%", sign, *cp.RelPct), band)
		lo, hi = math.Min(lo, math.Min(baseMedian, edge)), math.Max(hi, math.Max(baseMedian, edge))
	}
	drawn := 0
	for _, side := range []struct {
		role, label string
		run         *Run
		color       color.Color
	}{{"baseline", cp.BaseLabel, base, baseColor}, {"candidate", cp.CandLabel, cand, map[bool]color.Color{true: failColor, false: candColor}[cp.Failed]}} {
		if side.run == nil {
			continue
		}
		rs := RepetitionStats(side.run.Result, kind, m)
		if len(rs.Values) == 0 {
			continue
		}
		var pts plotter.XYs
		for j, v := range rs.Values {
			pts = append(pts, plotter.XY{X: float64(j + 1), Y: v})
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, drawn)
		l.Color, sc.Color, sc.Radius = side.color, side.color, vg.Points(3)
		p.Add(l, sc)
		label := side.role
		if side.label == "" {
			side.label = side.run.Label
		}
		if side.label != "" {
			label += " " + side.label
		}
		if side.role == "candidate" && cp.Failed {
			label += ": failed"
		}
		p.Legend.Add(label, l, sc)
		drawn++
	}
	if drawn == 0 {
		return emptyFigure(p, name, title, "no repetition measured "+kind, st)
	}
	if cp.Limit != nil {
		l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: *cp.Limit}, {X: x1, Y: *cp.Limit}})
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, drawn)
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("limit "+m.Format(*cp.Limit), l)
		lo, hi = math.Min(lo, *cp.Limit), math.Max(hi, *cp.Limit)
	}
	p.X.Min, p.X.Max = x0, x1
	// Linear, a tenth of the span either side (a twentieth of the value
	// when every figure is one), never below 0.
	pad := (hi - lo) / 10
	if !(pad > 0) {
		pad = math.Abs(hi) / 20
	}
	if !(pad > 0) {
		pad = 1
	}
	p.Y.Min, p.Y.Max = math.Max(0, lo-pad), hi+pad
	p.Y.Tick.Marker = linearTicks
	if m.Latency {
		p.Y.Tick.Marker = linearNSTicks
	}
	caption := fmt.Sprintf("%s %s in each repetition, on a linear axis", kind, m.Name)
	if base != nil {
		caption += ", the baseline's beside the candidate's"
	}
	if cp.RelPct != nil && baseMedian > 0 {
		caption += fmt.Sprintf(", the band the limit from the baseline's median %s", m.Format(baseMedian))
	}
	if cp.Limit != nil {
		caption += ", the dashed line the limit"
	}
	return renderLegendOutside(p, name, title, caption+".", st)
}

// linearNSTicks are linearTicks labelled as durations (1.5ms, 250µs).
var linearNSTicks = plot.TickerFunc(func(min, max float64) []plot.Tick {
	ts := linearTicks.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = time.Duration(math.Round(ts[i].Value)).String()
		}
	}
	return ts
})

// TimeLine is one line of a SeriesFigure.
type TimeLine struct {
	Label string
	X, Y  []float64
}

// SeriesFigure draws lines over time (a soak's samples): latency on a log
// axis when latency is set, else a linear axis from 0.
func SeriesFigure(name, title, xlabel, ylabel string, latency bool, series []TimeLine, st Stamp) (Figure, error) {
	p := newPlot(title, xlabel, ylabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for i, s := range series {
		var pts plotter.XYs
		for j := range s.X {
			if j < len(s.Y) {
				y := s.Y[j]
				if latency {
					y = positive(y)
				}
				pts = append(pts, plotter.XY{X: s.X[j], Y: y})
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, i)
		p.Add(l)
		p.Legend.Add(s.Label, l)
		n++
	}
	if n == 0 {
		return emptyFigure(p, name, title, "nothing was sampled", st)
	}
	if latency {
		logY(p, lo, hi)
	} else {
		p.Y.Min, p.Y.Max = 0, math.Max(hi*1.1, 1)
	}
	return renderLegendOutside(p, name, title, title+".", st)
}
