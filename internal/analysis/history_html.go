package analysis

import (
	"bytes"
	"fmt"
	"github.com/xrcbench/xrcbench/report"
	"html/template"
	"math"
	"path/filepath"
	"strings"

	"github.com/xrcbench/xrcbench/internal/safetext"
	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/results"
)

// The plot of one series: each run's median with its repetitions' range,
// change points as vertical lines, drifts as a band under the runs they
// span; every point links to its run's report.
const (
	histW, histH               = 860, 300
	histLeft, histRight        = 80, 20
	histTop, histBottom        = 20, 40
	histPlotW, histPlotH       = histW - histLeft - histRight, histH - histTop - histBottom
	historyReportMissingSuffix = " (no report.html yet: xrcbench report RUN_DIR writes it)"
)

type histPoint struct {
	X, Y, YLo, YHi float64
	Href, Title    string
	Partial        bool
}

type histMark struct {
	X          float64
	Label      string
	Regression bool
	// Config: the configuration changed there, so the step is not the
	// code's (grey, whatever its direction).
	Config bool
}

type histBand struct {
	X1, X2     float64
	Label      string
	Regression bool
}

// histXTick numbers a run under the x axis.
type histXTick struct {
	X     float64
	Label string
}

type histTick struct {
	Y     float64
	Label string
}

type histPlot struct {
	Title     string
	W, H      int
	Left, Top float64
	PlotW     float64
	PlotH     float64
	Bottom    float64
	Points    []histPoint
	Path      string
	Marks     []histMark
	Configs   []histMark // runs whose configuration differs from the one before
	Bands     []histBand
	Ticks     []histTick
	XTicks    []histXTick
	XTitle    string // what the x axis names the runs by
	YTitle    string // the metric and its unit
	Lines     []string
	Alert     bool
}

