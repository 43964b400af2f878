package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/xrcbench/xrcbench/internal/stats"
	"github.com/xrcbench/xrcbench/results"
)

// A storm's headline is its makespan: how long the node took, from the
// storm's start, until every rank held all its QPs.

// finished returns the values that are not -1 (not reached).
func finished(xs []int64) []int64 {
	var out []int64
	for _, x := range xs {
		if x >= 0 {
			out = append(out, x)
		}
	}
	return out
}

// StormLine says in one line what a storm was and took: its makespan
// (the median over repetitions, with their range) and its teardown.
func StormLine(st *results.Storm) string {
	var b strings.Builder
	fmt.Fprintf(&b, "storm: %d nodes x %d ranks x %d rail(s), %d QPs, %d registrations: makespan %s",
		st.Nodes, st.Ranks, st.Rails, st.QPs, st.Registrations, spread(st.MakespanNS))
	switch {
	case len(st.TeardownNS) > 0:
		fmt.Fprintf(&b, "; teardown (%s) %s", st.Teardown, spread(st.TeardownNS))
	case st.TeardownNote != "":
		fmt.Fprintf(&b, "; teardown (%s) %s", st.Teardown, st.TeardownNote)
	}
	return b.String()
}

// spread is the median of per-repetition values, and their range when
// there are several.
func spread(xs []int64) string {
	ok := finished(xs)
	if len(ok) == 0 {
		return "not reached"
	}
	slices.Sort(ok)
	s := fmtDur(medianNS(ok))
	if len(ok) > 1 {
		s = fmt.Sprintf("%s (median of %d repetitions, %s to %s)", s, len(ok), fmtDur(ok[0]), fmtDur(ok[len(ok)-1]))
	}
	if n := len(xs) - len(ok); n > 0 {
		s += fmt.Sprintf(", %d not finished", n)
	}
	return s
}

// medianNS is stats.Median of nanosecond figures (the mean of the two
// middle ones of an even count, as every median of the tree), to the
// nanosecond.
func medianNS(xs []int64) int64 {
	fs := make([]float64, len(xs))
	for i, x := range xs {
		fs[i] = float64(x)
	}
	return int64(math.Round(stats.Median(fs)))
}

func fmtDur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(ns)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

// stormSentence is the storm's headline item: the makespan, and what the
// storm was.
func stormSentence(st *results.Storm) string {
	return fmt.Sprintf("Time to fully wired (makespan): %s, for %d nodes x %d ranks x %d rail(s): %d receive QPs, %d registrations, arrival %s.",
		spread(st.MakespanNS), st.Nodes, st.Ranks, st.Rails, st.QPs, st.Registrations, st.Arrival)
}

// stormNotes says what else a reader of a storm's makespan needs.
func stormNotes(st *results.Storm) []string {
	var out []string
	switch {
	case len(st.TeardownNS) > 0:
		how := "the slowest rank's unregistrations, from a common start"
		switch st.TeardownMethod {
		case "sim_inspect":
			how = "from the ranks' exit until the device showed none of the job's QPs"
		case "netlink":
			how = "from the ranks' exit until the kernel's RDMA netlink listed none of the job's QPs"
		}
		out = append(out, fmt.Sprintf("Teardown (%s): %s, %s.", st.Teardown, spread(st.TeardownNS), how))
	case st.TeardownNote != "":
		out = append(out, fmt.Sprintf("Teardown (%s): %s.", st.Teardown, st.TeardownNote))
	}
	// Time a rank spent runnable but not running is the machine's, not
	// the storm's: say so when it is a visible share.
	worst, share := int64(0), 0.0
	for i, ranks := range st.RankRunQueueNS {
		if i >= len(st.RankDoneNS) {
			break
		}
		for r, q := range ranks {
			if d := st.RankDoneNS[i][r]; q > 0 && d > 0 && float64(q)/float64(d) > share {
				worst, share = q, float64(q)/float64(d)
			}
		}
	}
	if share >= 0.05 {
		out = append(out, fmt.Sprintf("A rank waited %s on a run queue (runnable, not running), %.0f%% of its completion time: the CPUs were busy with other work, and that part of the makespan is not the storm's.",
			fmtDur(worst), 100*share))
	}
	return append(out, stormCriticalNotes(st)...)
}

// writeStormMarkdown is the storm's per-repetition table, then each
// rank's time in its three parts.
func writeStormMarkdown(w io.Writer, st *results.Storm) {
	t := stormTables(st)
	writeMarkdownTable(w, t.RepHead, t.Reps)
	if len(t.Ranks) > 0 {
		fmt.Fprintln(w, t.RankIntro)
		fmt.Fprintln(w)
		writeMarkdownTable(w, t.RankHead, t.Ranks)
	}
}

