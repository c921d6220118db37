package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Welch performs Welch's unequal-variance t test of mean(x) == mean(y). It
// returns the t statistic, the Welch–Satterthwaite degrees of freedom and
// the two-sided p value. All three are NaN when either sample has fewer
// than two values or when both have zero variance and equal means; with
// zero variance and different means t is ±Inf, df NaN and p 0.
func Welch(x, y []float64) (t, df, p float64) {
	nan := math.NaN()
	if len(x) < 2 || len(y) < 2 {
		return nan, nan, nan
	}
	mx, vx := meanVar(x)
	my, vy := meanVar(y)
	se2 := vx + vy
	if se2 == 0 {
		if mx == my {
			return nan, nan, nan
		}
		return math.Copysign(math.Inf(1), mx-my), nan, 0
	}
	t = (mx - my) / math.Sqrt(se2)
	df = se2 * se2 / (vx*vx/float64(len(x)-1) + vy*vy/float64(len(y)-1))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return t, df, p
}
