// Package stats computes the few statistics a cnibench report needs: mean
// and sample standard deviation with a Student t 95% confidence interval,
// the ratio of two means with a 95% interval (Fieller's theorem, delta
// method as fallback), and Welch's unequal-variance t test.
//
// Trials of one cell are treated as independent draws; for Ratio and
// Welch, trials of two tunings are independent samples (they ran at
// different times, on the same machine). paired.go instead pairs the
// trials of two configurations from the same interleaved round, and
// decide.go chooses between the two and turns an interval into a
// decision. docs/statistics.md gives the formulas and why they were
// chosen; keep the two in step.
package stats

import (
	"math"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the two-sided coverage of every interval in this package.
const Confidence = 0.95

// LevelText writes a confidence level as a percentage with no trailing
// zeros: "95%" for a fixed design's one look, "99.17%" for six looks.
func LevelText(c float64) string {
	return strconv.FormatFloat(math.Round(10000*c)/100, 'f', -1, 64) + "%"
}

// Summary describes one sample.
type Summary struct {
	N    int
	Mean float64
	// SD is the sample standard deviation (n-1 denominator); NaN when N < 2.
	SD float64
	// CI95Low and CI95High bound the 95% Student t interval of the mean.
	CI95Low, CI95High float64
	// Degenerate is set when N < 2: no spread can be estimated, so the
	// interval collapses to the mean (NaN when N == 0). Reports must not
	// present such an interval as a measured uncertainty.
	Degenerate bool
}

// Describe summarizes xs. Values are used as given: callers drop NaN or
// infinite values first if they mean "missing".
func Describe(xs []float64) Summary {
	n := len(xs)
	switch n {
	case 0:
		nan := math.NaN()
		return Summary{Mean: nan, SD: nan, CI95Low: nan, CI95High: nan, Degenerate: true}
	case 1:
		return Summary{N: 1, Mean: xs[0], SD: math.NaN(), CI95Low: xs[0], CI95High: xs[0], Degenerate: true}
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	h := TQuantile(float64(n-1)) * sd / math.Sqrt(float64(n))
	return Summary{N: n, Mean: mean, SD: sd, CI95Low: mean - h, CI95High: mean + h}
}

// DescribeNonNeg is Describe for a quantity that cannot be negative
// (every cnibench metric is a rate, count, time, size or share): when no
// observation is negative, the interval's lower bound is raised to 0.
// Intersecting a confidence interval with the set where the true mean
// must lie keeps its coverage, and a bitrate interval reaching below zero
// (n = 2 gives t = 12.7) says nothing a reader can use. A negative
// observation means the quantity is signed after all, and the interval is
// left as computed.
func DescribeNonNeg(xs []float64) Summary { return DescribeWithin(xs, math.Inf(1)) }

// DescribeWithin is DescribeNonNeg for a quantity that also cannot exceed
// hi (a share of a whole, 100 for a percentage): when no observation
// exceeds hi, the upper bound is lowered to it, for the same reason (an
// idle CPU's interval reaching 104% says nothing). An observation beyond
// hi means the bound was wrong, and the interval's top is left alone.
func DescribeWithin(xs []float64, hi float64) Summary {
	d := Describe(xs)
	below, above := false, false
	for _, x := range xs {
		below = below || x < 0
		above = above || x > hi
	}
	if !below && d.CI95Low < 0 {
		d.CI95Low = 0
	}
	if !above && d.CI95High > hi {
		d.CI95High = hi
	}
	return d
}

// TQuantile returns the two-sided 95% critical value of Student's t with df
// degrees of freedom, t(0.975, df). An infinite df gives the normal value.
func TQuantile(df float64) float64 { return TQuantileAt(df, Confidence) }

// TQuantileAt is the two-sided critical value of Student's t for
// confidence level conf: t(1 − (1−conf)/2, df).
func TQuantileAt(df, conf float64) float64 {
	p := 1 - (1-conf)/2
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// meanVar returns the mean of xs and the estimated variance of that mean
// (s²/n).
func meanVar(xs []float64) (mean, varMean float64) {
	mean, v := stat.MeanVariance(xs, nil)
	return mean, v / float64(len(xs))
}
