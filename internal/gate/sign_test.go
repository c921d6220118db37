package gate

import (
	"math"
	"strings"
	"testing"
)

// TestCheckNegativeBaseline: the direction of a change comes from
// mean(B) − mean(A), whatever A's sign. A lost count iperf3 lowered
// below 0 (-1, 0, -2, 0, -1) that rose to ~500 passed '> +10%' as a
// "significant change -62600.0%" (B/A − 1 of a negative A); a metric
// better higher at about -100 that fell to -120 passed '< -5%' as
// "+20.0%" (B/A = 1.2).
func TestCheckNegativeBaseline(t *testing.T) {
	lostRise := Rule{Text: "lost_count > +10%", Metric: "lost_count", Change: 0.10}
	lostFall := Rule{Text: "lost_count < -10%", Metric: "lost_count", Below: true, Change: -0.10}
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	rise := Rule{Text: "bitrate > +5%", Metric: "bitrate", Change: 0.05}
	nearZero := []float64{-1, 0, -2, 0, -1}
	lost := []float64{400, 550, 600, 500, 450}
	for _, tc := range []struct {
		name   string
		rule   Rule
		a, b   []float64
		fail   bool
		change float64
		why    string
	}{
		{"rise from a negative A near 0 fails a '>' rule", lostRise, nearZero, lost, true, math.Inf(1), "B's mean 500 is higher"},
		{"the same rise passes a '<' rule", lostFall, nearZero, lost, false, math.Inf(1),
			"which passes: the threshold -10.0% is relative to A's mean, which is not clearly away from 0, so it cannot be applied"},
		{"a fall to below a negative A near 0", lostFall, []float64{-1, 0, -2, 0, -1}, []float64{-400, -550, -600, -500, -450}, true,
			math.Inf(-1), "B's mean -500 is lower"},
		{"negative A clearly below 0 falls further: a fall", drop, around(-100, 0.01, 6), around(-120, 0.01, 6), true, -0.2,
			"A's mean -100 below 0"},
		{"the same fall passes a '>' rule", rise, around(-100, 0.01, 6), around(-120, 0.01, 6), false, -0.2, "within the threshold"},
		{"negative A rises toward 0: a rise", rise, around(-100, 0.01, 6), around(-80, 0.01, 6), true, 0.2, "beyond +5.0%"},
	} {
		vs, err := Check([]Rule{tc.rule}, []Cell{{Metric: tc.rule.Metric, A: tc.a, B: tc.b}})
		if err != nil {
			t.Fatal(err)
		}
		v := vs[0]
		if v.Fail != tc.fail || math.Abs(v.Change-tc.change) > 1e-9 && v.Change != tc.change || !strings.Contains(v.Why, tc.why) {
			t.Errorf("%s: fail=%v change=%v why %q; want fail=%v change=%v and %q", tc.name, v.Fail, v.Change, v.Why, tc.fail, tc.change, tc.why)
		}
	}
}
