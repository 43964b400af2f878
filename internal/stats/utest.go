package stats

import (
	"cmp"
	"math"
	"slices"
)

// UTest is the two-sided p-value of the Mann-Whitney U test of a against
// b: the share of the C(n1+n2, n1) ways of splitting the pooled values
// into groups of n1 and n2 whose U lies at least as far from n1·n2/2 as
// the observed one, ties given their midranks. It is symmetric in a and
// b and lies in [0, 1]; an empty side gives 1.
//
// The p-value is exact (a permutation test with ties) wherever the
// distribution of U can be counted in bounded work (the smaller side's
// count times the pooled count at most ~3,000: 3 repetitions against
// 1,000 pooled ones, or 40 against 40), and the normal approximation
// with tie and continuity corrections beyond. Why not benchstat's (golang.org/x/perf/benchmath):
// its exact path counts U over ranks without ties, and HDR values are
// quantized, so ties are the rule; there it was asymmetric, anti-
// conservative and could leave [0, 1].
func UTest(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	if n1 > n2 {
		// The statistic |U − n1·n2/2| is the same from either side;
		// counting over the smaller one is cheaper.
		a, b, n1, n2 = b, a, n2, n1
	}
	blocks, obs := tieBlocks(a, b)
	n := n1 + n2
	// Twice the rank sum of a, centred: |2·R1 − n1·(n+1)| = |2U − n1·n2|.
	dev := func(twiceR int) int {
		d := twiceR - n1*(n+1)
		if d < 0 {
			d = -d
		}
		return d
	}
	if float64(n)*float64(n1)*float64(2*n*n1) <= exactWork {
		return exactU(blocks, n1, n, dev(obs), dev)
	}
	return normalU(blocks, n1, n2, dev(obs))
}

// exactWork bounds the size of the exact count (n · n1 · 2n·n1: a few ms
// at the bound, as only the sums reached so far are walked).
const exactWork = 2e7

// tieBlock is a run of equal pooled values: how many, and twice their
// midrank (an integer: ranks start+1 … start+size average to
// start + (size+1)/2).
type tieBlock struct{ size, twiceRank int }

// tieBlocks sorts the pooled values into runs of ties and returns them
// with twice the rank sum of a's values.
func tieBlocks(a, b []float64) ([]tieBlock, int) {
	type v struct {
		x   float64
		inA bool
	}
	all := make([]v, 0, len(a)+len(b))
	for _, x := range a {
		all = append(all, v{x, true})
	}
	for _, x := range b {
		all = append(all, v{x, false})
	}
	slices.SortFunc(all, func(p, q v) int { return cmp.Compare(p.x, q.x) })
	var blocks []tieBlock
	twiceR := 0
	for i := 0; i < len(all); {
		j := i
		inA := 0
		for j < len(all) && all[j].x == all[i].x {
			if all[j].inA {
				inA++
			}
			j++
		}
		blk := tieBlock{size: j - i, twiceRank: 2*i + (j - i) + 1}
		blocks = append(blocks, blk)
		twiceR += inA * blk.twiceRank
		i = j
	}
	return blocks, twiceR
}

// exactU counts, for every k ≤ n1 values taken from the runs of ties,
// the ways to take them by twice their rank sum (C(size, c) ways to take
// c values of a run), and sums the splits at least as extreme as the
// observed one. Counts are float64: exact up to 2⁵³ and within a few ulps
// beyond, far inside the 1e-9 the p-value is checked to.
func exactU(blocks []tieBlock, n1, n, obsDev int, dev func(int) int) float64 {
	width := 2*n*n1 + 1
	ways := make([]float64, (n1+1)*width)
	next := make([]float64, len(ways))
	// hi[k] is the largest sum k values taken so far can have (-1: none
	// yet); rows are only read and cleared up to it, which makes the
	// count about n1 times cheaper than walking every row whole.
	hi := make([]int, n1+1)
	for k := range hi {
		hi[k] = -1
	}
	hi[0], ways[0] = 0, 1
	newHi := make([]int, n1+1)
	for _, blk := range blocks {
		copy(newHi, hi)
		for k := 0; k < n1; k++ {
			if hi[k] < 0 {
				continue
			}
			for c := 1; c <= blk.size && k+c <= n1; c++ {
				newHi[k+c] = max(newHi[k+c], hi[k]+c*blk.twiceRank)
			}
		}
		for k := 0; k <= n1; k++ {
			if newHi[k] >= 0 {
				clear(next[k*width : k*width+newHi[k]+1])
			}
		}
		for k := 0; k <= n1; k++ {
			if hi[k] < 0 {
				continue
			}
			row := ways[k*width : k*width+hi[k]+1]
			for s, w := range row {
				if w == 0 {
					continue
				}
				choose := 1.0
				for c := 0; c <= blk.size && k+c <= n1; c++ {
					if c > 0 {
						choose = choose * float64(blk.size-c+1) / float64(c)
					}
					next[(k+c)*width+s+c*blk.twiceRank] += w * choose
				}
			}
		}
		ways, next = next, ways
		hi, newHi = newHi, hi
	}
	var extreme, total float64
	for s, w := range ways[n1*width : n1*width+hi[n1]+1] {
		if w == 0 {
			continue
		}
		total += w
		if dev(s) >= obsDev {
			extreme += w
		}
	}
	return math.Min(1, extreme/total)
}

// normalU is the normal approximation to U's distribution with the tie
// correction of its variance and a continuity correction of ½ (as
// scipy.stats.mannwhitneyu computes it by default).
func normalU(blocks []tieBlock, n1, n2, obsDev int) float64 {
	n := float64(n1 + n2)
	ties := 0.0
	for _, b := range blocks {
		t := float64(b.size)
		ties += t*t*t - t
	}
	variance := float64(n1) * float64(n2) / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value tied: nothing tells the samples apart
	}
	z := (float64(obsDev)/2 - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// MinUTestP is the smallest two-sided p-value the Mann-Whitney U test can
// give for samples of n1 and n2 values: all of one below all of the other,
// one arrangement of C(n1+n2, n1) in each direction. Ties only raise it.
func MinUTestP(n1, n2 int) float64 {
	// C(n1+n2, n1) as a running product: exact in float64 for the sample
	// sizes of repetitions, and it saturates to +Inf rather than overflow.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// SeparatedP is the p-value UTest gives n1 distinct values wholly apart
// from n2: the smallest it can give. It is MinUTestP where UTest is exact;
// beyond that the normal approximation gives more, so it is asked rather
// than computed.
func SeparatedP(n1, n2 int) float64 {
	sep := func(n int, off float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = off + float64(i)
		}
		return v
	}
	return UTest(sep(n1, 0), sep(n2, float64(n1)))
}

// RepetitionsNeeded is the smallest number of repetitions per run with
// which the Mann-Whitney U test can reach alpha at all.
func RepetitionsNeeded(alpha float64) int {
	n := 1
	for MinUTestP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}

// HolmAdjust is Holm's step-down adjustment of the p-values ps, in their
// order: p(i)·(m−i) for the i-th smallest of m, made monotone, so that the
// chance of any false finding among the m stays at alpha.
func HolmAdjust(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	out := make([]float64, len(ps))
	m, prev := len(idx), 0.0
	for i, j := range idx {
		out[j] = math.Min(1, math.Max(prev, float64(m-i)*ps[j]))
		prev = out[j]
	}
	return out
}
