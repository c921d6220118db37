package stats

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// pairedExample: per-round ratios exp(0.05 0.08 0.02 0.06 0.04) on a
// baseline that varies by 30% between rounds. Reference values with
// mpmath (30 digits), found as the roots of the paired t statistic of
// x_k − ρ·base_k at ±t(0.975, 4) = 2.77644510519779 (not from the
// quadratic the code solves).
var (
	pairedBase = []float64{10, 12, 9, 11, 10.5}
	pairedLR   = []float64{0.05, 0.08, 0.02, 0.06, 0.04}
)

func pairedX() []float64 {
	x := make([]float64, len(pairedBase))
	for k, b := range pairedBase {
		x[k] = b * math.Exp(pairedLR[k])
	}
	return x
}

func TestPairedRatio(t *testing.T) {
	got := PairedRatio(pairedX(), pairedBase)
	if got.Method != MethodPairedT || got.N != 5 || got.Incomplete != 0 || got.Reason != "" {
		t.Fatalf("got %+v", got)
	}
	// The ratio of the means over the pairs (not the geometric mean of
	// the per-round ratios, 1.05127), and the set of ρ where the paired
	// t test of x − ρ·base does not reject.
	near(t, "ratio", got.Ratio, 1.05338443765942, 1e-12)
	near(t, "low", got.Low, 1.01994596464530, 1e-11)
	near(t, "high", got.High, 1.07939860410532, 1e-11)
	near(t, "df", got.DF, 4, 0)

	// The unpaired interval of the same data is far wider: the baseline's
	// round-to-round spread (±10%) is noise to it, not to the pairs.
	u := Ratio(pairedX(), pairedBase)
	if !(u.High-u.Low > 5*(got.High-got.Low)) {
		t.Errorf("unpaired width %v, paired %v: want unpaired > 5x paired", u.High-u.Low, got.High-got.Low)
	}
}

func TestPairedRatioMissingRounds(t *testing.T) {
	nan := math.NaN()
	x := append(pairedX(), 20, nan)
	base := append(append([]float64{}, pairedBase...), nan, 7)
	// Insert a missing trial in the middle too: round 2 of x.
	x[2] = math.Inf(1)
	base = append(base, 3) // round 7 exists for base only
	got := PairedRatio(x, base)
	if got.N != 4 || got.Incomplete != 4 {
		t.Fatalf("N=%d Incomplete=%d, want 4 and 4", got.N, got.Incomplete)
	}
	want := PairedRatio([]float64{x[0], x[1], x[3], x[4]}, []float64{base[0], base[1], base[3], base[4]})
	if got.RatioCI != want.RatioCI {
		t.Errorf("got %+v, want %+v (complete rounds only)", got.RatioCI, want.RatioCI)
	}
}

func TestPairedRatioInvalid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		x, base []float64
		ratio   float64
		reason  string
	}{
		{"two pairs", []float64{2, 4}, []float64{1, 2}, 2, "2 complete pairs"},
		{"no pairs", []float64{1, math.NaN()}, []float64{math.NaN(), 1}, math.NaN(), "0 complete pairs"},
		{"zero baseline mean", []float64{2, 1, 3}, []float64{1, 0, -1}, math.NaN(), "mean over the 3 pairs is 0"},
		// The baseline's mean over three pairs is 1/3 with a standard
		// error of 0.67: Fieller's set is the whole line or the outside
		// of an interval.
		{"baseline mean near 0", []float64{2, 1, 3}, []float64{1, 1, -1}, 6, "not clearly away from 0"},
	} {
		got := PairedRatio(tc.x, tc.base)
		if got.Method != MethodNone || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: method %s reason %q, want none and %q", tc.name, got.Method, got.Reason, tc.reason)
		}
		near(t, tc.name+" ratio", got.Ratio, tc.ratio, 1e-12)
	}
	// The same ratio in every round: no spread of x − 2·base, the
	// interval is the point.
	c := PairedRatio([]float64{20, 22, 24}, []float64{10, 11, 12})
	if c.Method != MethodPairedT {
		t.Errorf("constant ratio: %+v", c)
	}
	near(t, "constant ratio", c.Ratio, 2, 1e-12)
	near(t, "constant ratio low", c.Low, 2, 1e-12)
	near(t, "constant ratio high", c.High, 2, 1e-12)
}

// TestPairedRatioZeroValue: a zero is an observation (a trial that moved
// no data), not a gap, and pairs like any value (the log-ratio interval
// before refused the whole comparison). The lower bound, -0.404 by
// mpmath, is cut at 0: x has no negative value and the baseline's mean
// is positive.
func TestPairedRatioZeroValue(t *testing.T) {
	got := PairedRatio([]float64{2, 0, 3, 4}, []float64{1, 1.2, 0.9, 1.1})
	if got.Method != MethodPairedT || got.N != 4 {
		t.Fatalf("got %+v", got)
	}
	near(t, "ratio", got.Ratio, 2.14285714285714, 1e-12)
	near(t, "low", got.Low, 0, 0)
	near(t, "high", got.High, 5.41778117008225, 1e-11)
	// With a negative value in x nothing is cut.
	neg := PairedRatio([]float64{2, -0.1, 3, 4}, []float64{1, 1.2, 0.9, 1.1})
	if !(neg.Low < 0) {
		t.Errorf("negative value: low %v, want below 0", neg.Low)
	}
}

