package report

import (
	"encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// A fixed design's stop without a look (the budget stopped the cell
// after one trial, or its first trial failed every attempt: "undecided,
// no decision before 3 trials") takes the place of nothing: the report
// and summary.csv give the cell's plain comparison over the trials it
// has, as for any cell of a fixed design, and no seq_ columns.
func TestFixedStopWithoutLookShowsThePlainComparison(t *testing.T) {
	s, samples := pinStudy(t) // trials: 3
	const why = "no decision before 3 trials"
	cell := results.Cell{Datapath: "calico-vxlan", Tuning: "busy", Workload: "plain", Replicas: 1}
	ratio, low, high := 1.0, 0.9, 1.1
	run := &results.Run{Dir: t.TempDir(), Samples: samples, Env: results.Env{Started: time.Unix(0, 0)},
		Stops: []results.Stop{{Cell: cell, Metric: results.MetricBitrate, Status: "budget", N: 3, Valid: 3,
			Decision: "undecided", DecisionReason: why, Versus: "baseline", Ratio: &ratio, Low: &low, High: &high,
			Method: "fieller", Confidence: 0.95}}}
	if err := Write(run, s); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(run.Dir, results.SummaryMD)); strings.Contains(md, why) {
		t.Errorf("summary.md shows the fixed design's stop without a look:\n%s", md)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(run.Dir, results.SummaryCSV)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	dec, seq := slices.Index(recs[0], "decision"), slices.Index(recs[0], "seq_decision")
	found := false
	for _, r := range recs[1:] {
		if r[0] != cell.Datapath || r[1] != cell.Tuning || r[2] != cell.Workload || r[4] != results.MetricBitrate || r[5] != "" {
			continue
		}
		found = true
		if r[dec] == "" || r[seq] != "" {
			t.Errorf("summary.csv: decision %q, seq_decision %q, want the plain decision and no seq_ columns", r[dec], r[seq])
		}
	}
	if !found {
		t.Fatal("summary.csv has no bitrate row of the cell")
	}
}
