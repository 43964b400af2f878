package report

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/xrcbench/xrcbench/internal/units"
	"github.com/xrcbench/xrcbench/results"
)

// sweepReport is a sweep folder: its points, loaded as runs.
type sweepReport struct {
	Dir      string
	Workload string
	Provider string
	Kinds    []string
	Points   []sweepRow
	Runs     []*Run // the points that could be read, in Points order
	// Costs is each run's sim cost model, as its point in sweep.json
	// names it where the sweep varies it ("" where it does not): the
	// table's and the figures' one source.
	Costs map[*Run]string
	// Notes are points that could not be read.
	Notes []string
}

// sweepRow is one point of the sweep table.
type sweepRow struct {
	Dir                 string
	Procs, Threads, QPs int
	// SimCost is the point's sim cost model where the sweep varies it.
	SimCost string
	Status  string
	Cells   []sweepCell // per sweepReport.Kinds
	run     *Run
}

// sweepCell is one op kind at one point.
type sweepCell struct{ Rate, P99 string }

// isSweep reports whether dir is a sweep folder.
func isSweep(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.SweepFileName))
	return err == nil
}

// loadSweep reads a sweep folder: sweep.json and every point's run folder.
// A point that cannot be read becomes a note (a sweep stopped midway still
// has something to say); a sweep with no readable point is an input error.
func loadSweep(dir string) (*sweepReport, error) {
	s, err := results.LoadSweep(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, inputErrorf("%s: no %s: not a sweep folder", dir, results.SweepFileName)
	}
	if err != nil {
		return nil, results.InputError(err)
	}
	sr := &sweepReport{Dir: dir, Costs: map[*Run]string{}}
	for _, p := range s.Points {
		row := sweepRow{Dir: p.Dir, Procs: p.Procs, Threads: p.Threads, QPs: p.QPs, SimCost: p.SimCost, Status: p.Status}
		run, err := LoadRun(filepath.Join(dir, p.Dir))
		if err != nil {
			sr.Notes = append(sr.Notes, fmt.Sprintf("point %s (procs=%d threads=%d qps=%d, status %s) left out: %v", p.Dir, p.Procs, p.Threads, p.QPs, p.Status, err))
			row.Status = "unreadable"
			sr.Points = append(sr.Points, row)
			continue
		}
		if sr.Workload == "" {
			sr.Workload, sr.Provider = run.Result.Config.Workload, run.Result.Config.Provider
		} else if run.Result.Config.Workload != sr.Workload {
			return nil, inputErrorf("%s: point %s ran workload %q, the others %q: not one sweep", dir, p.Dir, run.Result.Config.Workload, sr.Workload)
		}
		run.Label = fmt.Sprintf("%d×%d q%d", p.Procs, p.Threads, p.QPs)
		if p.SimCost != "" {
			run.Label += " " + p.SimCost
		}
		row.Status = run.Result.Status
		row.run = run
		sr.Costs[run] = p.SimCost
		sr.Runs = append(sr.Runs, run)
		sr.Points = append(sr.Points, row)
	}
	if len(sr.Runs) == 0 {
		return nil, inputErrorf("%s: no point of the sweep could be read (first: %s)", dir, sr.Notes[0])
	}
	sr.Kinds = unionKinds(sr.Runs)
	for i, row := range sr.Points {
		for _, k := range sr.Kinds {
			c := sweepCell{Rate: "–", P99: "–"}
			if row.run != nil {
				if s, ok := row.run.Result.Ops[k]; ok && s.Count > 0 {
					c = sweepCell{Rate: units.FormatRate(s.OpsPerSec), P99: units.FormatNS(float64(s.NS.P99))}
				}
			}
			sr.Points[i].Cells = append(sr.Points[i].Cells, c)
		}
	}
	return sr, nil
}

