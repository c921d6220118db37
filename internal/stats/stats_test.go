package stats

import (
	"math"
	"testing"
)

// Reference values were computed independently with mpmath (30 digits):
// t quantiles by inverting the regularized incomplete beta function, the
// Welch example is the first example of the Wikipedia article "Welch's t-test"
// (t = -2.46, df = 25.0, p = 0.021).

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(want) {
		if !math.IsNaN(got) {
			t.Errorf("%s = %v, want NaN", name, got)
		}
		return
	}
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.9g, want %.9g (±%g)", name, got, want, tol)
	}
}

func TestTQuantile(t *testing.T) {
	for _, tc := range []struct {
		df, want float64
	}{
		{1, 12.7062047361747},
		{7, 2.36462425159279},
		{9, 2.26215716279821},
		{18, 2.10092204024104},
		{math.Inf(1), 1.95996398454005},
	} {
		near(t, "t(0.975)", TQuantile(tc.df), tc.want, 1e-9)
	}
}

func TestDescribe(t *testing.T) {
	s := Describe([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || s.Degenerate {
		t.Fatalf("N=%d Degenerate=%v", s.N, s.Degenerate)
	}
	near(t, "mean", s.Mean, 5, 1e-12)
	near(t, "sd", s.SD, 2.13808993529940, 1e-12)
	near(t, "ci low", s.CI95Low, 3.21251208176379, 1e-9)
	near(t, "ci high", s.CI95High, 6.78748791823621, 1e-9)
}

func TestDescribeSmall(t *testing.T) {
	one := Describe([]float64{3.5})
	if !one.Degenerate || one.N != 1 || one.Mean != 3.5 || one.CI95Low != 3.5 || one.CI95High != 3.5 || !math.IsNaN(one.SD) {
		t.Errorf("n=1: %+v", one)
	}
	none := Describe(nil)
	if !none.Degenerate || none.N != 0 || !math.IsNaN(none.Mean) || !math.IsNaN(none.CI95Low) {
		t.Errorf("n=0: %+v", none)
	}
	// Constant values: zero spread is a measurement, not degenerate.
	c := Describe([]float64{2, 2, 2})
	if c.Degenerate || c.SD != 0 || c.CI95Low != 2 || c.CI95High != 2 {
		t.Errorf("constant: %+v", c)
	}
}

func TestWelch(t *testing.T) {
	x := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	y := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	tv, df, p := Welch(x, y)
	near(t, "t", tv, -2.45535639828601, 1e-9)
	near(t, "df", df, 24.9885292902314, 1e-9)
	near(t, "p", p, 0.0213780014628670, 1e-9)

	// Symmetry: swapping the samples flips t only.
	tv2, df2, p2 := Welch(y, x)
	near(t, "t swapped", tv2, -tv, 1e-12)
	near(t, "df swapped", df2, df, 1e-12)
	near(t, "p swapped", p2, p, 1e-12)
}

func TestWelchDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		x, y     []float64
		t, df, p float64
	}{
		{"too few", []float64{1}, []float64{1, 2}, math.NaN(), math.NaN(), math.NaN()},
		{"equal constants", []float64{1, 1}, []float64{1, 1, 1}, math.NaN(), math.NaN(), math.NaN()},
		{"different constants", []float64{2, 2}, []float64{1, 1}, math.Inf(1), math.NaN(), 0},
	} {
		tv, df, p := Welch(tc.x, tc.y)
		if !(tv == tc.t || math.IsNaN(tv) && math.IsNaN(tc.t)) {
			t.Errorf("%s: t = %v, want %v", tc.name, tv, tc.t)
		}
		near(t, tc.name+" df", df, tc.df, 0)
		near(t, tc.name+" p", p, tc.p, 0)
	}
}

func TestDescribeNonNeg(t *testing.T) {
	// n = 2, wide: the t interval reaches below zero.
	xs := []float64{0.2, 1.0}
	d, c := Describe(xs), DescribeNonNeg(xs)
	if !(d.CI95Low < 0) {
		t.Fatalf("test data: Describe low %v, want < 0", d.CI95Low)
	}
	if c.CI95Low != 0 || c.CI95High != d.CI95High || c.Mean != d.Mean || c.SD != d.SD {
		t.Errorf("DescribeNonNeg = %+v, want Describe %+v with low 0", c, d)
	}
	// An interval above zero is untouched.
	tight := []float64{10, 10.5, 9.5}
	if a, b := Describe(tight), DescribeNonNeg(tight); a != b {
		t.Errorf("tight: %+v != %+v", a, b)
	}
	// A negative observation: signed quantity, interval as computed.
	signed := []float64{-0.5, 1.0}
	if a, b := Describe(signed), DescribeNonNeg(signed); a.CI95Low != b.CI95Low {
		t.Errorf("signed: low %v, want %v", b.CI95Low, a.CI95Low)
	}
}

// A share's interval stops at its whole, unless an observation is beyond
// it.
func TestDescribeWithin(t *testing.T) {
	idle := []float64{99.5, 92, 98}
	d, c := Describe(idle), DescribeWithin(idle, 100)
	if !(d.CI95High > 100) {
		t.Fatalf("test data: Describe high %v, want > 100", d.CI95High)
	}
	if c.CI95High != 100 || c.CI95Low != d.CI95Low || c.Mean != d.Mean {
		t.Errorf("DescribeWithin = %+v, want Describe %+v with high 100", c, d)
	}
	if over := []float64{101, 92, 98}; DescribeWithin(over, 100).CI95High != Describe(over).CI95High {
		t.Error("an observation above the bound, and the interval was cut at it")
	}
	if both := []float64{1, 99}; DescribeWithin(both, 100) != (Summary{N: 2, Mean: 50, SD: Describe(both).SD, CI95Low: 0, CI95High: 100}) {
		t.Errorf("n=2 across the range: %+v, want [0, 100]", DescribeWithin(both, 100))
	}
}

func TestLevelText(t *testing.T) {
	for c, want := range map[float64]string{0.95: "95%", 1 - 0.05/6: "99.17%", 1 - 0.05/4: "98.75%", 0.9999: "99.99%"} {
		if got := LevelText(c); got != want {
			t.Errorf("LevelText(%g) = %q, want %q", c, got, want)
		}
	}
}
