package stats

import (
	"math"
	"strings"
	"testing"
)

func ci(lo, hi float64) RatioCI {
	return RatioCI{Ratio: math.Sqrt(lo * hi), Low: lo, High: hi, DF: 9, Method: MethodPairedT}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ci      RatioCI
		margin  float64
		dir     Direction
		verdict Verdict
		sig     bool
	}{
		{"above 1", ci(1.03, 1.10), 0.02, HigherIsBetter, Better, true},
		{"above 1, latency", ci(1.03, 1.10), 0.02, LowerIsBetter, Worse, true},
		{"below 1", ci(0.90, 0.97), 0.02, HigherIsBetter, Worse, true},
		{"below 1, latency", ci(0.90, 0.97), 0.02, LowerIsBetter, Better, true},
		{"within margin", ci(0.985, 1.015), 0.02, HigherIsBetter, Equal, false},
		{"within margin, significant", ci(1.005, 1.015), 0.02, HigherIsBetter, Equal, true},
		{"margin edges", ci(1/1.02, 1.02), 0.02, HigherIsBetter, Equal, false},
		{"covers 1, too wide", ci(0.97, 1.05), 0.02, HigherIsBetter, Undecided, false},
		{"covers 1, no margin", ci(0.999, 1.001), 0, HigherIsBetter, Undecided, false},
		{"excludes 1 partly beyond margin", ci(1.01, 1.03), 0.02, HigherIsBetter, Better, true},
		{"no interval", RatioCI{Ratio: 1, Low: 1, High: 1, Method: MethodNone}, 0.02, HigherIsBetter, Undecided, false},
		{"NaN bounds", RatioCI{Ratio: 1, Low: math.NaN(), High: 2, Method: MethodFieller}, 0.02, HigherIsBetter, Undecided, false},
	} {
		d := Decide(tc.ci, tc.margin, tc.dir)
		if d.Verdict != tc.verdict || d.Significant != tc.sig || d.Reason == "" {
			t.Errorf("%s: %+v, want %s significant=%v", tc.name, d, tc.verdict, tc.sig)
		}
	}
	// A significant difference says whether it is surely beyond the
	// margin or may still be within it.
	for _, tc := range []struct {
		ci   RatioCI
		want string
	}{
		{ci(0.90, 0.97), "lies below 1 and beyond the ±2% margin"},
		{ci(0.97, 0.99), "lies below 1, partly within the ±2% margin (the difference may be smaller than the margin)"},
		{ci(1.01, 1.03), "lies above 1, partly within the ±2% margin"},
		{ci(1.03, 1.10), "lies above 1 and beyond the ±2% margin"},
		// Intervals are written as the CLI and report write ratios: three
		// decimals, however many digits lie before the point.
		{ci(0.6972, 1.398), "interval [0.697, 1.398] covers 1"},
		{ci(0.99, 1.01), "interval [0.990, 1.010] lies within the ±2% margin [0.980, 1.020]"},
	} {
		if d := Decide(tc.ci, 0.02, HigherIsBetter); !strings.Contains(d.Reason, tc.want) {
			t.Errorf("%v: reason %q, want %q", tc.ci, d.Reason, tc.want)
		}
	}
}

// TestDecideZeroWidth: trials without spread give a zero-width interval
// (x = [103, 103] against [100, 100]); it decides, and its reason says
// that the certainty is only as good as the measurement's lack of noise.
func TestDecideZeroWidth(t *testing.T) {
	c := Compare([]float64{103, 103}, []float64{100, 100}, 0.02, HigherIsBetter)
	if c.Decision.Verdict != Better || !strings.HasSuffix(c.Decision.Reason, ZeroWidthNote) {
		t.Errorf("identical trials: %+v, want better with %q", c.Decision, ZeroWidthNote)
	}
	if d := Decide(ci(1.03, 1.05), 0.02, HigherIsBetter); strings.Contains(d.Reason, "zero-width") {
		t.Errorf("an interval with width: %q", d.Reason)
	}
}

