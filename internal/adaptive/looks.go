package adaptive

import (
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// Sequential looks: the trial counts at which a decision is judged, and
// the confidence each look uses so that looking several times keeps a
// cell's overall error at 5%.

// LookGrowth is the factor between the trial counts at which a sequential
// decision is looked at.
const LookGrowth = 1.5

// Looks returns the trial counts at which a cell's decision against its
// baseline is evaluated: Min, then each count LookGrowth times the one
// before (rounded up, at least one more), then Max. For Min 3 and Max 30:
// 3 5 8 12 18 27 30. Looking after every trial with 95% intervals would
// declare a tuning identical to the baseline better or worse in about a
// quarter of runs (measured: 25% for 3..30 trials); a few looks, each at
// DecisionConfidence, bound that rate by 5% (Bonferroni).
func Looks(t Trials) []int {
	var out []int
	for n := t.Min; n < t.Max; n = max(n+1, int(math.Ceil(LookGrowth*float64(n)))) {
		out = append(out, n)
	}
	return append(out, t.Max)
}

// DecisionConfidence is the confidence level of the intervals a
// sequential decision is made on: 1 − 0.05/K for K looks (0.99286 for
// 7 looks). A cell stopped on a decision still reports its 95% interval,
// which then excludes 1 (or lies within the margin) as well.
func DecisionConfidence(t Trials) float64 {
	return 1 - (1-stats.Confidence)/float64(len(Looks(t)))
}

// cellLooks are the looks of a cell that stops on nothing of its own
// before from trials (Hold.Minimum): Looks, or for a held cell from
// beyond Min, from and the planned looks after it. That drops at least
// the look at Min for the one at from, so a held cell has at most the
// K looks of DecisionConfidence, and Bonferroni's bound still holds.
func cellLooks(t Trials, from int) []int {
	all := Looks(t)
	if from <= t.Min {
		return all
	}
	out := []int{from}
	for _, l := range all {
		if l > from {
			out = append(out, l)
		}
	}
	return out
}

// lastLook is the largest of the looks of a cell with minimum from
// (cellLooks) that is <= n, 0 before the first.
func lastLook(t Trials, from, n int) int {
	last := 0
	for _, l := range cellLooks(t, from) {
		if l <= n {
			last = l
		}
	}
	return last
}
