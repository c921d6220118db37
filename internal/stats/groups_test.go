package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The calibration of TwoGroups' thresholds: a share of simulated runs
// (fixed seed, deterministic) flagged, for samples of one normal value
// and of a heavy-tailed one (Student t, 3 degrees of freedom; must be
// rare: a false remark in the report) and of two equally likely values 6
// and 8 standard deviations apart (must be common). Values sit around
// 100 with sd 1, so MinRelGap (2 units) does not decide any case.
func flagged(r *rand.Rand, n int, sep float64, heavy bool) float64 {
	const runs = 4000
	hits := 0
	for range runs {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 + r.NormFloat64()
			if heavy {
				chi2 := 0.0
				for range 3 {
					z := r.NormFloat64()
					chi2 += z * z
				}
				xs[i] = 100 + r.NormFloat64()/math.Sqrt(chi2/3)
			}
			if sep > 0 && r.IntN(2) == 1 {
				xs[i] += sep
			}
		}
		if _, ok := TwoGroups(xs); ok {
			hits++
		}
	}
	return float64(hits) / runs
}

func TestTwoGroupsCalibration(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{6, 8, 10, 15, 20, 30, 40} {
		if f := flagged(r, n, 0, false); f > 0.0075 {
			t.Errorf("one normal value, %d trials: flagged in %.2f%% of runs, want under 0.75%%", n, 100*f)
		}
		if f := flagged(r, n, 0, true); f > 0.015 {
			t.Errorf("one heavy-tailed value, %d trials: flagged in %.2f%% of runs, want under 1.5%%", n, 100*f)
		}
	}
	for _, c := range []struct {
		n        int
		sep, min float64
	}{{12, 8, 0.85}, {15, 8, 0.9}, {20, 8, 0.95}, {30, 8, 0.95}, {20, 6, 0.75}, {30, 6, 0.95}} {
		if f := flagged(r, c.n, c.sep, false); f < c.min {
			t.Errorf("two values %g sd apart, %d trials: flagged in %.1f%% of runs, want over %.0f%%", c.sep, c.n, 100*f, 100*c.min)
		}
	}
}

func TestTwoGroupsCases(t *testing.T) {
	for _, c := range []struct {
		name   string
		xs     []float64
		ok     bool
		inTime bool
		lowN   int
	}{
		{"alternating values", []float64{10, 12, 10.1, 12.1, 9.9, 11.9, 10, 12}, true, false, 4},
		{"a level shift", []float64{10, 10.1, 9.9, 10, 12, 12.1, 11.9, 12}, true, true, 4},
		{"two far trials are outliers", []float64{10, 10.1, 9.9, 10, 10.05, 9.95, 14, 14.1}, false, false, 0},
		{"too few trials", []float64{10, 12, 10, 12, 10}, false, false, 0},
		{"groups 1% apart", []float64{100, 101, 100, 101, 100, 101}, false, false, 0},
		{"one value", []float64{5, 5, 5, 5, 5, 5}, false, false, 0},
		{"NaN ignored", []float64{10, 12, 10, math.NaN(), 12, 10.1, 12, 10, 11.9}, true, false, 4},
		// Benchmark run 4's fixed design (docs/statistics.md), bitrate in
		// Gbit/s, in the order the trials ran: rps+ at one pair, a tight
		// group at 12.7 beside a wide one at 16.9 (4.4 pooled sd: only the
		// likelihood ratio finds it), and rfs at four pairs, one spread.
		{"a tight group beside a wide one", []float64{18.34, 15.54, 17.46, 18.71, 16.07, 17.23, 12.71, 17.48, 15.95, 12.88,
			18.33, 12.55, 12.01, 12.65, 15.72, 15.33, 12.67, 17.53, 13.24, 16.23}, true, false, 7},
		{"one wide spread", []float64{6.46, 7.03, 6.85, 6.52, 6.54, 7.09, 6.26, 6.86, 5.86, 6.40,
			6.91, 6.79, 6.99, 6.23, 6.59, 6.27, 6.25, 6.35, 6.59, 6.10}, false, false, 0},
	} {
		g, ok := TwoGroups(c.xs)
		if ok != c.ok || ok && (g.InTime != c.inTime || g.LowN != c.lowN || g.LowN+g.HighN != finiteCount(c.xs)) {
			t.Errorf("%s: %+v, %v; want flagged %v, in time %v, %d low", c.name, g, ok, c.ok, c.inTime, c.lowN)
		}
	}
}

func finiteCount(xs []float64) int {
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			n++
		}
	}
	return n
}