// sweepHeadline is what a sweep's report says first: per op kind where
// throughput peaked and how far p50 moved across the points, and for a
// lifecycle sweep what destruction added at each end.
func sweepHeadline(sr *sweepReport) []string {
	var out []string
	for _, k := range sr.Kinds {
		var best, fast, slow *Run
		for _, r := range sr.Runs {
			s, ok := r.Result.Ops[k]
			if !ok || s.Count == 0 {
				continue
			}
			if best == nil || s.OpsPerSec > best.Result.Ops[k].OpsPerSec {
				best = r
			}
			if fast == nil || s.NS.P50 < fast.Result.Ops[k].NS.P50 {
				fast = r
			}
			if slow == nil || s.NS.P50 > slow.Result.Ops[k].NS.P50 {
				slow = r
			}
		}
		if best == nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s: highest throughput %s at %s; p50 from %s (%s) to %s (%s).", k,
			units.FormatRate(best.Result.Ops[k].OpsPerSec), pointName(best),
			units.FormatNS(float64(fast.Result.Ops[k].NS.P50)), pointName(fast), units.FormatNS(float64(slow.Result.Ops[k].NS.P50)), pointName(slow)))
	}
	var costs []string
	for _, r := range sr.Runs {
		if d := destructionCost(r.Result); d != nil {
			costs = append(costs, fmt.Sprintf("%s at %s", units.FormatNS(d.AddsNS), pointName(r)))
		}
	}
	if len(costs) > 0 {
		out = append(out, "Destruction adds (unreg_last p50 − unreg p50): "+strings.Join(costs, ", ")+"; each point's report section gives its confidence interval.")
	}
	return out
}

// pointName names a sweep point: 2×2 (4 threads), 16 QPs.
func pointName(r *Run) string {
	c := r.Result.Config
	return fmt.Sprintf("%d×%d (%s), %s", c.Procs, c.Threads, units.Plural(c.Procs*c.Threads, "thread"), units.Plural(c.QPs, "QP"))
}

