package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCompareGateAbsolute: retransmits that are usually 0 rose from a
// mean of 0.8 to 3.8. 'retransmits > +1000%' fails (A's mean is not
// clearly away from 0, so any significant rise is past every percentage),
// and says its threshold cannot be applied; an absolute rule judges the
// difference in the metric's unit: +50 passes, +2 fails, and the JSON
// gives the difference and its interval. A rule on bitrate without %
// warns that its threshold is in bit/s.
func TestCompareGateAbsolute(t *testing.T) {
	tr := func(retx float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: 10e9 + 1e7*retx, results.MetricRetransmits: retx}
	}
	var ta, tb []map[string]float64
	for i, v := range []float64{0, 1, 0, 2, 1} {
		ta, tb = append(ta, tr(v)), append(tb, tr([]float64{3, 4, 3, 5, 4}[i]))
	}
	a := writeRun(t, map[string][]map[string]float64{"baseline": ta})
	b := writeRun(t, map[string][]map[string]float64{"baseline": tb})
	code, out, errs := compareExit(t, a, b, "--fail-if", "retransmits > +1000%")
	if code != ExitFailure || !strings.Contains(out, "the threshold +1000.0% is relative to A's mean, which is not clearly away from 0, so it cannot be applied") {
		t.Errorf("+1000%%: exit %d, want %d saying the threshold cannot be applied\n%s%s", code, ExitFailure, out, errs)
	}
	if code, out, errs := compareExit(t, a, b, "--fail-if", "retransmits > +50"); code != ExitOK || !strings.Contains(out, "within the threshold +50.0") || errs != "" {
		t.Errorf("+50: exit %d, want %d\n%s%s", code, ExitOK, out, errs)
	}
	code, out, errs = compareExit(t, a, b, "--fail-if", "retransmits > +2", "--format", "json")
	var doc struct {
		Verdicts []struct {
			Fail, Absolute bool
			Change         *float64
			RatioLow       *float64 `json:"ratio_low"`
			DiffLow        *float64 `json:"diff_low"`
			DiffHigh       *float64 `json:"diff_high"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailure || len(doc.Verdicts) != 1 {
		t.Fatalf("+2: exit %d (%v), want %d\n%s%s", code, err, ExitFailure, out, errs)
	}
	if v := doc.Verdicts[0]; !v.Fail || !v.Absolute || v.Change == nil || *v.Change != 3 || v.RatioLow != nil || v.DiffLow == nil || *v.DiffLow <= 0 ||
		*v.DiffLow >= 3 || v.DiffHigh == nil || *v.DiffHigh <= 3 {
		t.Errorf("+2, JSON verdict: %+v\n%s", v, out)
	}
	// A % left out makes a rule absolute: said on stderr, but for a
	// count (above, no warning).
	_, _, errs = compareExit(t, a, b, "--fail-if", "bitrate < -5")
	if !strings.Contains(errs, "warning: rule 'bitrate < -5' has no %, so its threshold is absolute: -5 bit/s, the unit bitrate's samples record "+
		"(the table shows Gbit/s); for a relative change write 'bitrate < -5%'") {
		t.Errorf("bitrate < -5: stderr %q", errs)
	}
	if r, err := gate.Parse("rtt_p99_us > +10"); err != nil || absoluteUnit(r) != "rule 'rtt_p99_us > +10' has no %, so its threshold is absolute: "+
		"10 us, the unit rtt_p99_us's samples record; for a relative change write 'rtt_p99_us > +10%'" {
		t.Errorf("rtt_p99_us > +10: %q %v", absoluteUnit(r), err)
	}
}
