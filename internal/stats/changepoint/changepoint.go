// Package changepoint finds where a series of benchmark results changed:
// E-divisive (Matteson and James, "A Nonparametric Approach for Multiple
// Change Point Analysis of Multivariate Data", JASA 2014), the method
// MongoDB's performance CI uses (Daly et al., "The Use of Change Point
// Detection to Identify Software Performance Regressions in a Continuous
// Integration System", ICPE 2020), with a permutation test for each change
// point's significance and a minimum effect size below which a change is
// not reported.
//
// A slow drift also changes the series' distribution, and E-divisive splits
// it somewhere in the middle. Each split is therefore checked against a
// straight line (Theil-Sen) over the same stretch: when the line fits at
// least as well as two levels, the stretch is reported as a drift with its
// slope and the Mann-Kendall trend test's p, not as a step.
//
// E-divisive with a permutation test costs O(n²) per permutation, so a
// series longer than Options.Window is searched in windows of that many
// points, each half over the one before: every step and drift is taken
// from the window it lies most central in (its middle half), where it has
// a quarter of a window or more of the series on either side. The series
// then costs O(n) windows, each the same as a series of Window points.
package changepoint

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/xrcbench/xrcbench/internal/stats"
)

// Options tune Detect. Zero values take the defaults.
type Options struct {
	// Alpha is the permutation test's significance level (default 0.01).
	Alpha float64
	// Permutations of the permutation test (default 999).
	Permutations int
	// MinSize is the fewest points a segment may have (default 3, at
	// least 2: the statistic needs pairs on each side).
	MinSize int
	// MinEffect is the smallest relative change of the median, as a
	// fraction (0.05: 5%), that counts as a change point or a drift.
	MinEffect float64
	// Seed makes the permutations, and so the p-values, reproducible.
	Seed uint64
	// Window is the longest series searched whole (default
	// DefaultWindow); a longer one is searched in windows of this many
	// points.
	Window int
	// Progress, when not nil, is told after each window of a long series
	// how many of how many are done (from several goroutines, one call at
	// a time).
	Progress func(done, total int)
}

// DefaultWindow is Options.Window's default: a window of 100 points takes
// about 0.1 s of one core, a series of 10,000 points about 200 windows.
const DefaultWindow = 100

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if o.Permutations == 0 {
		o.Permutations = 999
	}
	if o.MinSize < 2 {
		o.MinSize = 3
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	// A window must hold a step with MinSize points on each side in its
	// middle half.
	o.Window = max(o.Window, 8*o.MinSize)
	return o
}

// ChangePoint is a step in the series.
type ChangePoint struct {
	// Index is the first point after the step.
	Index int `json:"index"`
	// Before and After are the medians of the segments on either side,
	// up to the neighbouring change points.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Change is After/Before − 1.
	Change float64 `json:"change"`
	// P is the permutation test's p-value when the split was found.
	P float64 `json:"p"`
}

// Drift is a stretch the series moves along steadily rather than in a
// step.
type Drift struct {
	Start int `json:"start"` // first point of the stretch
	End   int `json:"end"`   // one past its last
	// PerStep is the Theil-Sen slope relative to the line's value at
	// Start; Change the relative change of the line over the stretch.
	PerStep float64 `json:"per_step"`
	Change  float64 `json:"change"`
	// P is the Mann-Kendall trend test's two-sided p-value.
	P float64 `json:"p"`
	// SplitP is the permutation test's p of the split that found it.
	SplitP float64 `json:"split_p"`
}

// Result is what Detect found, change points and drifts in series order.
type Result struct {
	ChangePoints []ChangePoint `json:"change_points"`
	Drifts       []Drift       `json:"drifts"`
}

// Detect finds the change points and drifts of x.
func Detect(x []float64, opt Options) Result {
	res, _ := DetectContext(context.Background(), x, opt)
	return res
}

// DetectContext is Detect, stopped (with ctx's error) when ctx is done.
func DetectContext(ctx context.Context, x []float64, opt Options) (Result, error) {
	opt = opt.withDefaults()
	if len(x) > opt.Window {
		return detectWindows(ctx, x, opt)
	}
	d := &detector{ctx: ctx, x: x, opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))}
	d.split(0, len(x))
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return finish(x, d.cps, d.drifts), nil
}

// finish orders what was found and gives each change point the medians
// of the segments either side of it, up to its neighbours.
func finish(x []float64, cps []ChangePoint, drifts []Drift) Result {
	var res Result
	slices.SortFunc(cps, func(a, b ChangePoint) int { return a.Index - b.Index })
	for i, cp := range cps {
		lo, hi := 0, len(x)
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		cp.Before, cp.After = stats.Median(x[lo:cp.Index]), stats.Median(x[cp.Index:hi])
		cp.Change = relChange(cp.Before, cp.After)
		res.ChangePoints = append(res.ChangePoints, cp)
	}
	slices.SortFunc(drifts, func(a, b Drift) int { return a.Start - b.Start })
	res.Drifts = drifts
	return res
}

