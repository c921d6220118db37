package analysis

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// TestWorkloadWithoutSamplesListed: a workload of the study whose every
// trial failed (no sample of it at all) has no metrics to give its cells
// rows by; each of its planned cells still gets one, of the metric its
// cells are decided on, with n = 0, so that summary.csv and summary.json
// list it rather than reading as if the study never asked for it.
func TestWorkloadWithoutSamplesListed(t *testing.T) {
	s := quickStudy(t)
	gone := s.Spec.Workloads[0]
	gone.Name = "intra"
	s.Spec.Workloads = append(s.Spec.Workloads, gone)
	rows := Summarize(s, synthetic())
	var planned []Row
	for _, r := range rows {
		if r.Workload == "intra" {
			planned = append(planned, r)
		}
	}
	if want := len(s.Spec.Tunings) * len(s.Spec.Replicas); len(planned) != want {
		t.Fatalf("%d rows of the workload without samples, want one per planned cell (%d)", len(planned), want)
	}
	for _, r := range planned {
		if r.Metric != results.MetricBitrate || r.N != 0 || r.CPU != -1 || Finite(r.Mean) {
			t.Errorf("row %+v, want bitrate (its decided metric) with n = 0 and no mean", r.SummaryRow)
		}
	}
	recs := csvRecords(t, rows, nil)
	n := 0
	for _, rec := range recs[1:] {
		if rec[2] == "intra" {
			n++
			if rec[7] != "0" || rec[8] != "" {
				t.Errorf("csv record %q, want n 0 and an empty mean", rec)
			}
		}
	}
	if n != len(planned) {
		t.Errorf("%d csv records of the workload, want %d", n, len(planned))
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Model{Version: ModelVersion, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), `"workload":"intra"`); got != len(planned) {
		t.Errorf("%d summary.json rows of the workload, want %d", got, len(planned))
	}
	// Without a study nothing is planned: no row is made up.
	for _, r := range Summarize(nil, synthetic()) {
		if r.Workload == "intra" {
			t.Fatalf("a row %+v without a study", r.SummaryRow)
		}
	}
}
