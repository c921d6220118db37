package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCellNeitherRunHas: both runs of a study of r=1, 4 and 16 lost
// r=16 (every trial failed in A, and B ended before it). No row can
// hold it and the gate does not fail it (no value on either side to judge B by),
// but it was named nowhere, so a gate that passed left a cell broken in
// both runs unsaid. The head names it, in the notes (the md page, and
// stderr for csv and json) and in the JSON's neither; a study unknown
// names nothing.
func TestCellNeitherRunHas(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, at(1, i, 10e9), at(4, i, 10e9))
		b = append(b, at(1, i, 10e9), at(4, i, 10e9))
	}
	ra, rb := counted(a), counted(b)
	failed := at(16, 1, 0)
	failed.Error = "iperf3: connection refused"
	ra.Marked = []results.Sample{failed}
	s := fixedStudy(3, 1, 4, 16).Cells()
	rows := Runs(ra, rb, []string{results.MetricBitrate}, nil, s, s)
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want r=1 and r=4 alone", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || gate.Failed(vs) {
		t.Errorf("gate: %+v %v, want passed", vs, err)
	}
	h := NewHead("a", "b", ra, rb, s, s, false)
	const want = "neither run has a counted trial of 1 cell(s) both studies include"
	if len(h.Neither) != 1 || h.Neither[0] != "bridge/baseline/tcp/r=16" || len(h.LeftOutA)+len(h.LeftOutB) != 0 {
		t.Errorf("neither %q, left out %q %q", h.Neither, h.LeftOutA, h.LeftOutB)
	}
	if w := strings.Join(Warnings(h, rows), "\n"); !strings.Contains(w, want) || !strings.Contains(w, "bridge/baseline/tcp/r=16") {
		t.Errorf("warnings (csv, json: stderr) %q, want %q", w, want)
	}
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, h, rows); err != nil || !strings.Contains(md.String(), want) {
		t.Errorf("page (%v):\n%s", err, md.String())
	}
	if err := Write(&js, "json", h, rows, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Neither []string `json:"neither"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Neither) != 1 || doc.Neither[0] != "bridge/baseline/tcp/r=16" {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
	if h := NewHead("a", "b", ra, rb, nil, s, false); h.Neither != nil {
		t.Errorf("A's study unknown: neither %q, want nothing named", h.Neither)
	}
	// A cell one run has is no cell of neither: B's r=16 makes it a row
	// A is missing.
	rb16 := counted(append(append([]results.Sample{}, b...), at(16, 1, 10e9), at(16, 2, 10e9)))
	if h := NewHead("a", "b", ra, rb16, s, s, false); len(h.Neither) != 0 {
		t.Errorf("B has r=16: neither %q", h.Neither)
	}
}
