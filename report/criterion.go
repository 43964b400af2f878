package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CriterionFigure draws the evidence of one qualification criterion: the
// kind's metric in every repetition of the candidate run, of the baseline
// run beside it when there is one, and the limit when it is absolute.
func CriterionFigure(name, title string, kind string, m Metric, cand, base *Run, limit *float64) (Figure, error) {
	st := RunStamp(cand.Result)
	ylabel := m.Name
	if m.Latency {
		ylabel += " latency"
	}
	p := newPlot(title, "repetition", ylabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	i := 0
	for _, side := range []struct {
		label string
		run   *Run
	}{{"baseline", base}, {"candidate", cand}} {
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
		if m.Latency {
			for j := range pts {
				pts[j].Y = positive(pts[j].Y)
			}
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, i)
		sc.Color, sc.Radius = l.Color, vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add(fmt.Sprintf("%s (%s)", side.label, side.run.Label), l, sc)
		i++
	}
	if i == 0 {
		return emptyFigure(p, name, title, "no repetition measured "+kind, st)
	}
	n := 0
	for _, r := range []*Run{base, cand} {
		if r != nil {
			n = max(n, len(r.Result.Repetitions))
		}
	}
	if limit != nil {
		l, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: positive(*limit)}, {X: float64(n) + 0.5, Y: positive(*limit)}})
		if err != nil {
			return Figure{}, err
		}
		styleLine(l, i)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("limit "+m.Format(*limit), l)
		lo, hi = math.Min(lo, *limit), math.Max(hi, *limit)
	}
	p.X.Min, p.X.Max = 0.5, float64(max(n, 1))+0.5
	if m.Latency {
		logY(p, lo, hi)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.1
		p.Y.Tick.Marker = rateTicks
	}
	caption := fmt.Sprintf("%s %s in each repetition", kind, m.Name)
	if base != nil {
		caption += ", the baseline's beside the candidate's"
	}
	if limit != nil {
		caption += ", the dashed line the limit"
	}
	return renderLegendOutside(p, name, title, caption+".", st)
}

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
