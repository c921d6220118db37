package analysis

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// TestNoIntervalSameInCSVAndJSON: an interval that could not be computed
// (method none) has no bounds in either file: summary.csv leaves them
// empty and summary.json null, never the point twice (a zero-width
// interval). Checked bound by bound on rows with each kind: one trial, a
// normalized ratio against a baseline of one trial, two pairs (a paired
// ratio without an interval) and one round (no unpaired interval either).
// The core of a row not per core is likewise empty and null.
func TestNoIntervalSameInCSVAndJSON(t *testing.T) {
	c := func(tn string) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	oneBase := []results.Sample{{Cell: c("baseline"), Trial: 1, Metrics: map[string]float64{results.MetricBitrate: 10e9}}}
	for i, v := range []float64{9e9, 9.5e9, 8.5e9} {
		oneBase = append(oneBase, results.Sample{Cell: c("rfs"), Trial: i + 1, Metrics: map[string]float64{results.MetricBitrate: v}})
	}
	for name, samples := range map[string][]results.Sample{"baseline of one trial": oneBase, "two rounds": drifting(2, 1.05), "one round": drifting(1, 1.05)} {
		rows := Summarize(quickStudy(t), samples)
		var csvBuf, jsonBuf bytes.Buffer
		if err := WriteCSV(&csvBuf, rows, nil, study.Trials{}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&jsonBuf, Model{Version: ModelVersion, Rows: rows}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&csvBuf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Rows []map[string]any }
		if err := json.Unmarshal(jsonBuf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Rows) != len(recs)-1 {
			t.Fatalf("%s: %d json rows, %d csv records", name, len(doc.Rows), len(recs)-1)
		}
		for i, rec := range recs[1:] {
			j := doc.Rows[i]
			col := map[string]string{}
			for k, h := range recs[0] {
				col[h] = rec[k]
			}
			vs, _ := j["vs_baseline"].(map[string]any)
			for _, b := range []struct {
				csv  string
				json any
			}{
				{"ci95_low", j["ci95_low"]}, {"ci95_high", j["ci95_high"]},
				{"normalized_ci95_low", j["normalized_ci95_low"]}, {"normalized_ci95_high", j["normalized_ci95_high"]},
				{"paired_ci95_low", vs["paired_ci95_low"]}, {"paired_ci95_high", vs["paired_ci95_high"]},
				{"chosen_low", vs["chosen_low"]}, {"chosen_high", vs["chosen_high"]},
				{"cpu", j["cpu"]}, // a row not per core: empty, null, never -1
			} {
				if (col[b.csv] == "") != (b.json == nil) {
					t.Errorf("%s: %s %s r=%s %s: csv %s %q, json %v", name, rec[1], rec[4], rec[3], col["cpu"], b.csv, col[b.csv], b.json)
				}
			}
			if vs != nil && vs["unpaired_method"] == string(stats.MethodNone) && (vs["unpaired_ci95_low"] != nil || vs["unpaired_ci95_high"] != nil) {
				t.Errorf("%s: %s: unpaired bounds %v, %v beside method none, want null", name, rec[1], vs["unpaired_ci95_low"], vs["unpaired_ci95_high"])
			}
		}
		// The cases the test is for are there.
		r := find(t, rows, "rfs", 1, results.MetricBitrate, -1)
		switch name {
		case "baseline of one trial":
			if r.NormMethod != string(stats.MethodNone) || r.N < 2 {
				t.Errorf("%s: rfs normalized by %q over %d trials", name, r.NormMethod, r.N)
			}
		case "two rounds":
			if r.VsBaseline == nil || r.VsBaseline.Paired.Method != stats.MethodNone || !Finite(r.VsBaseline.Paired.Low) {
				t.Errorf("%s: rfs paired %+v, want method none with the bounds stats leaves at the ratio", name, r.VsBaseline)
			}
		case "one round":
			if r.VsBaseline == nil || r.VsBaseline.Unpaired.Method != stats.MethodNone {
				t.Errorf("%s: rfs unpaired %+v, want method none", name, r.VsBaseline)
			}
		}
	}
}

// TestCSVMethodColumns: summary.csv names the methods of the mean's and
// the normalized interval, as summary.json's ci_method and
// normalized_method do, in columns appended after seq_versus (and
// before those appended since).
func TestCSVMethodColumns(t *testing.T) {
	at := slices.Index(CSVHeader, "seq_versus")
	if at < 0 || at+3 > len(CSVHeader) || CSVHeader[at+1] != "ci_method" || CSVHeader[at+2] != "normalized_method" {
		t.Fatalf("header %q, want seq_versus, ci_method, normalized_method in a row", CSVHeader)
	}
	rows := Summarize(quickStudy(t), drifting(3, 1.05))
	for _, tc := range []struct{ tuning, ci, norm string }{
		{"rfs", CIStudentT, string(stats.MethodFieller)},
		{"baseline", CIStudentT, NormOwn},
	} {
		rec := csvRecord(t, rows, tc.tuning)
		if rec["ci_method"] != tc.ci || rec["normalized_method"] != tc.norm {
			t.Errorf("%s: ci_method %q, normalized_method %q; want %q, %q", tc.tuning, rec["ci_method"], rec["normalized_method"], tc.ci, tc.norm)
		}
	}
	rec := csvRecord(t, Summarize(quickStudy(t), drifting(1, 1.05)), "rfs")
	if rec["ci_method"] != CINone || rec["normalized_method"] != string(stats.MethodNone) {
		t.Errorf("one trial: ci_method %q, normalized_method %q; want none, none", rec["ci_method"], rec["normalized_method"])
	}
}

// TestRowCPURoundTrips: a row's core survives summary.json, both a core
// and none (null, or the -1 files before 2026-12-07 stored).
func TestRowCPURoundTrips(t *testing.T) {
	for _, cpu := range []int{-1, 0, 3} {
		b, err := json.Marshal(Row{SummaryRow: results.SummaryRow{Metric: "core_idle", CPU: cpu}})
		if err != nil {
			t.Fatal(err)
		}
		var back Row
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.CPU != cpu {
			t.Errorf("cpu %d read back as %d from %s", cpu, back.CPU, b)
		}
	}
	var old Row
	if err := json.Unmarshal([]byte(`{"metric":"bitrate","cpu":-1}`), &old); err != nil || old.CPU != -1 {
		t.Errorf("an old file's cpu -1 reads as %d (%v)", old.CPU, err)
	}
}
