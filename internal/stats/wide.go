package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wide cells. TwoGroups needs 3 trials on each side of a split, so it
// cannot see two values in the 5 trials a quick run gives a cell: rps+
// at one pair on 2026-11-30 ran 12.6, 13.5, 13.7, 16.8 and 17.9 Gbit/s
// while the run's other cells spread 1-4%. What 5 trials can show is
// that a cell spreads far more than its neighbours, which are the same
// workload measured the same way. The other cells give the typical
// spread with many degrees of freedom, so one cell's variance is tested
// against theirs (an F test, one-sided) on the trials' logarithms: a
// relative spread, comparable across tunings whose means differ.

// Wide says how a cell's trials spread against the other cells'.
type Wide struct {
	// Spread is the standard deviation of the cell's log values (about
	// its relative spread, sd/mean); Typical is the same pooled over the
	// Others cells it was tested against (themselves not wide), DF their
	// degrees of freedom.
	Spread, Typical float64
	Others, DF      int
	// P is the one-sided F test's p of the cell's variance against
	// Typical's; the cell is wide when it is below WideAlpha divided by
	// the cells tested and Spread is at least WideRatio times Typical.
	P float64
}

const (
	// WideAlpha is the family-wise level over one metric's cells
	// (Bonferroni): a run of twenty cells of normal noise of one spread
	// flags none in about 99 runs of 100.
	WideAlpha = 0.01
	// WideRatio is the least Spread/Typical that counts: cells that
	// differ by a factor of two in spread are common (one pair against
	// sixteen) and not worth a remark; three times the typical is.
	WideRatio = 3.0
	// wideMinN is the trials a cell needs to be tested or pooled (two
	// degrees of freedom), wideMinDF the pooled degrees of freedom the
	// typical spread needs: two other cells of 3 trials, as a quick
	// study of three datapaths has (nic-modes). The F test's level holds
	// for any; few degrees of freedom only make it need a wider cell.
	wideMinN  = 3
	wideMinDF = 4
)

// WideCells tests each of cells (one metric's trial values per cell)
// against the others and returns, per cell, its Wide when it spreads far
// more than them, or nil. A cell with fewer than 3 trials, or a value
// that is not positive (no logarithm), is neither tested nor pooled.
// The typical spread pools the cells not found wide, and the test
// repeats until the set of wide cells is stable, so two wide cells do
// not hide each other by inflating the typical spread.
func WideCells(cells [][]float64) []*Wide {
	logs := make([][]float64, len(cells))
	var tested []int
	for i, xs := range cells {
		if len(xs) < wideMinN || slices.ContainsFunc(xs, func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) }) {
			continue
		}
		logs[i] = make([]float64, len(xs))
		for j, x := range xs {
			logs[i][j] = math.Log(x)
		}
		tested = append(tested, i)
	}
	out := make([]*Wide, len(cells))
	for range tested {
		// Every cell against the same set (the last pass's), so the
		// result does not depend on the cells' order.
		next := make([]*Wide, len(cells))
		changed := false
		for _, i := range tested {
			next[i] = wideAgainst(logs, tested, out, i)
			changed = changed || (next[i] != nil) != (out[i] != nil)
		}
		out = next
		if !changed {
			break
		}
	}
	return out
}

// wideAgainst tests cell i against the tested cells other than i that
// are not wide (out); nil when it is not wide or they are too few.
func wideAgainst(logs [][]float64, tested []int, out []*Wide, i int) *Wide {
	var ss float64
	df, others := 0, 0
	for _, j := range tested {
		if j == i || out[j] != nil {
			continue
		}
		ss += sumSq(logs[j])
		df += len(logs[j]) - 1
		others++
	}
	if df < wideMinDF {
		return nil
	}
	dfi := len(logs[i]) - 1
	vi, vo := sumSq(logs[i])/float64(dfi), ss/float64(df)
	if vo <= 0 {
		return nil
	}
	f := vi / vo
	w := &Wide{Spread: math.Sqrt(vi), Typical: math.Sqrt(vo), Others: others, DF: df,
		P: distuv.F{D1: float64(dfi), D2: float64(df)}.Survival(f)}
	if w.P >= WideAlpha/float64(len(tested)) || w.Spread < WideRatio*w.Typical {
		return nil
	}
	return w
}

// sumSq is the sum of squared deviations from the mean.
func sumSq(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s
}
