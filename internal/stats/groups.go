package stats

import (
	"math"
	"sort"
)

// Two groups of trials. Every interval in this package assumes a cell's
// trials scatter around one value. Some do not: RPS with one flow puts
// the server's protocol work on whichever core the flow hash picks, so
// each trial lands near one of two throughputs, and a level shift of the
// machine halfway through a run splits a cell in time. The interval of
// such a cell is honest about the mean but says nothing of the two
// values, and more trials narrow it only slowly; a report should show
// the groups instead of letting the interval stand for them.

// Groups is a cell's trials split into two separated groups, in the
// order the trials ran.
type Groups struct {
	LowMean, HighMean float64
	LowN, HighN       int
	// Separation is the distance between the groups' means in units of
	// their pooled standard deviation (+Inf when each group holds one
	// value repeated).
	Separation float64
	// InTime is set when the groups are consecutive runs of trials (all
	// of one group before all of the other): a level shift between
	// rounds rather than two values alternating.
	InTime bool
}

// Thresholds of TwoGroups, calibrated by simulation (groups_test.go):
// samples of one normal value are flagged in at most 0.6% of runs (6 to
// 40 trials; 0.03% from 15 trials), two equally likely values 8 standard
// deviations apart in 89% of runs of 12 trials and 94-99% of 15 to 30
// (fewer at 8 to 10 trials, where one value often has under MinGroup).
const (
	// MinGroup is the fewest trials either group may hold: one or two
	// far trials are outliers (the noise guard's business), not a group.
	MinGroup = 3
	// MinSeparation is the least distance of the groups' means, in
	// pooled standard deviations.
	MinSeparation = 6.0
	// MinRelGap is the least difference of the groups' means relative to
	// the cell's mean: two values 0.5% apart are not worth a remark.
	MinRelGap = 0.02
)

// TwoGroups splits xs (in the order the trials ran) at the largest gap
// between sorted values that leaves MinGroup trials on each side, and
// reports whether the two sides are separated: their means at least
// MinSeparation pooled standard deviations and MinRelGap of the overall
// mean apart. NaN and infinite values are ignored.
func TwoGroups(xs []float64) (Groups, bool) {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n < 2*MinGroup {
		return Groups{}, false
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	k := MinGroup // s[:k] low, s[k:] high
	for i := MinGroup + 1; i <= n-MinGroup; i++ {
		if s[i]-s[i-1] > s[k]-s[k-1] {
			k = i
		}
	}
	low, high := s[:k], s[k:]
	lm, lss := meanSS(low)
	hm, hss := meanSS(high)
	pooled := math.Sqrt((lss + hss) / float64(n-2))
	gap := s[k] - s[k-1]
	mean := (lm*float64(len(low)) + hm*float64(len(high))) / float64(n)
	g := Groups{LowMean: lm, HighMean: hm, LowN: len(low), HighN: len(high), Separation: math.Inf(1)}
	if pooled > 0 {
		g.Separation = (hm - lm) / pooled
	}
	if gap == 0 || g.Separation < MinSeparation || (hm-lm) < MinRelGap*math.Abs(mean) {
		return Groups{}, false
	}
	g.InTime = consecutive(v, s[k-1])
	return g, true
}

// meanSS is the mean and the sum of squared deviations from it.
func meanSS(xs []float64) (mean, ss float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, ss
}

// consecutive reports whether the values at or below cut form one run in
// v's order (so the others form the other run): low then high, or high
// then low.
func consecutive(v []float64, cut float64) bool {
	changes := 0
	for i := 1; i < len(v); i++ {
		if (v[i] <= cut) != (v[i-1] <= cut) {
			changes++
		}
	}
	return changes == 1
}
