package gate

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestCheckAbsolute: a count that is usually 0 (retransmits 0, 1, 0, 2,
// 1) has no relative change, so a percentage rule fails every
// significant rise: 'retransmits > +1000%' failed on B/A of 4.75, its
// reason "change +Inf% ... beyond +1000.0%". The reason now says the
// threshold cannot be applied; an absolute rule (no %) judges B − A in
// the metric's unit on Welch's interval at the gate's level.
func TestCheckAbsolute(t *testing.T) {
	a, b := []float64{0, 1, 0, 2, 1}, []float64{3, 4, 3, 5, 4}
	count := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	cell := Cell{Key: "baseline", Metric: "retransmits", A: a, B: b, Show: count}
	for _, tc := range []struct {
		rule string
		fail bool
		why  string
	}{
		{"retransmits > +1000%", true, "significant rise (A's mean 0.8 is not clearly away from 0, so no relative change: B's mean 3.8 is higher; " +
			"Welch's p 0.000471 against 0.05): the threshold +1000.0% is relative to A's mean, which is not clearly away from 0, so it cannot be " +
			"applied, and a significant rise fails every '>' rule; for a threshold in the metric's unit write 'retransmits > N' (no %)"},
		{"retransmits > +50", false, "significant difference +3.0 (95% interval of B − A [+1.8, +4.2]) within the threshold +50.0"},
		{"retransmits > +2", true, "difference +3.0 is significant (95% interval of B − A [+1.8, +4.2]) and beyond +2.0"},
		{"retransmits < -1", false, "within the threshold -1.0"},
		{"retransmits > +3.01", false, "significant difference +3 ("},
	} {
		r, err := Parse(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := Check([]Rule{r}, []Cell{cell})
		if err != nil || len(vs) != 1 || vs[0].Fail != tc.fail || !strings.Contains(vs[0].Why, tc.why) {
			t.Errorf("%s: %+v %v, want fail=%v and %q", tc.rule, vs, err, tc.fail, tc.why)
		}
	}
	r, _ := Parse("retransmits > +2")
	vs, _ := Check([]Rule{r}, []Cell{cell, {Key: "rfs", Metric: "retransmits", A: a, B: a, Show: count}})
	if v := vs[0]; !v.Judged || v.Level != 0.975 || math.Abs(v.Change-3) > 1e-12 || !(v.Low > 0 && v.Low < 3 && v.High > 3) || !math.IsNaN(v.P) {
		t.Errorf("the verdict's numbers: %+v, want B − A = 3 and its interval at 97.5%%", v)
	}
	if v := vs[1]; v.Fail || !strings.HasPrefix(v.Why, "not significant: 97.5% interval of B − A") {
		t.Errorf("no difference: %+v", v)
	}
	// A bitrate in bit/s, as the samples record it, shown as the cell
	// shows values.
	drop, _ := Parse("bitrate < -5e8")
	gbit := func(v float64) string { return fmt.Sprintf("%.2f Gbit/s", v/1e9) }
	vs, err := Check([]Rule{drop}, []Cell{{Metric: "bitrate", A: around(10e9, 0.01, 6), B: around(9e9, 0.01, 6), Show: gbit}})
	if err != nil || !Failed(vs) || !strings.Contains(vs[0].Why, "difference -1.00 Gbit/s is significant") || !strings.Contains(vs[0].Why, "beyond -0.50 Gbit/s") {
		t.Errorf("bitrate < -5e8: %+v %v", vs, err)
	}
	// Missing, too few trials: as a relative rule.
	if vs, _ := Check([]Rule{r}, []Cell{{Metric: "retransmits", A: a, B: []float64{9}}}); !Failed(vs) || !strings.Contains(vs[0].Why, "not enough trials") {
		t.Errorf("one trial in B: %+v", vs)
	}
}

// TestAbsoluteRuleWarning: the sign-slip warning of an absolute rule
// speaks in its number, not a percentage.
func TestAbsoluteRuleWarning(t *testing.T) {
	for in, want := range map[string]string{
		"retransmits > +50": "",
		"bitrate < -5e8":    "",
		"retransmits < 5":   "rule 'retransmits < 5' fails when retransmits rises by less than 5 or falls, an improvement (retransmits is better lower); for a regression gate write 'retransmits > +5'",
		"bitrate > 0":       "rule 'bitrate > 0' fails when bitrate rises, an improvement (bitrate is better higher); for a regression gate write 'bitrate < 0'",
	} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Warning(); got != want {
			t.Errorf("%q: warning\n  %q\nwant\n  %q", in, got, want)
		}
	}
}
