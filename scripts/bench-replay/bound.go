package main

import (
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// The fewest trials any sequential design could spend to reach the fixed
// design's decisions, printed beside the adaptive design's count: how far
// below the adaptive design a better rule could get at all.
//
// Wald's sequential probability ratio test of "no difference" against a
// cell's true difference δ (in log-ratio), with per-round log-ratios of
// spread s, a wrong decision in at most α and a missed one in at most β,
// needs on average (Wald's approximation)
//
//	E[N] = ((1−β)·ln((1−β)/α) + β·ln(β/(1−α))) / (δ²/(2s²))
//
// rounds. No sequential test with those error rates needs fewer on
// average at that δ (Wald and Wolfowitz 1948), and this one is told δ,
// which a real design has to learn from the trials: E[N] is a lower bound
// for any design. For "better" or "worse" δ is the cell's mean
// log-ratio; for "equal", its distance from the margin (the nearer side
// of the equivalence test); an undecided cell is given the minimum,
// which is generous to every design. A cell runs at least min and at
// most max trials, and the baseline as many as its longest cell.

// waldN is E[N] above; +Inf when δ is 0.
func waldN(delta, s, alpha, beta float64) float64 {
	num := (1-beta)*math.Log((1-beta)/alpha) + beta*math.Log(beta/(1-alpha))
	return num / (delta * delta / (2 * s * s))
}

// cellBound is the bound for one cell with the fixed design's verdict v
// and its per-round log-ratios against the baseline, within [min, max].
func cellBound(v stats.Verdict, logs []float64, margin float64, lo, hi int, alpha, beta float64) float64 {
	d := stats.Describe(logs)
	var delta float64
	switch v {
	case stats.Better, stats.Worse:
		delta = math.Abs(d.Mean)
	case stats.Equal:
		delta = math.Log(1+margin) - math.Abs(d.Mean)
	default:
		return float64(lo)
	}
	n := waldN(delta, d.SD, alpha, beta)
	if math.IsNaN(n) || delta <= 0 {
		n = float64(hi)
	}
	return math.Min(math.Max(n, float64(lo)), float64(hi))
}

// blockBound is the bound for a block: its cells' bounds and a baseline
// as long as the longest of them.
func blockBound(cells []float64) float64 {
	sum, longest := 0.0, 0.0
	for _, n := range cells {
		sum += n
		longest = math.Max(longest, n)
	}
	return sum + longest
}

// logRatios are a cell's per-round log-ratios against its baseline over
// the rounds both have a value for.
func logRatios(x, base map[int]float64) []float64 {
	xs, ys := paired(x, base)
	var out []float64
	for i := range xs {
		if xs[i] > 0 && ys[i] > 0 {
			out = append(out, math.Log(xs[i]/ys[i]))
		}
	}
	return out
}
