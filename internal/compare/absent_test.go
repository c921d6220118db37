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
	"github.com/cnibench/cnibench/internal/study"
)

// at is a counted trial of bridge/baseline/tcp/r=REPLICAS.
func at(replicas, trial int, v float64) results.Sample {
	return results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: replicas}, Trial: trial,
		Metrics: bitrate(v)}
}

// fixedStudy is a study of bridge/baseline/tcp at the replica counts,
// n trials each: a fixed design that records no stops.
func fixedStudy(n int, replicas ...int) *study.Study {
	return &study.Study{Spec: study.Spec{Datapaths: []study.Datapath{{Name: "bridge"}}, Tunings: []study.Tuning{{Name: "baseline"}},
		Workloads: []study.Workload{{Name: "tcp"}}, Replicas: replicas, Trials: study.Fixed(n)}}
}

// TestCellBNeverReached: A has r=1 and r=4, B (a run of the same study
// cut short, by a CI timeout say) only r=1, and a fixed design records
// no stops. The r=4 cell was left out of the table and the gate passed
// on it, saying nothing; now it is a row, missing because B did not
// reach it, the gate fails it, and B is said not to have finished. With
// B's study unknown the old reading holds (no trace of the cell in B, no
// row); a cell B's study leaves out is named, not a row.
func TestCellBNeverReached(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 5; i++ {
		a = append(a, at(1, i, 10e9), at(4, i, 10e9))
		b = append(b, at(1, i, 10e9))
	}
	rb := counted(b)
	s := fixedStudy(5, 1, 4)
	rows := Runs(counted(a), rb, []string{results.MetricBitrate}, nil, nil, s.Cells())
	if len(rows) != 2 || !rows[1].Missing || rows[1].Absent != gate.NotReached || rows[1].Key != "bridge/baseline/tcp/r=4" || rows[0].Missing {
		t.Fatalf("rows %+v, want r=1 compared and r=4 missing (not reached)", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || !gate.Failed(vs) || !strings.Contains(vs[1].Why, "B did not reach it") {
		t.Errorf("gate: %+v %v, want r=4 failed: B did not reach it", vs, err)
	}
	if u := analysis.Unfinished(s, rb); len(u) != 1 || u[0].Replicas != 4 {
		t.Errorf("unfinished %+v, want r=4 (a fixed design records no stops)", u)
	}
	if u := analysis.Unfinished(fixedStudy(5, 1), rb); len(u) != 0 {
		t.Errorf("unfinished %+v of a run that finished", u)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil || !strings.Contains(md.String(), "missing: B did not reach it") {
		t.Errorf("table (%v):\n%s", err, md.String())
	}
	if rows := Runs(counted(a), rb, []string{results.MetricBitrate}, nil, nil, nil); len(rows) != 1 {
		t.Errorf("B's study unknown: %+v, want r=1 alone", rows)
	}
	// B's study has r=1 only: r=4 is no row, and is named.
	one := fixedStudy(5, 1).Cells()
	if rows := Runs(counted(a), rb, []string{results.MetricBitrate}, nil, nil, one); len(rows) != 1 {
		t.Errorf("B's study without r=4: %+v, want r=1 alone", rows)
	}
	h := NewHead("a", "b", counted(a), rb, nil, one, false)
	if len(h.LeftOutB) != 1 || h.LeftOutB[0] != "bridge/baseline/tcp/r=4" ||
		!strings.Contains(strings.Join(h.notes(), "\n"), "B's study leaves out 1 of A's cells, which are not compared: bridge/baseline/tcp/r=4") {
		t.Errorf("left out %q, notes %q", h.LeftOutB, h.notes())
	}
	if h := NewHead("a", "b", counted(a), rb, nil, s.Cells(), false); len(h.LeftOutB) != 0 {
		t.Errorf("left out %q of a B whose study has every cell of A", h.LeftOutB)
	}
}

// TestCellBudgetRanOut: a cell whose block started with B's budget
// spent ("budget spent before this block") was counted as tried and
// called "every trial of the cell failed there"; it is missing for its
// own reason, which the table, the gate and the CSV and JSON say. One
// stop of a cell B ended early ("running") with no trial is not reached,
// not failed. Runs of one datapath each still pair when B ran nothing
// under its name: B's study names it.
func TestCellBudgetRanOut(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 5; i++ {
		a = append(a, at(1, i, 10e9), at(4, i, 10e9), at(8, i, 10e9))
		b = append(b, at(1, i, 10e9))
	}
	rb := counted(b)
	c4, c8 := a[1].Cell, a[2].Cell
	rb.Stops = []results.Stop{{Cell: b[0].Cell, Status: "max", N: 5}, {Cell: c4, Status: "budget", Reason: "budget spent before this block",
		Failed: "budget spent before this block"}, {Cell: c8, Status: "running"}}
	rows := Runs(counted(a), rb, []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 3 || rows[1].Absent != gate.BudgetOut || rows[1].GaveUp != "" || rows[2].Absent != gate.NotReached {
		t.Fatalf("rows %+v, want r=4 missing for the budget, r=8 not reached", rows)
	}
	vs, err := gate.Check([]gate.Rule{{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}}, Cells(rows))
	if err != nil || !vs[1].Fail || !strings.Contains(vs[1].Why, "B's budget ran out before this cell") || strings.Contains(vs[1].Why, "failed") {
		t.Errorf("gate: %+v %v", vs, err)
	}
	var md, cs, js bytes.Buffer
	if err := WriteMarkdown(&md, Head{}, rows); err != nil || !strings.Contains(md.String(), "missing: B's budget ran out before this cell") {
		t.Errorf("table (%v):\n%s", err, md.String())
	}
	if err := Write(&cs, "csv", Head{}, rows, vs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("csv %v:\n%s", err, cs.String())
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if r := recs[2]; r[col["absent_in_b"]] != "budget_out" || r[col["verdict"]] != "fail" || r[col["missing_in_b"]] != "true" {
		t.Errorf("csv row of r=4: %q", r)
	}
	if r := recs[1]; r[col["verdict"]] != "pass" || r[col["gate_level"]] != "0.95" || r[col["gate_change"]] == "" || r[col["gate_ratio_low"]] == "" {
		t.Errorf("csv row of r=1: %q", r)
	}
	if err := Write(&js, "json", Head{}, rows, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema int `json:"schema_version"`
		Rows   []struct {
			Absent  string `json:"absent_in_b"`
			Verdict string `json:"verdict"`
		} `json:"rows"`
		Verdicts []struct {
			Metric  string   `json:"metric"`
			Verdict string   `json:"verdict"`
			Level   *float64 `json:"level"`
			Change  *float64 `json:"change"`
			Low     *float64 `json:"ratio_low"`
			High    *float64 `json:"ratio_high"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Schema != SchemaVersion || doc.Rows[1].Absent != "budget_out" ||
		doc.Rows[2].Verdict != "fail" || len(doc.Verdicts) != 3 {
		t.Fatalf("json %v: %+v\n%s", err, doc, js.String())
	}
	if v := doc.Verdicts[0]; v.Metric != "bitrate" || v.Verdict != "pass" || v.Level == nil || *v.Level != 0.95 || v.Change == nil || v.Low == nil || v.High == nil {
		t.Errorf("judged verdict in JSON: %+v", v)
	}
	if v := doc.Verdicts[1]; v.Verdict != "fail" || v.Level != nil || v.Change != nil || v.Low != nil {
		t.Errorf("unjudged verdict in JSON: %+v", v)
	}
	// B on another datapath that ran nothing of it: its study names it.
	other := &results.Run{}
	cells := []results.Cell{{Datapath: "cilium", Tuning: "baseline", Workload: "tcp", Replicas: 1}}
	if rows := Runs(counted(a), other, []string{results.MetricBitrate}, nil, nil, cells); len(rows) != 1 || rows[0].Absent != gate.NotReached ||
		rows[0].Key != "bridge|cilium/baseline/tcp/r=1" {
		t.Errorf("B of one datapath that ran nothing: %+v", rows)
	}
}

// TestHeadPairsAsRows: A's study has two datapaths, A measured only
// bridge; B's study and samples are ovs alone. The rows know A's study,
// so bridge is not ovs; the head's words (LeftOutB, the one-core table)
// must pair the same way, not take both runs for single-datapath runs
// and match bridge with ovs. One run by two paths differs in nothing,
// even for a build whose version names none.
func TestHeadPairsAsRows(t *testing.T) {
	var a, b []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, at(1, i, 10e9))
		x := at(1, i, 10e9)
		x.Cell.Datapath = "ovs"
		b = append(b, x)
	}
	sa := fixedStudy(3, 1)
	sa.Spec.Datapaths = append(sa.Spec.Datapaths, study.Datapath{Name: "ovs"})
	sb := fixedStudy(3, 1)
	sb.Spec.Datapaths = []study.Datapath{{Name: "ovs"}}
	h := NewHead("a", "b", counted(a), counted(b), sa.Cells(), sb.Cells(), false)
	if len(h.LeftOutB) != 1 || h.LeftOutB[0] != "bridge/baseline/tcp/r=1" {
		t.Errorf("left out %q, want bridge/baseline/tcp/r=1 (B's study has no bridge)", h.LeftOutB)
	}
	env := results.Env{Version: "dev", Hostname: "h"}
	ra, rb := counted(a), counted(a)
	ra.Env, ra.HasEnv, rb.Env, rb.HasEnv = env, true, env, true
	if h := NewHead("a", "a/.", ra, rb, nil, nil, true); len(h.Differ) != 0 {
		t.Errorf("one run by two paths differs in %q", h.Differ)
	}
}
