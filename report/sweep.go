package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/xrcbench/xrcbench/results"
)

// SweepReport is a sweep folder: its points, loaded as runs.
type SweepReport struct {
	Dir      string
	Workload string
	Provider string
	Kinds    []string
	Points   []SweepRow
	Runs     []*Run // the points that could be read, in Points order
	// Notes are points that could not be read.
	Notes []string
}

// SweepRow is one point of the sweep table.
type SweepRow struct {
	Dir                 string
	Procs, Threads, QPs int
	Status              string
	Cells               []SweepCell // per SweepReport.Kinds
	run                 *Run
}

// SweepCell is one op kind at one point.
type SweepCell struct{ Rate, P99 string }

// IsSweep reports whether dir is a sweep folder.
func IsSweep(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.SweepFileName))
	return err == nil
}

// LoadSweep reads a sweep folder: sweep.json and every point's run folder.
// A point that cannot be read becomes a note (a sweep stopped midway still
// has something to say); a sweep with no readable point is an input error.
func LoadSweep(dir string) (*SweepReport, error) {
	s, err := results.LoadSweep(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, inputErrorf("%s: no %s: not a sweep folder", dir, results.SweepFileName)
	}
	if err != nil {
		return nil, inputError{err}
	}
	sr := &SweepReport{Dir: dir}
	for _, p := range s.Points {
		row := SweepRow{Dir: p.Dir, Procs: p.Procs, Threads: p.Threads, QPs: p.QPs, Status: p.Status}
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
		row.Status = run.Result.Status
		row.run = run
		sr.Runs = append(sr.Runs, run)
		sr.Points = append(sr.Points, row)
	}
	if len(sr.Runs) == 0 {
		return nil, inputErrorf("%s: no point of the sweep could be read (first: %s)", dir, sr.Notes[0])
	}
	sr.Kinds = unionKinds(sr.Runs)
	for i, row := range sr.Points {
		for _, k := range sr.Kinds {
			c := SweepCell{Rate: "–", P99: "–"}
			if row.run != nil {
				if s, ok := row.run.Result.Ops[k]; ok && s.Count > 0 {
					c = SweepCell{Rate: FormatRate(s.OpsPerSec), P99: FormatNS(float64(s.NS.P99))}
				}
			}
			sr.Points[i].Cells = append(sr.Points[i].Cells, c)
		}
	}
	return sr, nil
}

// SweepFigures draws throughput and p99 against processes × threads, one
// line per op kind (and per QP count when the sweep varies it).
func SweepFigures(sr *SweepReport) ([]Figure, error) {
	type pt struct{ procs, threads int }
	seen := map[pt]bool{}
	var pts []pt
	qpsSet := map[int]bool{}
	for _, r := range sr.Runs {
		c := r.Result.Config
		if p := (pt{c.Procs, c.Threads}); !seen[p] {
			seen[p] = true
			pts = append(pts, p)
		}
		qpsSet[c.QPs] = true
	}
	sort.Slice(pts, func(i, j int) bool {
		a, b := pts[i], pts[j]
		if a.procs*a.threads != b.procs*b.threads {
			return a.procs*a.threads < b.procs*b.threads
		}
		return a.procs < b.procs
	})
	xOf := map[pt]float64{}
	var names []string
	for i, p := range pts {
		xOf[p] = float64(i)
		names = append(names, fmt.Sprintf("%d×%d", p.procs, p.threads))
	}
	var qpss []int
	for q := range qpsSet {
		qpss = append(qpss, q)
	}
	sort.Ints(qpss)
	var figs []Figure
	for _, m := range []struct {
		name, title, unit string
		get               func(results.OpStats) float64
		log               bool
	}{
		{"sweep-ops_per_sec", "throughput against processes × threads", "operations per second", func(s results.OpStats) float64 { return s.OpsPerSec }, false},
		{"sweep-p99", "p99 latency against processes × threads", "p99 latency", func(s results.OpStats) float64 { return float64(s.NS.P99) }, true},
	} {
		p := newPlot(sr.Workload+": "+m.title, "processes × threads", m.unit)
		lo, hi := math.Inf(1), 0.0
		line := 0
		for _, k := range sr.Kinds {
			for _, q := range qpss {
				var xys plotter.XYs
				for _, r := range sr.Runs {
					c := r.Result.Config
					s, ok := r.Result.Ops[k]
					if c.QPs != q || !ok || s.Count == 0 {
						continue
					}
					v := m.get(s)
					if m.log {
						v = positive(v)
					}
					xys = append(xys, plotter.XY{X: xOf[pt{c.Procs, c.Threads}], Y: v})
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				if len(xys) == 0 {
					continue
				}
				sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
				l, sc, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, err
				}
				l.Color, sc.Color = plotutil.Color(line), plotutil.Color(line)
				l.Dashes = plotutil.Dashes(line / 7)
				sc.Radius = vg.Points(2.5)
				p.Add(l, sc)
				label := k
				if len(qpss) > 1 {
					label += fmt.Sprintf(" qps=%d", q)
				}
				p.Legend.Add(label, l, sc)
				line++
			}
		}
		if line == 0 {
			f, err := emptyFigure(p, m.name, m.title, "no point recorded an operation")
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
			continue
		}
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.5, float64(len(pts))-0.5
		p.Legend.Top = true
		if m.log {
			logY(p, lo, hi)
		} else {
			p.Y.Min, p.Y.Max = 0, hi*1.1
			p.Y.Tick.Marker = rateTicks
		}
		f, err := render(p, m.name, sr.Workload+": "+m.title,
			fmt.Sprintf("Each point is one run folder of the sweep (%s); one line per op kind%s.", plural(len(sr.Runs), "point"), map[bool]string{true: " and QP count", false: ""}[len(qpss) > 1]))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	overlays, err := OverlayFigures(sr.Runs)
	if err != nil {
		return nil, err
	}
	return append(figs, overlays...), nil
}