// detectWindows searches x in windows of opt.Window points, each starting
// half a window after the one before (the last one ending with x), on as
// many goroutines as there are CPUs. A window's step or drift is kept
// when it lies in the window's core: the points nearer the window's
// centre than any other's, so the cores tile x and each step is judged
// where it has the most of the series around it.
func detectWindows(ctx context.Context, x []float64, opt Options) (Result, error) {
	n, w := len(x), opt.Window
	var starts []int
	for s := 0; ; s += w / 2 {
		if s+w >= n {
			starts = append(starts, n-w)
			break
		}
		starts = append(starts, s)
	}
	// core k is [bounds[k], bounds[k+1]).
	bounds := make([]int, len(starts)+1)
	for k := 1; k < len(starts); k++ {
		bounds[k] = (starts[k-1] + starts[k] + w) / 2
	}
	bounds[len(starts)] = n
	type found struct {
		cps    []ChangePoint
		drifts []Drift
	}
	out := make([]found, len(starts))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(runtime.GOMAXPROCS(0), len(starts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				s := starts[k]
				// Each window its own stream of permutations: the same
				// p-values whatever the goroutines' order.
				d := &detector{ctx: ctx, x: x[s : s+w], opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15+uint64(s)))}
				d.split(0, w)
				for _, cp := range d.cps {
					if cp.Index += s; cp.Index >= bounds[k] && cp.Index < bounds[k+1] {
						out[k].cps = append(out[k].cps, cp)
					}
				}
				for _, dr := range d.drifts {
					dr.Start, dr.End = dr.Start+s, dr.End+s
					if mid := (dr.Start + dr.End) / 2; mid >= bounds[k] && mid < bounds[k+1] {
						out[k].drifts = append(out[k].drifts, dr)
					}
				}
				if opt.Progress != nil {
					mu.Lock()
					done++
					opt.Progress(done, len(starts))
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for k := range starts {
		select {
		case jobs <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var all []ChangePoint
	var allDrifts []Drift
	for _, f := range out {
		all, allDrifts = append(all, f.cps...), append(allDrifts, f.drifts...)
	}
	slices.SortFunc(all, func(a, b ChangePoint) int { return a.Index - b.Index })
	slices.SortFunc(allDrifts, func(a, b Drift) int { return a.Start - b.Start })
	var cps []ChangePoint
	for _, cp := range all {
		// One step seen from two windows, a point or two apart either
		// side of their cores' border: keep the surer.
		if last := len(cps) - 1; last >= 0 && cp.Index-cps[last].Index < opt.MinSize {
			if cp.P < cps[last].P {
				cps[last] = cp
			}
			continue
		}
		cps = append(cps, cp)
	}
	var drifts []Drift
	for _, dr := range allDrifts {
		if last := len(drifts) - 1; last >= 0 && dr.Start < drifts[last].End {
			continue // overlaps a drift already kept
		}
		drifts = append(drifts, dr)
	}
	return finish(x, cps, drifts), nil
}

type detector struct {
	ctx    context.Context
	x      []float64
	opt    Options
	rng    *rand.Rand
	cps    []ChangePoint
	drifts []Drift
}

// split looks for the most likely change in x[a:b], keeps it if it is
// significant and large enough, and goes on either side of it (binary
// segmentation, as E-divisive's hierarchical search).
func (d *detector) split(a, b int) {
	seg := d.x[a:b]
	n := len(seg)
	if n < 2*d.opt.MinSize {
		return
	}
	dist := distances(seg)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	tau, q := bestSplit(dist, order, d.opt.MinSize)
	if tau < 0 {
		return
	}
	exceed := 0
	perm := slices.Clone(order)
	for i := range d.opt.Permutations {
		if i%64 == 0 && d.ctx.Err() != nil {
			return
		}
		d.rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, qp := bestSplit(dist, perm, d.opt.MinSize); qp >= q {
			exceed++
		}
	}
	p := float64(exceed+1) / float64(d.opt.Permutations+1)
	if p > d.opt.Alpha {
		return
	}
	before, after := stats.Median(seg[:tau]), stats.Median(seg[tau:])
	if math.Abs(relChange(before, after)) < d.opt.MinEffect {
		return
	}
	// Two levels, or one line? The line has a parameter fewer; it is
	// taken when it fits at least as well (sum of absolute residuals).
	slope, icept := theilSen(seg)
	var stepRes, lineRes float64
	for i, v := range seg {
		lvl := before
		if i >= tau {
			lvl = after
		}
		stepRes += math.Abs(v - lvl)
		lineRes += math.Abs(v - (icept + slope*float64(i)))
	}
	if lineRes <= stepRes {
		start, end := icept, icept+slope*float64(n-1)
		dr := Drift{Start: a, End: b, PerStep: relChange(start, start+slope), Change: relChange(start, end), P: mannKendall(seg), SplitP: p}
		if math.Abs(dr.Change) >= d.opt.MinEffect {
			d.drifts = append(d.drifts, dr)
		}
		return
	}
	d.cps = append(d.cps, ChangePoint{Index: a + tau, P: p})
	d.split(a, a+tau)
	d.split(a+tau, b)
}

// distances is the matrix of |x_i − x_j|.
func distances(x []float64) [][]float64 {
	d := make([][]float64, len(x))
	for i := range x {
		d[i] = make([]float64, len(x))
		for j := range x {
			d[i][j] = math.Abs(x[i] - x[j])
		}
	}
	return d
}

// bestSplit returns the split τ (left size) of the points in order that
// maximises the energy statistic
//
//	Q(τ) = m·r/n · (2/(m·r)·Σ|x−y| − Σ|x−x'|/C(m,2) − Σ|y−y'|/C(r,2))
//
// over both sides having at least minSize points, in O(n²): each step
// moves one point from the right side to the left and updates the three
// sums. It returns −1 when no split is possible.
func bestSplit(dist [][]float64, order []int, minSize int) (int, float64) {
	n := len(order)
	var total float64
	rows := make([]float64, n)
	for i := range n {
		for j := range n {
			rows[i] += dist[i][j]
		}
		total += rows[i]
	}
	total /= 2
	wl, cross, wr := 0.0, 0.0, total
	best, bestQ := -1, math.Inf(-1)
	for k := 0; k < n-1; k++ {
		var toLeft float64
		for i := 0; i < k; i++ {
			toLeft += dist[order[i]][order[k]]
		}
		toRight := rows[order[k]] - toLeft
		wl += toLeft
		cross += toRight - toLeft
		wr -= toRight
		m, r := float64(k+1), float64(n-k-1)
		if k+1 < minSize || n-k-1 < minSize {
			continue
		}
		e := 2*cross/(m*r) - wl/(m*(m-1)/2) - wr/(r*(r-1)/2)
		if q := m * r / float64(n) * e; q > bestQ {
			best, bestQ = k+1, q
		}
	}
	return best, bestQ
}

// theilSen fits y = icept + slope·i robustly: the slope is the median of
// the pairwise slopes, the intercept the median of y_i − slope·i.
func theilSen(y []float64) (slope, icept float64) {
	var slopes []float64
	for i := range y {
		for j := i + 1; j < len(y); j++ {
			slopes = append(slopes, (y[j]-y[i])/float64(j-i))
		}
	}
	if len(slopes) == 0 {
		return 0, stats.Median(y)
	}
	slope = stats.Median(slopes)
	res := make([]float64, len(y))
	for i, v := range y {
		res[i] = v - slope*float64(i)
	}
	return slope, stats.Median(res)
}

// mannKendall is the two-sided p-value of the Mann-Kendall trend test, by
// the normal approximation with the continuity correction (ties are rare
// in medians of latencies and are not corrected for).
func mannKendall(y []float64) float64 {
	n := len(y)
	var s float64
	for i := range y {
		for j := i + 1; j < n; j++ {
			switch {
			case y[j] > y[i]:
				s++
			case y[j] < y[i]:
				s--
			}
		}
	}
	v := float64(n*(n-1)*(2*n+5)) / 18
	if v == 0 || s == 0 {
		return 1
	}
	z := (math.Abs(s) - 1) / math.Sqrt(v)
	return math.Erfc(z / math.Sqrt2)
}

// relChange is to/from − 1, 0 when from is 0.
func relChange(from, to float64) float64 {
	if from == 0 {
		return 0
	}
	return to/from - 1
}

// MinPoints is the fewest points in which the permutation test can find a
// step at opt's Alpha. A step splits n points into m and n−m; a random
// permutation puts the same points on either side (or the two sides'
// points swapped, which scores the same) with chance 2/C(n,m), so p is
// not expected below that, least at m = n/2: at alpha 0.01 a step needs
// 10 points (2/C(10,5) = 0.008), where 8 give 2/70 = 0.03.
func MinPoints(opt Options) int {
	opt = opt.withDefaults()
	for n := 2 * opt.MinSize; ; n++ {
		if 2/binomial(n, n/2) <= opt.Alpha {
			return n
		}
	}
}

// MinSide is the points a step needs on each side (MinPoints halved,
// rounded up).
func MinSide(opt Options) int { return (MinPoints(opt) + 1) / 2 }

func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}