func sweepQPs(sr *sweepReport) []int {
	set := map[int]bool{}
	for _, r := range sr.Runs {
		set[r.Result.Config.QPs] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// sweepMetric is a metric a sweep plots.
type sweepMetric struct {
	name, title, unit string
	metric            Metric
	log               bool
}

var sweepMetrics = []sweepMetric{
	{name: "ops_per_sec", title: "throughput", unit: "operations per second", metric: mustMetric("ops_per_sec")},
	{name: "p99", title: "p99 latency", unit: "p99 latency", metric: mustMetric("p99"), log: true},
}

var p50Metric = sweepMetric{name: "p50", title: "p50 latency", unit: "p50 latency", metric: mustMetric("p50"), log: true}

// sweepCosts is the sim cost models of the sweep's points, each once.
func sweepCosts(sr *sweepReport) []string {
	set := map[string]bool{}
	for _, r := range sr.Runs {
		set[sr.Costs[r]] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func mustMetric(name string) Metric {
	m, ok := MetricByName(name)
	if !ok {
		panic("no metric " + name)
	}
	return m
}

// sweepPoint is one point of a sweep line: the median over the point's
// repetitions and their range.
type sweepPoint struct{ x, y, lo, hi float64 }

type sweepPoints []sweepPoint

func (p sweepPoints) Len() int                    { return len(p) }
func (p sweepPoints) XY(i int) (float64, float64) { return p[i].x, p[i].y }
func (p sweepPoints) YError(i int) (float64, float64) {
	return p[i].y - p[i].lo, p[i].hi - p[i].y
}

// pointValue is the median of m over r's repetitions of kind, with their
// range; without repetitions, the run's own figure and no range.
func pointValue(r *Run, kind string, m Metric) (y, lo, hi float64, ok bool) {
	s, found := r.Result.Ops[kind]
	if !found || s.Count == 0 {
		return 0, 0, 0, false
	}
	rs := RepetitionStats(r.Result, kind, m)
	if len(rs.Values) == 0 {
		v := m.Get(s)
		return v, v, v, true
	}
	return rs.Median, slices.Min(rs.Values), slices.Max(rs.Values), true
}

// sweepPlot draws m against x, one line per op kind and series (what else
// varies), each point the median over repetitions with error bars
// spanning them.
func sweepPlot(sr *sweepReport, name, title, xlabel string, m sweepMetric,
	xOf func(*Run) float64, seriesOf func(*Run) string, xticks plot.Ticker) (Figure, error) {
	p := newPlot(title, xlabel, m.unit)
	sl := collectSweepLines(sr, m, xOf, seriesOf)
	if len(sl.lines) == 0 {
		return emptyFigure(p, name, title, "no point recorded an operation", runsStamp(sr.Runs))
	}
	xl := sl.xs
	span := math.Max(xl[len(xl)-1]-xl[0], 1)
	for i, ln := range sl.lines {
		// Lines that coincide (reg and unreg of one pair, say) are
		// shifted apart a little, so each marker and bar stays visible.
		dodge := dodgeShare * span * (float64(i) - float64(len(sl.lines)-1)/2)
		for j := range ln.pts {
			ln.pts[j].x += dodge
		}
		if err := addSweepLine(p, ln, i, sl.reps); err != nil {
			return Figure{}, err
		}
	}
	pad := math.Max(0.5, 0.05*(xl[len(xl)-1]-xl[0])) + dodgeShare*span*float64(len(sl.lines))/2
	p.X.Min, p.X.Max = xl[0]-pad, xl[len(xl)-1]+pad
	p.X.Tick.Marker = xticks
	if m.log {
		logY(p, sl.lo, sl.hi)
	} else {
		p.Y.Min, p.Y.Max = 0, sl.hi*1.1
		p.Y.Tick.Marker = rateTicks
	}
	caption := fmt.Sprintf("Each point is one run folder of the sweep (%s): ", units.Plural(len(sr.Runs), "point"))
	if sl.reps {
		caption += "the median over its repetitions, the bars spanning the lowest to the highest repetition. "
	} else {
		caption += "one repetition each, so no error bars. "
	}
	caption += "Markers and dashes tell lines apart, and each line is shifted sideways a little, so lines that coincide stay visible."
	return renderLegendOutside(p, name, title, caption, runsStamp(sr.Runs))
}

// sweepLine is one line of a sweep plot: an op kind, or an op kind and a
// series (such as a thread count), over the sweep's x values.
type sweepLine struct {
	label string
	pts   sweepPoints // sorted by x
}

// sweepLines is what a sweep plot draws: its lines in the order first
// met, the distinct x values sorted, the range of the bars, and whether any
// point had several repetitions (then the bars are drawn).
type sweepLines struct {
	lines  []*sweepLine
	xs     []float64
	lo, hi float64
	reps   bool
}

// collectSweepLines gathers metric m of every op kind in every run of the
// sweep into lines; a run that recorded no operation of a kind adds no
// point to it.
func collectSweepLines(sr *sweepReport, m sweepMetric, xOf func(*Run) float64, seriesOf func(*Run) string) sweepLines {
	sl := sweepLines{lo: math.Inf(1)}
	byLabel := map[string]*sweepLine{}
	xs := map[float64]bool{}
	for _, k := range sr.Kinds {
		for _, r := range sr.Runs {
			y, l, h, ok := pointValue(r, k, m.metric)
			if !ok {
				continue
			}
			if m.log {
				y, l, h = positive(y), positive(l), positive(h)
			}
			label := k
			if s := seriesOf(r); s != "" {
				label += ", " + s
			}
			ln := byLabel[label]
			if ln == nil {
				ln = &sweepLine{label: label}
				byLabel[label] = ln
				sl.lines = append(sl.lines, ln)
			}
			x := xOf(r)
			xs[x] = true
			ln.pts = append(ln.pts, sweepPoint{x: x, y: y, lo: l, hi: h})
			sl.lo, sl.hi = math.Min(sl.lo, l), math.Max(sl.hi, h)
			sl.reps = sl.reps || len(r.Result.Repetitions) > 1
		}
	}
	for _, ln := range sl.lines {
		// Stable: points of one x (2 procs x 1 thread and 1 x 2 against
		// total threads) keep the runs' order, so a plot is the same each time.
		slices.SortStableFunc(ln.pts, func(a, b sweepPoint) int { return cmp.Compare(a.x, b.x) })
	}
	sl.xs = slices.Sorted(maps.Keys(xs))
	return sl
}

// addSweepLine draws line i: the line and its markers in the i-th style,
// with the repetitions' range as error bars when there are several.
func addSweepLine(p *plot.Plot, ln *sweepLine, i int, reps bool) error {
	l, sc, err := plotter.NewLinePoints(ln.pts)
	if err != nil {
		return err
	}
	styleLine(l, i)
	sc.Color = l.Color
	sc.Shape = plotutil.Shape(i)
	sc.Radius = vg.Points(3)
	p.Add(l, sc)
	thumbs := []plot.Thumbnailer{l, sc}
	if reps {
		eb, err := plotter.NewYErrorBars(ln.pts)
		if err != nil {
			return err
		}
		eb.Color = l.Color
		eb.CapWidth = vg.Points(6)
		p.Add(eb)
	}
	p.Legend.Add(ln.label, thumbs...)
	return nil
}

// dodgeShare is how far apart, as a share of the x range, neighbouring
// lines of a sweep plot are shifted.
const dodgeShare = 0.006

// valueTicks marks exactly the given x values, labelled as integers.
func valueTicks(xs []float64) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for _, x := range xs {
			if x >= min && x <= max {
				ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
			}
		}
		return ts
	})
}

// sweepFigures draws throughput and p99 against the total thread count
// (processes × threads), one line per op kind and threads per process
// (and QP count when the sweep varies it); against the QP count when the
// sweep varies it; and, per op kind, the points' spectra overlaid.
func sweepFigures(sr *sweepReport) ([]Figure, error) {
	qpss := sweepQPs(sr)
	totals := map[float64]bool{}
	for _, r := range sr.Runs {
		c := r.Result.Config
		totals[float64(c.Procs*c.Threads)] = true
	}
	total := func(r *Run) float64 { return float64(r.Result.Config.Procs * r.Result.Config.Threads) }
	// A sweep over sim cost models (the kernel's lookup before and since
	// 5.9, say) draws a line per model too.
	costs := sweepCosts(sr)
	withCost := func(s string, r *Run) string {
		if len(costs) > 1 {
			s += ", sim cost " + sr.Costs[r]
		}
		return s
	}
	perTotal := func(r *Run) string {
		c := r.Result.Config
		s := fmt.Sprintf("%s/process", units.Plural(c.Threads, "thread"))
		if len(qpss) > 1 {
			s += ", " + units.Plural(c.QPs, "QP")
		}
		return withCost(s, r)
	}
	var figs []Figure
	for _, m := range sweepMetrics {
		f, err := sweepPlot(sr, "sweep-"+m.name, sr.Workload+": "+m.title+" against total threads",
			"total threads (processes × threads per process)", m, total, perTotal, valueTicks(slices.Sorted(maps.Keys(totals))))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	if len(qpss) > 1 {
		// QP counts usually grow by factors: equal steps on the axis.
		index := func(r *Run) float64 { return float64(slices.Index(qpss, r.Result.Config.QPs)) }
		ticks := plot.TickerFunc(func(min, max float64) []plot.Tick {
			var ts []plot.Tick
			for i, q := range qpss {
				ts = append(ts, plot.Tick{Value: float64(i), Label: strconv.Itoa(q)})
			}
			return ts
		})
		byThreads := func(r *Run) string {
			c := r.Result.Config
			return withCost(fmt.Sprintf("%d×%d", c.Procs, c.Threads), r)
		}
		// The median too: what a QP count costs each registration (the
		// pre-5.9 lookup's walk) shows there first.
		for _, m := range append([]sweepMetric{p50Metric}, sweepMetrics...) {
			f, err := sweepPlot(sr, "sweep-qps-"+m.name, sr.Workload+": "+m.title+" against QP count",
				"QPs (processes × threads per line)", m, index, byThreads, ticks)
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
	}
	if f, ok, err := stormSweepFigure(sr); err != nil {
		return nil, err
	} else if ok {
		figs = append([]Figure{f}, figs...)
	}
	overlays, err := overlayFigures(sr.Runs)
	if err != nil {
		return nil, err
	}
	return append(figs, overlays...), nil
}