func TestPairedBootstrap(t *testing.T) {
	// Twelve rounds: the bootstrap is defined, deterministic in the seed, close to
	// the t interval for near-normal log-ratios and contains the estimate.
	lr := []float64{0.05, 0.08, 0.02, 0.06, 0.04, 0.03, 0.07, 0.05, 0.01, 0.09, 0.05, 0.04}
	base := make([]float64, len(lr))
	x := make([]float64, len(lr))
	for k := range lr {
		base[k] = 10 + float64(k%4)
		x[k] = base[k] * math.Exp(lr[k])
	}
	a := PairedBootstrap(x, base, 4000, 7)
	b := PairedBootstrap(x, base, 4000, 7)
	if a.Low != b.Low || a.High != b.High || a.Ratio != b.Ratio {
		t.Fatalf("same seed, different intervals: %+v vs %+v", a, b)
	}
	if a.Method != MethodPairedBootstrap || a.N != 12 {
		t.Fatalf("got %+v", a)
	}
	if !(a.Low < a.Ratio && a.Ratio < a.High) {
		t.Errorf("interval [%v, %v] does not contain %v", a.Low, a.High, a.Ratio)
	}
	pt := PairedRatio(x, base)
	near(t, "ratio", a.Ratio, pt.Ratio, 1e-12)
	// Expanded to t(11) tails, the bootstrap is about as wide as the t
	// interval for near-normal log-ratios: within 25% here.
	wb, wt := math.Log(a.High/a.Low), math.Log(pt.High/pt.Low)
	if wb > 1.25*wt || wb < 0.75*wt {
		t.Errorf("bootstrap log-width %v, t log-width %v", wb, wt)
	}
	if c := PairedBootstrap(x, base, 4000, 8); c.Low == a.Low && c.High == a.High {
		t.Errorf("different seeds gave the identical interval %+v", c)
	}
	if s := PairedBootstrap(x[:9], base[:9], 0, 1); s.Method != MethodNone || !strings.Contains(s.Reason, "at least 10") {
		t.Errorf("9 pairs: %+v", s)
	}
	// A resample of baseline zeros would divide by 0: no interval.
	zero := append([]float64{}, base...)
	zero[3] = 0
	if s := PairedBootstrap(x, zero, 0, 1); s.Method != MethodNone || !strings.Contains(s.Reason, "pair 4 has a baseline value <= 0") {
		t.Errorf("a baseline zero: %+v", s)
	}
}

func TestQuantileSorted(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {1, 5}, {0.5, 3}, {0.125, 1.5}, {-0.1, 1}, {1.1, 5}} {
		near(t, "quantile", quantileSorted(xs, tc.p), tc.want, 1e-12)
	}
}

// A split round's two values each get a position of their own, NaN on
// the other side; rounds not split stay pairs, and without a split
// round the slices come back as given.
func TestUnpair(t *testing.T) {
	nan := math.NaN()
	x, b := Unpair([]float64{1, 2, 3}, []float64{4, 5, 6}, []bool{false, true, false})
	if fmt.Sprint(x) != fmt.Sprint([]float64{1, 2, nan, 3}) || fmt.Sprint(b) != fmt.Sprint([]float64{4, nan, 5, 6}) {
		t.Errorf("split round 2: %v %v", x, b)
	}
	in := []float64{1, 2}
	if x, _ := Unpair(in, []float64{3, 4}, nil); &x[0] != &in[0] {
		t.Errorf("no split round: %v, want the slice as given", x)
	}
}

// CompareSplitAt counts a split round once among the incomplete rounds,
// as a round missing a side (Unpair gives it two positions), and
// leaves it out of the pairs and in the unpaired interval.
func TestCompareSplitAtCountsASplitRoundOnce(t *testing.T) {
	nan := math.NaN()
	x, b := []float64{10, 11, 12, 13, 14}, []float64{9, 10, nan, 12, 13}
	c := CompareSplitAt(x, b, []bool{false, true, false, false, false}, 0.02, HigherIsBetter, Confidence)
	if c.Paired.N != 3 || c.Paired.Incomplete != 2 {
		t.Errorf("round 2 split, round 3 missing a side: %d pairs, %d incomplete; want 3 and 2", c.Paired.N, c.Paired.Incomplete)
	}
	if want := Ratio(x, []float64{9, 10, 12, 13}); c.Unpaired.Ratio != want.Ratio {
		t.Errorf("unpaired ratio %v, want %v over every value", c.Unpaired.Ratio, want.Ratio)
	}
	if c := CompareSplitAt(x, b, nil, 0.02, HigherIsBetter, Confidence); c.Paired.N != 4 || c.Paired.Incomplete != 1 {
		t.Errorf("no split round: %d pairs, %d incomplete; want 4 and 1", c.Paired.N, c.Paired.Incomplete)
	}
}