var historyTmpl = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>xrcbench history: {{.Workload}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:920px;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
.alert{color:#b00;font-weight:bold}
.config{color:#555}
svg text{font-size:11px;font-family:system-ui,sans-serif}
ul{padding-left:1.2em}
</style></head><body>
<h1>xrcbench history: {{.Workload}}</h1>
<p>{{.Runs}} runs ordered by {{.OrderBy}}. Each point is a run's median over its repetitions, the bar their range; a point links to its run's report.
Change points (vertical lines; red: regression, green: improvement, grey: the configuration changed there): {{.Method}}; p ≤ {{.Alpha}} over {{.Permutations}} permutations, at least {{.MinEffectPct}}%. Drifts are shaded.</p>
{{if .Regressed}}<p class="alert">The latest run sits after a regression change point.</p>{{end}}
{{range .Notes}}<p>Note: {{.}}</p>{{end}}
{{range .ConfigWarnings}}<p class="config">Configuration changed: {{.}}</p>{{end}}
{{range $p := .Plots}}
<h2>{{.Title}}</h2>
{{if .Alert}}<p class="alert">latest run after a regression</p>{{end}}
<svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}">
<rect x="{{.Left}}" y="{{.Top}}" width="{{.PlotW}}" height="{{.PlotH}}" fill="none" stroke="#999"/>
{{range .Bands}}<rect x="{{.X1}}" y="{{$p.Top}}" width="{{.Width}}" height="{{$p.PlotH}}" fill="{{if .Regression}}#fdd{{else}}#dfd{{end}}" opacity="0.6"><title>{{.Label}}</title></rect>
{{end}}{{range .Ticks}}<line x1="{{$p.Left}}" x2="{{$p.Right}}" y1="{{.Y}}" y2="{{.Y}}" stroke="#eee"/><text x="{{$p.TickX}}" y="{{.Y}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}<path d="{{.Path}}" fill="none" stroke="#68a"/>
{{range .Configs}}<line class="config-change" x1="{{.X}}" x2="{{.X}}" y1="{{$p.Top}}" y2="{{$p.Bottom}}" stroke="#888" stroke-dasharray="1 3" stroke-width="2"><title>{{.Label}}</title></line>
{{end}}{{range .Marks}}<line x1="{{.X}}" x2="{{.X}}" y1="{{$p.Top}}" y2="{{$p.Bottom}}" stroke="{{if .Config}}#888{{else if .Regression}}#c00{{else}}#080{{end}}" stroke-dasharray="4 3" stroke-width="2"><title>{{.Label}}</title></line>
{{end}}{{range .Points}}<a href="{{.Href}}"><title>{{.Title}}</title><line x1="{{.X}}" x2="{{.X}}" y1="{{.YLo}}" y2="{{.YHi}}" stroke="#68a"/><circle cx="{{.X}}" cy="{{.Y}}" r="4" fill="{{if .Partial}}#fff{{else}}#246{{end}}" stroke="#246"/></a>
{{end}}{{range .XTicks}}<text x="{{.X}}" y="{{$p.TickY}}" text-anchor="middle">{{.Label}}</text>
{{end}}<text x="{{.MidX}}" y="{{.AxisY}}" text-anchor="middle">{{.XTitle}}</text>
<text transform="translate(14 {{.MidY}}) rotate(-90)" text-anchor="middle">{{.YTitle}}</text>
</svg>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
{{end}}
</body></html>
`))

// Width is the band's width.
func (b histBand) Width() float64 { return b.X2 - b.X1 }

// Right, TickX, MidX and AxisY place the plot's furniture.
func (p histPlot) Right() float64 { return p.Left + p.PlotW }
func (p histPlot) TickX() float64 { return p.Left - 6 }
func (p histPlot) MidX() float64  { return p.Left + p.PlotW/2 }
func (p histPlot) MidY() float64  { return p.Top + p.PlotH/2 }
func (p histPlot) AxisY() float64 { return p.Bottom + 30 }
func (p histPlot) TickY() float64 { return p.Bottom + 14 }

// HTML is history.html for a page written into out: every point links to
// its run folder's report.html, relative to out.
func (h *History) HTML(out string, hasReport func(run string) bool) ([]byte, error) {
	var plots []histPlot
	for _, s := range h.Series {
		plots = append(plots, h.plot(s, out, hasReport))
	}
	var b bytes.Buffer
	err := historyTmpl.Execute(&b, struct {
		*History
		Regressed      bool
		ConfigWarnings []string
		Plots          []histPlot
	}{h, h.Regressed(), h.ConfigWarnings(), plots})
	return []byte(safetext.Text(b.String())), err
}

func (h *History) plot(s Series, out string, hasReport func(string) bool) histPlot {
	p := histPlot{
		Title: s.Kind + " " + s.Metric, W: histW, H: histH, Left: histLeft, Top: histTop,
		PlotW: histPlotW, PlotH: histPlotH, Bottom: histTop + histPlotH, Alert: s.LatestAfterRegression,
	}
	lo, hi := yRange(s.Points)
	p.XTitle, p.YTitle = h.xTitle(), s.Kind+" "+s.Metric+" ("+s.metric.Unit()+")"
	n := len(s.Points)
	x := func(i float64) float64 {
		if n == 1 {
			return histLeft + histPlotW/2
		}
		return histLeft + 10 + i*(histPlotW-20)/float64(n-1)
	}
	y := func(v float64) float64 { return histTop + histPlotH*(1-(v-lo)/(hi-lo)) }
	every := max(1, int(niceStep(float64(n)/10)))
	for i := 0; i < n; i++ {
		if (i+1)%every == 0 || i == 0 {
			p.XTicks = append(p.XTicks, histXTick{X: x(float64(i)), Label: h.xTick(s.Points[i], i)})
		}
	}
	for _, v := range niceTicks(lo, hi, 5) {
		p.Ticks = append(p.Ticks, histTick{Y: y(v), Label: s.metric.Format(v)})
	}
	var path strings.Builder
	for i, pt := range s.Points {
		// A run without its report links to its result.json, which every
		// run folder has: a link to a report.html not yet written is dead.
		target := report.HTMLFile
		if hasReport != nil && !hasReport(pt.Run) {
			target = results.FileName
		}
		href := filepath.Join(pt.Run, target)
		if rel, err := filepath.Rel(absOr(out), absOr(pt.Run)); err == nil {
			href = filepath.Join(rel, target)
		}
		title := fmt.Sprintf("run %d: %s, %s median of %d (range %s–%s)", i+1, pt.Run, s.metric.Format(pt.Median), pt.N, s.metric.Format(pt.Min), s.metric.Format(pt.Max))
		if pt.Key != "" {
			title += ", " + strings.TrimPrefix(h.OrderBy, "label:") + " " + pt.Key
		}
		if pt.Status != "ok" {
			title += ", " + pt.Status + " run"
		}
		if hasReport != nil && !hasReport(pt.Run) {
			title += historyReportMissingSuffix
		}
		hp := histPoint{X: x(float64(i)), Y: y(pt.Median), YLo: y(pt.Min), YHi: y(pt.Max), Href: filepath.ToSlash(href), Title: title, Partial: pt.Status != "ok"}
		p.Points = append(p.Points, hp)
		if i == 0 {
			fmt.Fprintf(&path, "M%.1f %.1f", hp.X, hp.Y)
		} else {
			fmt.Fprintf(&path, " L%.1f %.1f", hp.X, hp.Y)
		}
	}
	p.Path = path.String()
	for _, c := range s.ChangePoints {
		label := fmt.Sprintf("change point before run %d: %s → %s (%+.1f%%, p=%.3g)", c.Index+1, s.metric.Format(c.Before), s.metric.Format(c.After), c.ChangePct, c.P)
		if len(c.ConfigChange) > 0 {
			label += "; configuration changed: " + strings.Join(c.ConfigChange, ", ")
		}
		p.Marks = append(p.Marks, histMark{X: x(float64(c.Index) - 0.5), Regression: c.Regression, Config: len(c.ConfigChange) > 0, Label: label})
	}
	for i, pt := range s.Points {
		if c := h.configChangeAt(pt.Run); c != nil && i > 0 {
			p.Configs = append(p.Configs, histMark{X: x(float64(i) - 0.5), Config: true,
				Label: fmt.Sprintf("configuration changed before run %d: %s", i+1, strings.Join(c.Changes, ", "))})
		}
	}
	for _, d := range s.Drifts {
		p.Bands = append(p.Bands, histBand{X1: x(float64(d.Start) - 0.4), X2: x(float64(d.End) + 0.4), Regression: d.Regression,
			Label: fmt.Sprintf("drift over runs %d–%d: %+.2f%% per run (%+.1f%%), Mann-Kendall p=%.3g", d.Start+1, d.End+1, d.PerRunPct, d.ChangePct, d.P)})
	}
	all := h.Lines()
	prefix := s.Kind + " " + s.Metric + ":"
	for i, l := range all {
		if strings.HasPrefix(l, prefix) {
			p.Lines = append(p.Lines, l)
			for _, more := range all[i+1:] {
				if !strings.HasPrefix(more, "  ") {
					break
				}
				p.Lines = append(p.Lines, strings.TrimSpace(more))
			}
			break
		}
	}
	return p
}

// historyMinSpan is the least share of the series' median the y axis
// spans: autoscaled to the points alone, a 2% wobble of noise fills the
// plot's height and reads as a cliff.
const historyMinSpan = 0.2

// yRange is the y axis's range for points: theirs with a margin, and at
// least historyMinSpan of their median around their middle, never below
// zero for figures that cannot be.
func yRange(points []HistoryPoint) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var meds []float64
	for _, pt := range points {
		lo, hi = math.Min(lo, pt.Min), math.Max(hi, pt.Max)
		meds = append(meds, pt.Median)
	}
	if len(meds) == 0 {
		return 0, 1
	}
	floor := lo >= 0
	if span := historyMinSpan * math.Abs(stats.Median(meds)); hi-lo < span {
		mid := (lo + hi) / 2
		lo, hi = mid-span/2, mid+span/2
	}
	if hi <= lo { // all zero
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.05
	lo, hi = lo-pad, hi+pad
	if floor && lo < 0 {
		lo = 0
	}
	return lo, hi
}

// xTitle is the x axis's title: what the runs are named by, and their order.
func (h *History) xTitle() string {
	what := "run start (UTC)"
	if h.XLabel != "date" && h.XLabel != "" {
		what = "--label " + h.XLabel
	}
	order := "start time"
	if k, ok := strings.CutPrefix(h.OrderBy, "label:"); ok {
		order = "--label " + k
	}
	return what + ", in order of " + order
}

// xTick is point i's name under the x axis: a commit shortened as git
// does, a date without its year.
func (h *History) xTick(pt HistoryPoint, i int) string {
	switch {
	case pt.X == "":
		return fmt.Sprint(i + 1)
	case h.XLabel == "date" && len(pt.X) == len("2006-01-02 15:04"):
		return pt.X[len("2006-"):]
	case len(pt.X) > 12 && strings.Trim(pt.X, "0123456789abcdef") == "":
		return pt.X[:8]
	}
	return pt.X
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// niceTicks are about n round values (1, 2 or 5 × a power of ten apart)
// within [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if !(span > 0) {
		return []float64{lo}
	}
	step := niceStep(span / float64(n))
	var ts []float64
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ts = append(ts, v)
	}
	return ts
}

// niceStep is the smallest of 1, 2 or 5 × a power of ten at least raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5} {
		if f*mag >= raw {
			return f * mag
		}
	}
	return 10 * mag
}
