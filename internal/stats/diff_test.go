package stats

import (
	"math"
	"testing"
)

// TestDiffAt: the interval of a difference agrees with Welch's test at
// its level (it excludes 0 exactly when p < 1 − conf), is the point where
// neither side spreads, and has no bounds below two values a side.
func TestDiffAt(t *testing.T) {
	x, base := []float64{3, 4, 3, 5, 4}, []float64{0, 1, 0, 2, 1}
	for _, conf := range []float64{0.95, 0.99, 0.9999} {
		d, lo, hi := DiffAt(x, base, conf)
		_, _, p := Welch(x, base)
		if math.Abs(d-3) > 1e-12 || math.Abs((lo+hi)/2-3) > 1e-9 || (lo > 0) != (p < 1-conf) {
			t.Errorf("conf %v: %v [%v, %v], Welch's p %v", conf, d, lo, hi, p)
		}
	}
	if d, lo, hi := DiffAt([]float64{2, 2}, []float64{1, 1}, 0.95); d != 1 || lo != 1 || hi != 1 {
		t.Errorf("no spread: %v [%v, %v]", d, lo, hi)
	}
	if d, lo, hi := DiffAt([]float64{2}, []float64{1, 1}, 0.95); d != 1 || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one value: %v [%v, %v]", d, lo, hi)
	}
}