// writeMarkdownTable writes a table of right-aligned columns and a blank
// line after it.
func writeMarkdownTable(w io.Writer, head []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// stormTable is the storm's tables, for summary.md and report.html alike.
type stormTable struct {
	RepHead   []string
	Reps      [][]string
	RankIntro string
	RankHead  []string
	Ranks     [][]string
}

// stormTables is the per-repetition table and the ranks' parts.
func stormTables(st *results.Storm) stormTable {
	// The makespan beside its critical path (the plan replayed with the
	// repetition's measured costs): the excess over it, and the excess
	// left after the ranks' run-queue time, is what the plan does not
	// explain; the busiest rank's own work (its timed operations) beside
	// them is the bound a rank's own share sets.
	t := stormTable{RepHead: []string{"repetition", "makespan", "critical path", "over it", "ranks' run queue", "over it + run queue", "busiest rank's own work", "first rank wired", "median rank", "teardown"}}
	for i, ranks := range st.RankDoneNS {
		ok := finished(ranks)
		slices.Sort(ok)
		first, med := "–", "–"
		if len(ok) > 0 {
			first, med = fmtDur(ok[0]), fmtDur(medianNS(ok))
		}
		mk, down := "not reached", "–"
		if i < len(st.MakespanNS) && st.MakespanNS[i] >= 0 {
			mk = fmtDur(st.MakespanNS[i])
		}
		if i < len(st.TeardownNS) {
			down = fmtDur(st.TeardownNS[i])
		}
		busy := "–" // results written before rank_busy_ns
		if i < len(st.RankBusyNS) && len(st.RankBusyNS[i]) > 0 {
			busy = fmtDur(slices.Max(st.RankBusyNS[i]))
		}
		cp, over, runq, beyond := "–", "–", "–", "–" // results written before critical_path_ns
		if i < len(st.RankRunQueueNS) {
			runq = fmtDur(stormRunQueue(st, i))
		}
		if i < len(st.CriticalPathNS) && st.CriticalPathNS[i] > 0 {
			cp = fmtDur(st.CriticalPathNS[i])
		}
		if m, c, q, ok := stormCritical(st, i); ok {
			over, beyond = signedPct(float64(m-c)/float64(c)), "within"
			if m-c-q > 0 { // else the run queue accounts for all of it
				beyond = signedPct(float64(m-c-q) / float64(c))
			}
		}
		t.Reps = append(t.Reps, []string{strconv.Itoa(i + 1), mk, cp, over, runq, beyond, busy, first, med, down})
	}
	t.RankIntro = "Each rank's time to fully wired in three parts (median over repetitions): its own operations, waiting (for a peer's QP number, and the harness's own time between operations, which the results cannot tell apart), and the run queue (runnable, not running; a wait for a CPU inside an operation is in its own operations too, so the parts may add up to more than the time)."
	t.RankHead = []string{"rank", "wired", "own operations", "waiting for a peer (and the harness)", "run queue"}
	for _, r := range stormRankMedians(st) {
		t.Ranks = append(t.Ranks, []string{strconv.Itoa(r.rank), fmtDur(r.done), fmtDur(r.own), fmtDur(r.wait), fmtDur(r.runq)})
	}
	return t
}

// stormFigures draws a storm's "time to fully wired" CDF over ranks, one
// line per repetition, and its makespan (and teardown) per repetition.
func stormFigures(st *results.Storm, prefix string, stamp Stamp) ([]Figure, error) {
	var figs []Figure
	p := newPlot("time to fully wired, over ranks", "time since the storm's start (ms)", "share of ranks wired")
	lines := 0
	for i, ranks := range st.RankDoneNS {
		ok := finished(ranks)
		if len(ok) == 0 || i >= 8 {
			continue // a plot of more than 8 repetitions is unreadable; the table has them all
		}
		slices.Sort(ok)
		var pts plotter.XYs
		prev := 0.0
		for j, d := range ok {
			x := float64(d) / 1e6
			pts = append(pts, plotter.XY{X: x, Y: prev}, plotter.XY{X: x, Y: float64(j+1) / float64(len(ranks))})
			prev = float64(j+1) / float64(len(ranks))
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		styleLine(l, i)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("repetition %d", i+1), l)
		lines++
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Min = 0
	p.Legend.Left, p.Legend.Top = true, true
	caption := "Per repetition, the share of ranks that hold every QP of their plan, against the time since the storm's start; a step per rank. The last step is the makespan; a long tail is a few slow ranks."
	f, err := render(p, prefix+"storm-wired-cdf", "Time to fully wired", caption, stamp)
	if err != nil {
		return nil, err
	}
	if lines == 0 {
		f.Caption = "No rank finished its storm."
	}
	figs = append(figs, f)

	p = newPlot("makespan per repetition", "repetition", "ms")
	add := func(vals []int64, label string, i int) error {
		var pts plotter.XYs
		for j, v := range vals {
			if v >= 0 {
				pts = append(pts, plotter.XY{X: float64(j + 1), Y: float64(v) / 1e6})
			}
		}
		if len(pts) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(s)
		p.Legend.Add(label, s)
		return nil
	}
	if err := add(st.MakespanNS, "makespan", 0); err != nil {
		return nil, err
	}
	if err := add(st.TeardownNS, "teardown ("+st.Teardown+")", 1); err != nil {
		return nil, err
	}
	if err := add(st.CriticalPathNS, "critical path", 2); err != nil {
		return nil, err
	}
	p.Y.Min, p.X.Min, p.X.Max = 0, 0.5, float64(len(st.MakespanNS))+0.5
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		step := max/10 + 1
		for r := 1; r <= len(st.MakespanNS); r += int(step) {
			ts = append(ts, plot.Tick{Value: float64(r), Label: strconv.Itoa(r)})
		}
		return ts
	})
	f, err = render(p, prefix+"storm-makespan", "Makespan across repetitions", "Each repetition's makespan (the slowest rank's time to fully wired), its critical path (the plan replayed with the repetition's measured operation costs: the makespan with no other time) and teardown. Repetitions are independent storms on a fresh device: their spread is the run-to-run noise.", stamp)
	if err != nil {
		return nil, err
	}
	figs = append(figs, f)
	f, ok, err := stormPartsFigure(st, prefix, stamp)
	if err != nil || !ok {
		return figs, err
	}
	return append(figs, f), nil
}