func TestChoose(t *testing.T) {
	fieller := RatioCI{Ratio: 1.05, Low: 0.95, High: 1.16, DF: 10, Method: MethodFieller}
	narrow := PairedCI{RatioCI: RatioCI{Ratio: 1.05, Low: 1.02, High: 1.08, DF: 4, Method: MethodPairedT}, N: 5}
	wide := PairedCI{RatioCI: RatioCI{Ratio: 1.05, Low: 0.9, High: 1.2, DF: 4, Method: MethodPairedT}, N: 5}
	none := PairedCI{RatioCI: RatioCI{Ratio: 1.05, Low: 1.05, High: 1.05, Method: MethodNone}, N: 2, Reason: "2 complete pairs; a paired interval needs at least 3"}
	unbounded := PairedRatio([]float64{2, 1, 3}, []float64{1, 1, -1})
	delta := RatioCI{Ratio: 12, Low: -30, High: 55, DF: 2, Method: MethodDelta}
	single := RatioCI{Ratio: 2, Low: 2, High: 2, Method: MethodNone}
	for _, tc := range []struct {
		name   string
		u      RatioCI
		p      PairedCI
		method CIMethod
		low    float64
		reason string
	}{
		{"paired narrower", fieller, narrow, MethodPairedT, 1.02, "paired (paired-t)"},
		// The rule is fixed before the data are seen: a valid paired
		// interval decides even where Fieller's is narrower.
		{"paired wider", fieller, wide, MethodPairedT, 0.9, "paired (paired-t)"},
		{"paired too few", fieller, none, MethodFieller, 0.95, "unpaired (fieller); paired not valid: 2 complete pairs; a paired interval needs at least 3"},
		{"paired unbounded", fieller, unbounded, MethodFieller, 0.95, "paired not valid: the baseline's mean over the 3 pairs is not clearly away from 0"},
		{"fieller unbounded", delta, wide, MethodPairedT, 0.9, "paired (paired-t)"},
		{"unpaired too few", single, narrow, MethodPairedT, 1.02, "paired (paired-t)"},
		{"neither", delta, none, MethodNone, math.NaN(), "no valid interval: paired: 2 complete pairs; a paired interval needs at least 3; unpaired: the baseline mean's interval covers 0"},
		// Three values a side, but the baseline's mean is 0.
		{"neither, zero baseline", Ratio([]float64{5, 6, 7}, []float64{0, 0, 0}), none, MethodNone, math.NaN(), "unpaired: no ratio: a side has no value, or the baseline's mean is 0"},
		{"neither, single values", single, none, MethodNone, math.NaN(), "unpaired: fewer than 2 values on a side"},
	} {
		c := Choose(tc.u, tc.p)
		if c.Method != tc.method || !strings.Contains(c.Reason, tc.reason) {
			t.Errorf("%s: method %s reason %q, want %s and %q", tc.name, c.Method, c.Reason, tc.method, tc.reason)
		}
		near(t, tc.name+" low", c.Low, tc.low, 0)
	}
}

func TestCompare(t *testing.T) {
	x := append(pairedX(), math.NaN())
	base := append(append([]float64{}, pairedBase...), 10)
	c := Compare(x, base, 0.02, HigherIsBetter)
	if c.Paired.N != 5 || c.Chosen.Method != MethodPairedT || c.Decision.Verdict != Better {
		t.Errorf("got paired N=%d chosen %s decision %+v", c.Paired.N, c.Chosen.Method, c.Decision)
	}
	// The unpaired side uses every finite value, the extra baseline too.
	if u := Ratio(pairedX(), base); c.Unpaired != u {
		t.Errorf("unpaired %+v, want %+v", c.Unpaired, u)
	}
	// Two rounds, one value on a side: nothing valid, and the decision
	// says why.
	c = Compare([]float64{1, math.NaN()}, []float64{1, 2}, 0.02, HigherIsBetter)
	if c.Decision.Verdict != Undecided || !strings.Contains(c.Decision.Reason, "no valid interval: paired: 1 complete pairs") {
		t.Errorf("decision %+v", c.Decision)
	}
}

func TestRelHalfWidth(t *testing.T) {
	near(t, "rel", RelHalfWidth(2, 1.9, 2.1), 0.05, 1e-12)
	near(t, "zero estimate", RelHalfWidth(0, -1, 1), math.NaN(), 0)
	near(t, "nan bound", RelHalfWidth(1, math.NaN(), 1), math.NaN(), 0)
}

func TestAtLevel(t *testing.T) {
	// mpmath: t(0.995, 9) and t(1 − 0.05/14, 2).
	near(t, "t 99% df 9", TQuantileAt(9, 0.99), 3.24983554159213, 1e-9)
	near(t, "t 99.29% df 2", TQuantileAt(2, 1-0.05/7), 11.7686784353510, 1e-7)
	x, base := pairedX(), pairedBase
	if a, b := RatioAt(x, base, Confidence), Ratio(x, base); a != b {
		t.Errorf("RatioAt 0.95 %+v != Ratio %+v", a, b)
	}
	lo, hi := PairedRatio(x, base), PairedRatioAt(x, base, 0.99)
	if !(hi.Low < lo.Low && hi.High > lo.High && hi.Ratio == lo.Ratio) {
		t.Errorf("99%% interval [%v, %v] does not contain the 95%% one [%v, %v]", hi.Low, hi.High, lo.Low, lo.High)
	}
	// The 99% bounds are the roots of the same paired t statistic at
	// ±t(0.995, 4) = 4.60409487134999 (mpmath, as in TestPairedRatio).
	near(t, "99% low", hi.Low, 0.992055866129941, 1e-11)
	near(t, "99% high", hi.High, 1.09364121869431, 1e-11)
	if c := CompareAt(x, base, 0.02, HigherIsBetter, 0.99); c.Chosen.Low != hi.Low {
		t.Errorf("CompareAt chose %+v, want the 99%% paired interval", c.Chosen)
	}
}
