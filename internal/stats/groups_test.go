package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The calibration of TwoGroups' thresholds: a share of simulated runs
// (fixed seed, deterministic) flagged, for samples of one normal value
// (must be rare: a false remark in the report) and of two equally likely
// values 8 standard deviations apart (must be common). Values sit around
// 100 with sd 1, so MinRelGap (2 units) does not decide either case.
func flagged(r *rand.Rand, n int, sep float64) float64 {
	const runs = 4000
	hits := 0
	for range runs {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 + r.NormFloat64()
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
		if f := flagged(r, n, 0); f > 0.0075 {
			t.Errorf("one normal value, %d trials: flagged in %.2f%% of runs, want under 0.75%%", n, 100*f)
		}
	}
	for _, n := range []int{12, 15, 20, 30} {
		if f := flagged(r, n, 8); f < 0.85 {
			t.Errorf("two values 8 sd apart, %d trials: flagged in %.1f%% of runs, want over 85%%", n, 100*f)
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
