package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
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

// Two tests look for the groups (calibrated by simulation, groups_test.go).
// The trials are sorted, and either split must leave MinGroup trials or
// more on each side and means MinRelGap of the cell's mean apart:
//   - the widest gap between neighbouring values, with the two sides'
//     means GapSeparation pooled standard deviations apart: two clear
//     values, found from few trials;
//   - the split where two normal groups, each with its own mean and
//     spread, fit best against one, by the likelihood ratio
//     2·log(L2/L1) = n·log(s²) − k·log(s²_low) − (n−k)·log(s²_high)
//     (variances by maximum likelihood), when it exceeds what samples of
//     one normal value of the same size reach in LRFalseRate of simulated
//     runs (criticalLR) and the means are MinSeparation pooled standard
//     deviations apart. Separate spreads find a tight group beside a wide
//     one (seed 000's rps+ at one pair here), which a pooled spread hides.
const (
	// MinGroup is the fewest trials either group may hold: one or two
	// far trials are outliers (the noise guard's business), not a group.
	MinGroup = 3
	// GapSeparation is the widest-gap test's least distance of the means,
	// in pooled standard deviations.
	GapSeparation = 6.0
	// LRFalseRate is how often the likelihood-ratio test passes on
	// samples of one normal value.
	LRFalseRate = 0.0025
	// MinSeparation is the likelihood-ratio test's least distance of the
	// means in pooled standard deviations: a tight group beside a wide one
	// reaching back towards it (outliers on one side) is not two values.
	MinSeparation = 3.0
	// MinRelGap is the least difference of the groups' means relative to
	// the cell's mean: two values 0.5% apart are not worth a remark.
	MinRelGap = 0.02
)

// TwoGroups reports whether xs (in the order the trials ran) fall in two
// separated groups, and which. NaN and infinite values are ignored.
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
	g, ok := sides(s, widestGap(s))
	if !ok || g.Separation < GapSeparation {
		k, lr := bestSplit(s)
		if k == 0 || lr < criticalLR(n) {
			return Groups{}, false
		}
		if g, ok = sides(s, k); !ok || g.Separation < MinSeparation {
			return Groups{}, false
		}
	}
	g.InTime = consecutive(v, s[g.LowN-1])
	return g, true
}

// widestGap is the split of sorted s (s[:k] low) at the widest gap
// between neighbours that leaves MinGroup values on each side.
func widestGap(s []float64) int {
	k := MinGroup
	for i := MinGroup + 1; i <= len(s)-MinGroup; i++ {
		if s[i]-s[i-1] > s[k]-s[k-1] {
			k = i
		}
	}
	return k
}

// sides describes the split s[:k], s[k:] of sorted s; false when the
// means are not MinRelGap apart.
func sides(s []float64, k int) (Groups, bool) {
	n := len(s)
	lm, lss := meanSS(s[:k])
	hm, hss := meanSS(s[k:])
	mean := (lm*float64(k) + hm*float64(n-k)) / float64(n)
	g := Groups{LowMean: lm, HighMean: hm, LowN: k, HighN: n - k, Separation: math.Inf(1)}
	if pooled := math.Sqrt((lss + hss) / float64(n-2)); pooled > 0 {
		g.Separation = (hm - lm) / pooled
	}
	return g, s[k] > s[k-1] && hm-lm >= MinRelGap*math.Abs(mean)
}

// bestSplit returns the split of sorted s (s[:k] low) with the largest
// likelihood ratio of two normal groups against one, and that ratio; 0
// when all values are equal. A group of equal values beside others fits
// perfectly: its spread is floored at a millionth of the overall one.
// The ratio does not change with location and scale, so the values are
// standardized first and the groups' variances come from running sums
// (bitrates of 1e10 bit/s would lose their digits in sums of squares).
func bestSplit(s []float64) (int, float64) {
	n := len(s)
	m, ss := meanSS(s)
	if ss == 0 {
		return 0, 0
	}
	sd := math.Sqrt(ss / float64(n)) // the overall variance becomes 1
	var tot, totSq float64
	for _, x := range s {
		z := (x - m) / sd
		tot, totSq = tot+z, totSq+z*z
	}
	best, bk := math.Inf(-1), 0
	var sum, sq float64
	for k := 1; k <= n-MinGroup; k++ {
		z := (s[k-1] - m) / sd
		sum, sq = sum+z, sq+z*z
		if k < MinGroup {
			continue
		}
		lv := max(sq/float64(k)-(sum/float64(k))*(sum/float64(k)), 1e-6)
		hs, hq, hk := tot-sum, totSq-sq, float64(n-k)
		hv := max(hq/hk-(hs/hk)*(hs/hk), 1e-6)
		if lr := -float64(k)*math.Log(lv) - hk*math.Log(hv); lr > best {
			best, bk = lr, k
		}
	}
	return bk, best
}

// nullRuns is how many samples of one normal value criticalLR draws per
// size: the 0.25% quantile then rests on the 25 largest.
const nullRuns = 10000

var (
	criticalMu sync.Mutex
	critical   = map[int]float64{}
)

// criticalLR is the likelihood ratio that samples of n values of one
// normal exceed in LRFalseRate of runs, by simulation from a fixed seed
// (the same every time), computed once per n.
func criticalLR(n int) float64 {
	criticalMu.Lock()
	defer criticalMu.Unlock()
	if c, ok := critical[n]; ok {
		return c
	}
	rng := rand.New(rand.NewPCG(uint64(n), 0x2d358dccaa6c78a5))
	lrs := make([]float64, nullRuns)
	xs := make([]float64, n)
	for i := range lrs {
		for j := range xs {
			xs[j] = rng.NormFloat64()
		}
		sort.Float64s(xs)
		_, lrs[i] = bestSplit(xs)
	}
	sort.Float64s(lrs)
	c := lrs[int(math.Ceil((1-LRFalseRate)*nullRuns))-1]
	critical[n] = c
	return c
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
