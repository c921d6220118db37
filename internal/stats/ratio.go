package stats

import "math"

// CIMethod names how a ratio's interval was obtained.
type CIMethod string

const (
	// MethodFieller is Fieller's theorem: the exact interval for the ratio
	// of two normal means, asymmetric around the estimate.
	MethodFieller CIMethod = "fieller"
	// MethodDelta is the first-order (delta method) normal approximation,
	// used when the denominator's mean is not clearly away from zero and
	// Fieller's set is unbounded.
	MethodDelta CIMethod = "delta"
	// MethodNone means no interval could be estimated (fewer than two
	// values on either side, or a zero denominator).
	MethodNone CIMethod = "none"
)

// RatioCI is mean(x)/mean(base) with a 95% interval.
type RatioCI struct {
	Ratio     float64
	Low, High float64
	// DF is the Welch–Satterthwaite degrees of freedom of the t quantile
	// used (NaN with MethodNone).
	DF     float64
	Method CIMethod
}

// Ratio returns mean(x)/mean(base) and its 95% confidence interval for
// independent samples x and base (a tuning and the baseline). The interval
// is Fieller's; when that is unbounded (the baseline mean is not
// significantly different from zero) it falls back to the delta method.
// With fewer than two values on either side the interval collapses to the
// ratio and Method is MethodNone; with an empty side or a zero baseline
// mean everything is NaN.
func Ratio(x, base []float64) RatioCI { return RatioAt(x, base, Confidence) }

// RatioAt is Ratio with a two-sided confidence level conf (0.95 in
// Ratio); the adaptive controller's sequential decisions use a higher one.
func RatioAt(x, base []float64, conf float64) RatioCI {
	nan := math.NaN()
	if len(x) == 0 || len(base) == 0 {
		return RatioCI{Ratio: nan, Low: nan, High: nan, DF: nan, Method: MethodNone}
	}
	a, va := meanVar(x)
	b, vb := meanVar(base)
	if b == 0 {
		return RatioCI{Ratio: nan, Low: nan, High: nan, DF: nan, Method: MethodNone}
	}
	r := a / b
	if len(x) < 2 || len(base) < 2 {
		return RatioCI{Ratio: r, Low: r, High: r, DF: nan, Method: MethodNone}
	}
	if va == 0 && vb == 0 {
		// Identical repeats: no spread at all, the interval is the point.
		return RatioCI{Ratio: r, Low: r, High: r, DF: math.Inf(1), Method: MethodFieller}
	}
	// Satterthwaite df of a - r·b, the pivot Fieller's interval inverts,
	// evaluated at the point estimate.
	num := va + r*r*vb
	den := va*va/float64(len(x)-1) + r*r*r*r*vb*vb/float64(len(base)-1)
	df := num * num / den
	if den == 0 {
		// x has no spread and r == 0 (e.g. every trial moved no data):
		// only the baseline's spread is left.
		df = float64(len(base) - 1)
	}
	t := TQuantileAt(df, conf)
	t2 := t * t

	// Fieller: the set of ρ with (a-ρb)² <= t²(va + ρ²vb), i.e.
	// Aρ² - 2abρ + C <= 0 with A = b² - t²vb, C = a² - t²va.
	A := b*b - t2*vb
	if A > 0 {
		// A > 0 implies a real, bounded interval: the discriminant
		// t²(va·A + a²vb) is non-negative.
		d := t * math.Sqrt(va*A+a*a*vb)
		lo, hi := (a*b-d)/A, (a*b+d)/A
		if lo < 0 && nonNegative(x) && b > 0 {
			// Fieller's set reaches below 0 when x's own interval does;
			// a ratio of quantities that cannot be negative (bitrates,
			// rates) cannot, so cutting the set at 0 loses no coverage,
			// and no decision turns on a lower bound between 0 and it.
			lo = 0
		}
		return RatioCI{Ratio: r, Low: lo, High: hi, DF: df, Method: MethodFieller}
	}
	se := math.Sqrt(va+r*r*vb) / math.Abs(b)
	lo := r - t*se
	if lo < 0 && nonNegative(x) && nonNegative(base) {
		// The same cut as Fieller's: a ratio of quantities that cannot
		// be negative cannot be either (a jitter of 0.045 ms over one of
		// 0.045 ms read "1.000 [-1.616, 3.616]").
		lo = 0
	}
	return RatioCI{Ratio: r, Low: lo, High: r + t*se, DF: df, Method: MethodDelta}
}

func nonNegative(x []float64) bool {
	for _, v := range x {
		if v < 0 {
			return false
		}
	}
	return true
}
