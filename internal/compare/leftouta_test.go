package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCellLeftOutByA: A ran replicas [1,4] (--set replicas=[1,4]), B
// ran [1,4,16]. B's r=16 is no row (A's study leaves it out: no baseline
// was meant to exist) and the gate does not fail it, but it was named
// nowhere, so a reader did not learn that B measured a cell the
// comparison left out. The head names it, as it names A's cells B's
// study leaves out: in the notes (the md page, and stderr for csv and
// json) and in the JSON's left_out_a. A's study unknown: nothing named.
func TestCellLeftOutByA(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, at(1, i, 10e9), at(4, i, 10e9))
		b = append(b, at(1, i, 10e9), at(4, i, 10e9), at(16, i, 10e9))
	}
	ra, rb := counted(a), counted(b)
	sa, sb := fixedStudy(3, 1, 4).Cells(), fixedStudy(3, 1, 4, 16).Cells()
	rows := Runs(ra, rb, []string{results.MetricBitrate}, nil, sa, sb)
	if len(rows) != 2 || rows[0].MissingA || rows[1].MissingA {
		t.Fatalf("rows %+v, want r=1 and r=4 alone", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || gate.Failed(vs) {
		t.Errorf("gate: %+v %v, want passed (r=16 is not compared)", vs, err)
	}
	h := NewHead("a", "b", ra, rb, sa, sb, false)
	const want = "A's study leaves out 1 of B's cells, which are not compared: bridge/baseline/tcp/r=16"
	if len(h.LeftOutA) != 1 || h.LeftOutA[0] != "bridge/baseline/tcp/r=16" || len(h.LeftOutB) != 0 ||
		!strings.Contains(strings.Join(h.notes(), "\n"), want) {
		t.Errorf("left out of A %q, of B %q, notes %q", h.LeftOutA, h.LeftOutB, h.notes())
	}
	if w := strings.Join(Warnings(h, rows), "\n"); !strings.Contains(w, want) {
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
		LeftOutA []string `json:"left_out_a"`
		LeftOutB []string `json:"left_out_b"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.LeftOutA) != 1 || doc.LeftOutA[0] != "bridge/baseline/tcp/r=16" ||
		doc.LeftOutB == nil || len(doc.LeftOutB) != 0 {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
	if h := NewHead("a", "b", ra, rb, nil, sb, false); h.LeftOutA != nil {
		t.Errorf("A's study unknown: left out %q, want nothing named", h.LeftOutA)
	}
	if h := NewHead("a", "b", ra, rb, sb, sb, false); len(h.LeftOutA) != 0 {
		t.Errorf("left out %q of an A whose study has every cell of B", h.LeftOutA)
	}
}

// TestLeftOutByAPairsAsRows: runs of one datapath each pair whatever
// their names (A on bridge, B on ovs), from B's side too: B's r=16 is
// named as the rows name cells (A's datapath, then B's), and B's r=1,
// which A's study has under its own name, is not named.
func TestLeftOutByAPairsAsRows(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, at(1, i, 10e9))
		for _, r := range []int{1, 16} {
			x := at(r, i, 10e9)
			x.Cell.Datapath = "ovs"
			b = append(b, x)
		}
	}
	h := NewHead("a", "b", counted(a), counted(b), fixedStudy(3, 1).Cells(), nil, false)
	if len(h.LeftOutA) != 1 || h.LeftOutA[0] != "bridge|ovs/baseline/tcp/r=16" {
		t.Errorf("left out of A %q, want bridge|ovs/baseline/tcp/r=16", h.LeftOutA)
	}
}
