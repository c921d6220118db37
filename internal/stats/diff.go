package stats

import "math"

// DiffAt is mean(x) − mean(base) for independent samples and its
// two-sided interval at confidence conf: Welch's, the difference ± t at
// the Welch–Satterthwaite degrees of freedom times its standard error
// (Welch tests the same difference). The bounds are NaN with fewer than
// two values on a side, and the difference itself with an empty side;
// where neither side spreads the interval is the point.
func DiffAt(x, base []float64, conf float64) (d, low, high float64) {
	nan := math.NaN()
	if len(x) == 0 || len(base) == 0 {
		return nan, nan, nan
	}
	mx, vx := meanVar(x)
	mb, vb := meanVar(base)
	d = mx - mb
	if len(x) < 2 || len(base) < 2 {
		return d, nan, nan
	}
	se2 := vx + vb
	if se2 == 0 {
		return d, d, d
	}
	df := se2 * se2 / (vx*vx/float64(len(x)-1) + vb*vb/float64(len(base)-1))
	h := TQuantileAt(df, conf) * math.Sqrt(se2)
	return d, d - h, d + h
}
