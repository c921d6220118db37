package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCellNotMeasuredInA: A counted trials of rfs, none with bitrate,
// which A measured in baseline and B has in rfs. B's values there were
// dropped without a word (no row, no note, missing_a empty) and a gate
// passed, while a cell A has no trial of at all failed; now it is a row,
// "not measured in A", that the gate fails, and the JSON says so
// (not_measured_in_a; it is no cell A lacks, so not in missing_a). With
// every metric compared it is a row too.
func TestCellNotMeasuredInA(t *testing.T) {
	retx := map[string]float64{results.MetricRetransmits: 1}
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, retx))
		b = append(b, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, bitrate(5e9)))
	}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 2 || rows[0].NotMeasuredA || !rows[1].NotMeasuredA || rows[1].MissingA || rows[1].Key != "bridge/rfs/tcp/r=1" || rows[1].B.N != 3 {
		t.Fatalf("rows %+v, want baseline compared and rfs not measured in A", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || len(vs) != 2 || vs[0].Fail || !vs[1].Fail ||
		!strings.Contains(vs[1].Why, "not measured in A (its trials of the cell have no value of bitrate, which B has there): B's values have no baseline") {
		t.Errorf("gate: %+v %v, want rfs failed as not measured in A", vs, err)
	}
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil ||
		!strings.Contains(md.String(), "| bridge/rfs/tcp/r=1 | bitrate (Gbit/s) | not measured in A (its trials of the cell have no value of bitrate) |") {
		t.Errorf("table (%v):\n%s", err, md.String())
	}
	if err := Write(&js, "json", Head{A: "a", B: "b"}, rows, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MissingA []string `json:"missing_a"`
		Rows     []struct {
			NotMeasuredInA bool   `json:"not_measured_in_a"`
			Verdict        string `json:"verdict"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.MissingA) != 0 || len(doc.Rows) != 2 || doc.Rows[0].NotMeasuredInA ||
		!doc.Rows[1].NotMeasuredInA || doc.Rows[1].Verdict != gate.OutcomeFail {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
	if rows := Runs(counted(a), counted(b), nil, nil, nil, nil); !notMeasuredA(rows, "bridge/rfs/tcp/r=1", results.MetricBitrate) {
		t.Errorf("every metric: %+v, want rfs's bitrate not measured in A", rows)
	}
}

func notMeasuredA(rows []Row, cell, metric string) bool {
	for _, r := range rows {
		if r.Key == cell && r.Metric == metric {
			return r.NotMeasuredA
		}
	}
	return false
}

// TestGatedMetricNowhere: a metric one run measured in no cell is no
// row where it is only shown (the header says so instead), but where a
// gate judges it (gated) each cell the other run has it in is a row,
// not measured in the run that lacks it, which the gate fails; it was
// no row, and the gate's "no cell of both runs has it" bad input.
func TestGatedMetricNowhere(t *testing.T) {
	with := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, "cpp_total_ns": 500}
	}
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, trialOf("baseline", i, with(10e9)), trialOf("rfs", i, with(10e9)))
		b = append(b, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, bitrate(10e9)))
	}
	cpp := []string{"cpp_total_ns"}
	if rows := Runs(counted(a), counted(b), cpp, nil, nil, nil); len(rows) != 0 {
		t.Errorf("shown only: %+v, want no row", rows)
	}
	for _, c := range []struct {
		name string
		a, b []results.Sample
		of   func(Row) bool
	}{
		{"B lacks it", a, b, func(r Row) bool { return r.NotMeasured }},
		{"A lacks it", b, a, func(r Row) bool { return r.NotMeasuredA }},
	} {
		rows := Runs(counted(c.a), counted(c.b), cpp, cpp, nil, nil)
		if len(rows) != 2 || !c.of(rows[0]) || !c.of(rows[1]) {
			t.Errorf("%s, gated: %+v, want both cells not measured there", c.name, rows)
			continue
		}
		vs, err := gate.Check([]gate.Rule{{Text: "cpp_total_ns > +10%", Metric: "cpp_total_ns", Change: 0.1}}, Cells(rows))
		if err != nil || len(vs) != 2 || !vs[0].Fail || !vs[1].Fail {
			t.Errorf("%s, gate: %+v %v, want both cells failed", c.name, vs, err)
		}
	}
}
