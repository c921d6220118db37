package stats

import (
	"math"
	"testing"
)

func TestRatioFieller(t *testing.T) {
	for _, tc := range []struct {
		name             string
		x, base          []float64
		r, df, low, high float64
	}{
		{
			// x = 2·base gives va = r²vb, so the Satterthwaite df is
			// exactly 2(n-1) = 18 and t = 2.100922 from any table.
			name: "x is twice base",
			base: []float64{9.1, 10.4, 9.8, 10.9, 9.5, 10.2, 10.0, 9.7, 10.6, 9.8},
			x:    []float64{18.2, 20.8, 19.6, 21.8, 19.0, 20.4, 20.0, 19.4, 21.2, 19.6},
			r:    2, df: 18,
			low: 1.90145702387633, high: 2.10364996409204,
		},
		{
			name: "unequal sizes",
			x:    []float64{1.10, 1.32, 0.95, 1.21, 1.05},
			base: []float64{1.00, 0.90, 1.12, 0.97},
			r:    1.12882205513784, df: 6.96845437652386,
			low: 0.945218256242639, high: 1.33951790015058,
		},
	} {
		got := Ratio(tc.x, tc.base)
		if got.Method != MethodFieller {
			t.Errorf("%s: method %s, want fieller", tc.name, got.Method)
		}
		near(t, tc.name+" ratio", got.Ratio, tc.r, 1e-12)
		near(t, tc.name+" df", got.DF, tc.df, 1e-9)
		near(t, tc.name+" low", got.Low, tc.low, 1e-9)
		near(t, tc.name+" high", got.High, tc.high, 1e-9)

		// The bounds are where the pivot equals the t quantile:
		// (a - ρb)² = t²(va + ρ²vb).
		a, va := meanVar(tc.x)
		b, vb := meanVar(tc.base)
		q := TQuantile(got.DF)
		for _, rho := range []float64{got.Low, got.High} {
			lhs, rhs := (a-rho*b)*(a-rho*b), q*q*(va+rho*rho*vb)
			if math.Abs(lhs-rhs) > 1e-9*rhs {
				t.Errorf("%s: bound %v does not solve Fieller's equation: %v vs %v", tc.name, rho, lhs, rhs)
			}
		}
	}
}

func TestRatioDeltaFallback(t *testing.T) {
	// The baseline mean is not significantly away from zero, so Fieller's
	// set is unbounded and the delta interval is returned.
	got := Ratio([]float64{1.0, 1.2, 0.8}, []float64{0.1, -0.05, 0.2})
	if got.Method != MethodDelta {
		t.Fatalf("method %s, want delta", got.Method)
	}
	near(t, "ratio", got.Ratio, 12, 1e-9)
	near(t, "df", got.DF, 2.07015384615385, 1e-9)
	near(t, "low", got.Low, -31.9616117983123, 1e-6)
	near(t, "high", got.High, 55.9616117983123, 1e-6)
}

func TestRatioDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		x, base   []float64
		r         float64
		method    CIMethod
		collapsed bool
	}{
		{"empty x", nil, []float64{1, 2}, math.NaN(), MethodNone, false},
		{"zero base", []float64{1, 2}, []float64{0, 0}, math.NaN(), MethodNone, false},
		{"single x", []float64{3}, []float64{1, 2}, 2, MethodNone, true},
		{"no spread", []float64{3, 3}, []float64{1.5, 1.5}, 2, MethodFieller, true},
		{"x all zero", []float64{0, 0, 0}, []float64{10, 11, 12}, 0, MethodFieller, true},
	} {
		got := Ratio(tc.x, tc.base)
		near(t, tc.name+" ratio", got.Ratio, tc.r, 1e-12)
		if got.Method != tc.method {
			t.Errorf("%s: method %s, want %s", tc.name, got.Method, tc.method)
		}
		if tc.collapsed && (got.Low != got.Ratio || got.High != got.Ratio) {
			t.Errorf("%s: interval [%v, %v] should collapse to %v", tc.name, got.Low, got.High, got.Ratio)
		}
	}
}

// TestRatioCutAtZero: Fieller's set of the ratio of two non-negative
// quantities (bitrates) reaches below 0 when the numerator's own interval
// does; the ratio cannot, so the set is cut at 0. Data that can be
// negative keeps the whole set.
func TestRatioCutAtZero(t *testing.T) {
	base := []float64{10, 10.1}
	signed := Ratio([]float64{-0.1, 9}, base)
	cut := Ratio([]float64{0.1, 9}, base)
	if signed.Method != MethodFieller || signed.Low > -0.5 {
		t.Fatalf("signed data: %+v, want Fieller's set well below 0", signed)
	}
	if cut.Method != MethodFieller || cut.Low != 0 || !(cut.High > 0.9) {
		t.Errorf("non-negative data: %+v, want Fieller's set cut at 0", cut)
	}
	// A baseline not told from 0 (Fieller's set unbounded): the delta
	// fallback is cut at 0 too, for non-negative data only.
	noisy := []float64{0.01, 0.2, 0.005}
	if d := Ratio(noisy, noisy); d.Method != MethodDelta || d.Low != 0 || !(d.High > 2) {
		t.Errorf("delta, non-negative: %+v, want [0, >2]", d)
	}
	if d := Ratio([]float64{-0.01, 0.2, 0.005}, noisy); d.Method != MethodDelta || !(d.Low < 0) {
		t.Errorf("delta, signed: %+v, want a low below 0", d)
	}
}
