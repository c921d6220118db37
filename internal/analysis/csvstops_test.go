package analysis

import (
	"slices"
	"strconv"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A stop without a look (results.Stop.Look 0: the runner's stopOf
// writes it for a cell that never reached one, "undecided" with the
// plain 95% interval) is a fixed design's row's own comparison, which
// summary.csv keeps as the plain decision with its seq_ columns empty;
// in an adaptive design it is the controller's answer, whose reason is
// the stop's own ("no decision before 3 trials"), not SupersededReason,
// which speaks of looks that chose the trial count.
func TestWriteCSVStopWithoutLook(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	var row Row
	for _, r := range rows {
		if r.Tuning == "rfs" && r.Replicas == 1 && r.Metric == results.MetricBitrate && r.CPU < 0 && r.VsBaseline != nil {
			row = r
		}
	}
	if row.VsBaseline == nil || row.VsBaseline.Decision.Verdict == "" {
		t.Fatal("no compared bitrate row of rfs at 1 replica")
	}
	ratio, lo, hi := 1.1, 0.9, 1.3
	for _, tc := range []struct {
		name   string
		design study.Trials
		reason string
	}{
		{"fixed, stopped by the budget after 1 trial", study.Fixed(5), "no decision before 5 trials"},
		{"adaptive, stopped by the budget before min", study.Trials{Min: 3, Max: 20}, "no decision before 3 trials"},
	} {
		st := results.Stop{Cell: row.Cell, Metric: results.MetricBitrate, Status: "budget", N: 1, Valid: 1,
			Decision: "undecided", DecisionReason: tc.reason, Ratio: &ratio, Low: &lo, High: &hi,
			Method: "fieller", Confidence: 0.95, Versus: "baseline"}
		recs := csvRecordsOf(t, rows, []results.Stop{st}, tc.design)
		col := func(rec []string, name string) string { return rec[slices.Index(recs[0], name)] }
		var rec []string
		for _, r := range recs[1:] {
			if r[1] == "rfs" && r[3] == strconv.Itoa(row.Replicas) && r[4] == results.MetricBitrate && r[5] == "" {
				rec = r
			}
		}
		if rec == nil {
			t.Fatalf("%s: no record of the row", tc.name)
		}
		dec, why, seq := col(rec, "decision"), col(rec, "decision_reason"), col(rec, "seq_decision")
		if tc.design.Adaptive() {
			if dec != "" || why != tc.reason || seq != "undecided" || col(rec, "seq_look") != "" {
				t.Errorf("%s: decision %q (%q), seq_decision %q, want empty, the stop's reason, undecided", tc.name, dec, why, seq)
			}
			continue
		}
		if dec != string(row.VsBaseline.Decision.Verdict) || why != row.VsBaseline.Decision.Reason || seq != "" || col(rec, "seq_confidence") != "" {
			t.Errorf("%s: decision %q (%q), seq_decision %q, want the row's own %q and no seq_ columns",
				tc.name, dec, why, seq, row.VsBaseline.Decision.Verdict)
		}
	}
}
