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

// TestOneRunOnlySaid: a metric compared that B has in no cell was left
// out without a word (a headline metric of A's, by default), and one
// compared alone printed "No cell and metric appear in both runs: cells
// match by tuning, ...", though the cells matched. The page says which
// run lacks it and how many cells the other has it in, above the table
// or in its place, and the JSON gives it (metrics_not_in_b,
// metrics_not_in_a); a metric neither compared nor gated is not named,
// and one a gate judges says its cells fail.
func TestOneRunOnlySaid(t *testing.T) {
	with := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, "cpp_total_ns": 500, "extra": 1}
	}
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, trialOf("baseline", i, with(10e9)), trialOf("rfs", i, with(10e9)))
		b = append(b, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, bitrate(10e9)))
	}
	ra, rb := counted(a), counted(b)
	headline := []string{results.MetricBitrate, "cpp_total_ns"}
	inA, inB := OneRunOnly(ra, rb, headline, nil)
	if len(inA) != 1 || inA[0] != (OneRun{Metric: "cpp_total_ns", Cells: 2}) || len(inB) != 0 {
		t.Fatalf("headline: %+v %+v, want cpp_total_ns in A alone, in 2 cells", inA, inB)
	}
	const said = "B has no value of cpp_total_ns in any cell (A has it in 2 cells), so no row compares it"
	h := Head{A: "a", B: "b", InANotB: inA}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, h, Runs(ra, rb, headline, nil, nil, nil)); err != nil || !strings.Contains(md.String(), said) ||
		!strings.Contains(md.String(), "| bitrate (Gbit/s) |") {
		t.Errorf("headline (%v):\n%s", err, md.String())
	}
	md.Reset()
	cpp := []string{"cpp_total_ns"}
	if err := WriteMarkdown(&md, h, Runs(ra, rb, cpp, nil, nil, nil)); err != nil || !strings.Contains(md.String(), said) ||
		strings.Contains(md.String(), "No cell and metric appear in both runs") || !strings.Contains(md.String(), "No row: each metric compared has values in one run only") {
		t.Errorf("--metric cpp_total_ns (%v):\n%s", err, md.String())
	}
	if w := strings.Join(Warnings(h, nil), "\n"); !strings.Contains(w, said) || strings.Contains(w, "no cell and metric appear") {
		t.Errorf("warnings:\n%s", w)
	}
	inA, inB = OneRunOnly(rb, ra, cpp, cpp)
	if len(inA) != 0 || len(inB) != 1 || inB[0] != (OneRun{Metric: "cpp_total_ns", Cells: 2, Gated: true}) {
		t.Fatalf("the other way round, gated: %+v %+v", inA, inB)
	}
	h = Head{A: "b", B: "a", InBNotA: inB}
	if n := strings.Join(h.notes(), "\n"); !strings.Contains(n, "A has no value of cpp_total_ns in any cell (B has it in 2 cells): --fail-if fails each cell") {
		t.Errorf("notes, gated:\n%s", n)
	}
	var js bytes.Buffer
	if err := Write(&js, "json", h, nil, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NotInB []json.RawMessage `json:"metrics_not_in_b"`
		NotInA []struct {
			Metric string
			Cells  int
			Gated  bool
		} `json:"metrics_not_in_a"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.NotInB == nil || len(doc.NotInB) != 0 || len(doc.NotInA) != 1 ||
		doc.NotInA[0].Metric != "cpp_total_ns" || doc.NotInA[0].Cells != 2 || !doc.NotInA[0].Gated {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
	if inA, _ := OneRunOnly(ra, rb, nil, nil); len(inA) != 2 || inA[0].Metric != "cpp_total_ns" || inA[1].Metric != "extra" {
		t.Errorf("every metric: %+v, want cpp_total_ns and extra", inA)
	}
	// A B without a counted trial lacks its cells, not a metric.
	if inA, inB := OneRunOnly(ra, counted(nil), headline, headline); len(inA)+len(inB) != 0 {
		t.Errorf("B without a counted trial: %+v %+v, want nothing named", inA, inB)
	}
}
