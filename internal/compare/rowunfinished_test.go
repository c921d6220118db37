package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestRowsSayUnfinished: both runs of a five-trial study were cut short,
// A within r=1 and r=2, B within r=2 and r=4 and before r=8. Only the
// header counted such cells (unfinished_a, unfinished_b) and only the
// verdict's why named B's, so a script reading the JSON or CSV row by
// row could not tell a partial cell from a finished one without parsing
// words, and A's not at all. Each row now says it of each run
// (unfinished_in_a, unfinished_in_b, with the trials planned), and the
// table's A column says it as the B column does.
func TestRowsSayUnfinished(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 5; i++ {
		if i <= 2 {
			a = append(a, at(1, i, 10e9), at(2, i, 10e9))
			b = append(b, at(2, i, 10e9), at(4, i, 10e9))
		} else {
			b = append(b, at(1, i-2, 10e9))
		}
		a = append(a, at(4, i, 10e9), at(8, i, 10e9))
	}
	b = append(b, at(1, 4, 10e9), at(1, 5, 10e9))
	ra, rb := counted(a), counted(b)
	s := fixedStudy(5, 1, 2, 4, 8)
	rows := Runs(ra, rb, []string{results.MetricBitrate}, nil, s.Cells(), s.Cells())
	MarkUnfinished(rows, analysis.Unfinished(s, rb), "5")
	MarkUnfinishedA(rows, analysis.Unfinished(s, ra), "5")
	want := []struct {
		cell string
		a, b bool
	}{{"bridge/baseline/tcp/r=1", true, false}, {"bridge/baseline/tcp/r=2", true, true},
		{"bridge/baseline/tcp/r=4", false, true}, {"bridge/baseline/tcp/r=8", false, true}}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want %d", rows, len(want))
	}
	for i, w := range want {
		if r := rows[i]; r.Key != w.cell || r.UnfinishedA != w.a || r.UnfinishedB != w.b {
			t.Errorf("row %d: %s unfinished A %v B %v, want %s %v %v", i, r.Key, r.UnfinishedA, r.UnfinishedB, w.cell, w.a, w.b)
		}
	}
	if !rows[3].Missing || rows[3].Absent != gate.NotReached {
		t.Errorf("r=8: %+v, want missing in B, not reached", rows[3])
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil {
		t.Fatal(err)
	}

	var js bytes.Buffer
	if err := Write(&js, "json", Head{A: "a", B: "b"}, rows, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema int `json:"schema_version"`
		Rows   []struct {
			Cell          string `json:"cell"`
			UnfinishedInA *bool  `json:"unfinished_in_a"`
			UnfinishedInB *bool  `json:"unfinished_in_b"`
			PlannedA      string `json:"planned_a"`
			PlannedB      string `json:"planned_b"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Schema != 7 || len(doc.Rows) != len(want) {
		t.Fatalf("json (%v), want schema 7 and %d rows:\n%s", err, len(want), js.String())
	}
	planned := func(on bool) string {
		if on {
			return "5"
		}
		return ""
	}
	for i, w := range want {
		r := doc.Rows[i]
		if r.Cell != w.cell || r.UnfinishedInA == nil || *r.UnfinishedInA != w.a || r.UnfinishedInB == nil || *r.UnfinishedInB != w.b ||
			r.PlannedA != planned(w.a) || r.PlannedB != planned(w.b) {
			t.Errorf("json row %d: %+v, want %s unfinished A %v B %v", i, r, w.cell, w.a, w.b)
		}
	}

	var cs bytes.Buffer
	if err := Write(&cs, "csv", Head{}, rows, vs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != len(want)+1 {
		t.Fatalf("csv %v:\n%s", err, cs.String())
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"unfinished_in_a", "unfinished_in_b", "planned_a", "planned_b"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("csv has no column %s: %q", h, recs[0])
		}
	}
	for i, w := range want {
		r := recs[i+1]
		if r[col["cell"]] != w.cell || r[col["unfinished_in_a"]] != boolText(w.a) || r[col["unfinished_in_b"]] != boolText(w.b) ||
			r[col["planned_a"]] != planned(w.a) || r[col["planned_b"]] != planned(w.b) {
			t.Errorf("csv row %d: %q, want %s unfinished A %v B %v", i, r, w.cell, w.a, w.b)
		}
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		a := strings.Contains(line, "; A unfinished (n=2 of planned 5)")
		switch {
		case strings.HasPrefix(line, "| bridge/baseline/tcp/r=1 |") && !a,
			strings.HasPrefix(line, "| bridge/baseline/tcp/r=2 |") && (!a || !strings.Contains(line, "; B unfinished (n=2 of planned 5)")),
			strings.HasPrefix(line, "| bridge/baseline/tcp/r=4 |") && a:
			t.Errorf("table row: %s", line)
		}
	}
}

func boolText(v bool) string {
	if v {
		return "true"
	}
	return "false"
}
