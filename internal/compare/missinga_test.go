package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCellANeverReached: A is the run cut short (r=1 done, r=4 never
// reached), B a full run whose r=4 halved. Rows were built from A's
// cells alone, so r=4 was no row and '--fail-if bitrate < -5%' passed
// while the page said a cell a run has no trial of fails a gate. It is a
// row now, missing because A did not reach it, the gate fails it, and
// the JSON names it (missing_a, missing_in_a). A's study unknown and no
// trace of the cell in A: no row, as for B.
func TestCellANeverReached(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 5; i++ {
		a = append(a, at(1, i, 10e9))
		b = append(b, at(1, i, 10e9), at(4, i, 5e9))
	}
	ra, rb := counted(a), counted(b)
	s := fixedStudy(5, 1, 4).Cells()
	rows := Runs(ra, rb, []string{results.MetricBitrate}, nil, s, s)
	if len(rows) != 2 || rows[0].MissingA || !rows[1].MissingA || rows[1].AbsentA != gate.NotReached || rows[1].Key != "bridge/baseline/tcp/r=4" ||
		rows[1].B.N != 5 {
		t.Fatalf("rows %+v, want r=1 compared and r=4 missing in A (not reached)", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || !gate.Failed(vs) || vs[0].Fail || !strings.Contains(vs[1].Why, "A did not reach it") {
		t.Errorf("gate: %+v %v, want r=4 failed: A did not reach it", vs, err)
	}
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil || !strings.Contains(md.String(), "| missing: A did not reach it") {
		t.Errorf("table (%v):\n%s", err, md.String())
	}
	if err := Write(&js, "json", Head{A: "a", B: "b"}, rows, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MissingA []string `json:"missing_a"`
		Rows     []struct {
			MissingInA bool   `json:"missing_in_a"`
			AbsentInA  string `json:"absent_in_a"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.MissingA) != 1 || doc.MissingA[0] != "bridge/baseline/tcp/r=4" ||
		!doc.Rows[1].MissingInA || doc.Rows[1].AbsentInA != "not_reached" || doc.Rows[0].MissingInA {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
	if rows := Runs(ra, rb, []string{results.MetricBitrate}, nil, nil, s); len(rows) != 1 {
		t.Errorf("A's study unknown: %+v, want r=1 alone", rows)
	}
	h := Head{A: "a", B: "b", UnfinishedA: 1, CellsA: 2}
	if n := strings.Join(h.notes(), "\n"); !strings.Contains(n, "a cell it has no trial of that the other run has fails a gate") {
		t.Errorf("notes: %s", n)
	}
}

// TestJSONKeysAlwaysPresent: the documented keys are in every document,
// empty ones included (schema 2 left them out when empty), so that a
// reader with a strict schema finds them.
func TestJSONKeysAlwaysPresent(t *testing.T) {
	a := []results.Sample{at(1, 1, 10e9), at(1, 2, 10e9)}
	rows := Runs(counted(a), counted(a), []string{results.MetricBitrate}, nil, nil, nil)
	var js bytes.Buffer
	if err := Write(&js, "json", Head{A: "a", B: "b"}, rows, nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "a", "b", "about_a", "about_b", "holds_a", "holds_b", "unfinished_a", "unfinished_b",
		"left_out_a", "left_out_b", "neither", "missing_a", "metrics_not_in_b", "metrics_not_in_a", "differ", "same_run", "rows", "one_core",
		"verdicts", "failed"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no key %q:\n%s", k, js.String())
		}
	}
	for _, k := range []string{"left_out_a", "left_out_b", "neither", "missing_a", "metrics_not_in_b", "metrics_not_in_a", "differ", "one_core", "verdicts"} {
		if string(doc[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, doc[k])
		}
	}
	var rs []map[string]json.RawMessage
	if err := json.Unmarshal(doc["rows"], &rs); err != nil || len(rs) != 1 {
		t.Fatal(err, string(doc["rows"]))
	}
	for _, k := range []string{"cell", "metric", "a", "b", "ratio", "ratio_low", "ratio_high", "ratio_method", "p_welch", "missing_in_b",
		"absent_in_b", "not_measured_in_b", "gave_up_b", "wide_a", "wide_b", "disturbed_a", "disturbed_b", "failed_rules", "verdict",
		"missing_in_a", "absent_in_a", "gave_up_a", "not_measured_in_a", "unfinished_in_a", "unfinished_in_b", "planned_a", "planned_b"} {
		if _, ok := rs[0][k]; !ok {
			t.Errorf("row has no key %q: %s", k, doc["rows"])
		}
	}
}
