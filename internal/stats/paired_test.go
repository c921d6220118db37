package stats

import (
	"math"
	"strings"
	"testing"
)

// pairedExample: log-ratios 0.05 0.08 0.02 0.06 0.04 on a baseline that
// varies by 30% between rounds. Reference values with mpmath (30 digits):
// mean 0.05, s = 0.0223607, t(0.975, 4) = 2.77644510519779.
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
	near(t, "ratio", got.Ratio, 1.05127109637602, 1e-12)
	near(t, "low", got.Low, 1.02248460127945, 1e-11)
	near(t, "high", got.High, 1.08086803135493, 1e-11)
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
		{"zero value", []float64{2, 0, 3}, []float64{1, 1, 1}, math.NaN(), "round 2 has a value <= 0"},
		{"negative base", []float64{2, 1, 3}, []float64{1, 1, -1}, math.NaN(), "round 3 has"},
	} {
		got := PairedRatio(tc.x, tc.base)
		if got.Method != MethodNone || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: method %s reason %q, want none and %q", tc.name, got.Method, got.Reason, tc.reason)
		}
		near(t, tc.name+" ratio", got.Ratio, tc.ratio, 1e-12)
	}
	// Identical log-ratios: no spread, the interval is the point.
	c := PairedRatio([]float64{2, 4, 6}, []float64{1, 2, 3})
	if c.Method != MethodPairedT || c.Low != c.Ratio || c.High != c.Ratio {
		t.Errorf("constant ratio: %+v", c)
	}
	near(t, "constant ratio", c.Ratio, 2, 1e-12)
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
}

func TestQuantileSorted(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {1, 5}, {0.5, 3}, {0.125, 1.5}, {-0.1, 1}, {1.1, 5}} {
		near(t, "quantile", quantileSorted(xs, tc.p), tc.want, 1e-12)
	}
}
