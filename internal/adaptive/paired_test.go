package adaptive

import "testing"

// A baseline runs beside its cells, and the runner's count of the
// trials a budget must pay for (runner.minimumLeft) raises it to theirs,
// exactly when Next pairs them: a margin, or a target on the ratio.
func TestPaired(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"margin", Config{Margin: 0.05}, true},
		{"target on the ratio", Config{Precision: &Precision{HalfWidth: 0.02, Of: OfNormalized}}, true},
		{"target on the mean", Config{Precision: &Precision{HalfWidth: 0.02, Of: OfMean}}, false},
		{"neither", Config{}, false},
	} {
		if got := tc.cfg.Paired(); got != tc.want {
			t.Errorf("%s: paired %v, want %v", tc.name, got, tc.want)
		}
	}
}