// stormSweepFigure draws a storm sweep's makespan against the node count,
// the median over repetitions with their range, beside the line a storm
// would follow if it scaled linearly from the smallest point: every rank's
// work grows with nodes-1.
func stormSweepFigure(sr *sweepReport) (Figure, bool, error) {
	type pt struct{ nodes, med, lo, hi float64 }
	series := map[string][]pt{}
	for _, r := range sr.Runs {
		st := r.Result.Storm
		if st == nil {
			continue
		}
		ok := finished(st.MakespanNS)
		if len(ok) == 0 {
			continue
		}
		slices.Sort(ok)
		key := fmt.Sprintf("%d ranks", st.Ranks)
		series[key] = append(series[key], pt{float64(st.Nodes), float64(medianNS(ok)) / 1e6, float64(ok[0]) / 1e6, float64(ok[len(ok)-1]) / 1e6})
	}
	nodes := map[float64]bool{}
	for _, pts := range series {
		for _, q := range pts {
			nodes[q.nodes] = true
		}
	}
	if len(nodes) < 2 {
		return Figure{}, false, nil
	}
	p := newPlot(sr.Workload+": makespan against nodes", "nodes in the job", "makespan (ms)")
	for i, key := range slices.Sorted(maps.Keys(series)) {
		pts := series[key]
		slices.SortFunc(pts, func(a, b pt) int { return int(a.nodes - b.nodes) })
		var sp sweepPoints
		var ref plotter.XYs
		for _, q := range pts {
			sp = append(sp, sweepPoint{x: q.nodes, y: q.med, lo: q.lo, hi: q.hi})
			ref = append(ref, plotter.XY{X: q.nodes, Y: pts[0].med * (q.nodes - 1) / (pts[0].nodes - 1)})
		}
		l, err := plotter.NewLine(sp)
		if err != nil {
			return Figure{}, false, err
		}
		styleLine(l, i)
		p.Add(l)
		p.Legend.Add(key, l)
		eb, err := plotter.NewYErrorBars(sp)
		if err != nil {
			return Figure{}, false, err
		}
		eb.Color = l.Color
		p.Add(eb)
		r, err := plotter.NewLine(ref)
		if err != nil {
			return Figure{}, false, err
		}
		r.Color = l.Color
		r.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		r.Width = vg.Points(1)
		p.Add(r)
		p.Legend.Add(key+": linear from the first point", r)
	}
	p.Y.Min = 0
	p.X.Tick.Marker = valueTicks(slices.Sorted(maps.Keys(nodes)))
	p.Legend.Left, p.Legend.Top = true, true
	f, err := render(p, "sweep-storm-makespan", sr.Workload+": makespan against nodes",
		"The median makespan over repetitions (bars: their range) against the job's nodes. The dotted line scales the smallest point linearly with nodes-1, as every rank's share of creations and registrations grows: above it the storm scales worse than its work (contention in the device or the driver), below it better.", runsStamp(sr.Runs))
	return f, true, err
}
