package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// The marked attempts' table shows the share of the planned window the
// collectors recorded, "-" where it was not measured (a failed attempt).
func TestMarkedTableWindow(t *testing.T) {
	pct := 12.0
	m := analysis.Model{Marked: []analysis.Marked{
		{Cell: results.Cell{Datapath: "flannel-udp", Tuning: "baseline", Workload: "udp@1500M", Replicas: 1}, Trial: 1, Attempt: 1,
			Why: "disturbed, repeated: the collectors recorded 12% of the measured window < 80%", Noise: &results.Noise{WindowPct: &pct}},
		{Cell: results.Cell{Datapath: "flannel-udp", Tuning: "baseline", Workload: "udp@1500M", Replicas: 1}, Trial: 2, Attempt: 1,
			Why: "iperf3: unable to read from stream socket"},
	}}
	tb := markedTable(m, guardView{})
	col := -1
	for i, h := range tb.Head {
		if h == "window %" {
			col = i
		}
	}
	if col < 0 || len(tb.Rows) != 2 {
		t.Fatalf("head %v, %d rows", tb.Head, len(tb.Rows))
	}
	if tb.Rows[0][col] != "12" || tb.Rows[1][col] != "-" {
		t.Errorf("window column %q and %q, want 12 and -", tb.Rows[0][col], tb.Rows[1][col])
	}
	if !strings.Contains(markedCaption, "window %") {
		t.Error("the caption does not say what the window column is")
	}
}
