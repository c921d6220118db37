package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRefMethodShown: a published number measured otherwise than ours
// says how, in the cell's inline note and in the reference table; one
// measured alike shows just the number and the study's note.
func TestRefMethodShown(t *testing.T) {
	v := 0.013
	row := func(w string, ref int) analysis.Row {
		return analysis.Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: results.MetricJitter, CPU: -1, N: 3, Mean: 0.01}, Refs: []int{ref}}
	}
	m := analysis.Model{
		Rows: []analysis.Row{row("kern", 0), row("user", 1)},
		References: []analysis.RefMatch{
			{Reference: study.Reference{Workload: "kern", Metric: results.MetricJitter, Value: &v, Note: "paper Table V"}, Label: analysis.RefLabel, Method: analysis.PktgenJitter},
			{Reference: study.Reference{Workload: "user", Metric: results.MetricJitter, Value: &v, Note: "paper Table V"}, Label: analysis.RefLabel},
		},
	}
	n := newNumbers(m)
	if got := n.paperNote(m.Rows[0], false); !strings.HasSuffix(got, "("+analysis.PktgenJitter+")") {
		t.Errorf("pktgen row's note %q does not say how the paper's was timed", got)
	}
	if got := n.paperNote(m.Rows[1], false); strings.Contains(got, "(") {
		t.Errorf("iperf3 row's note %q says more than the number", got)
	}
	tb, _ := n.refTable()
	if got := tb.Rows[0][4]; got != "paper Table V; "+analysis.PktgenJitter {
		t.Errorf("reference table note %q", got)
	}
	if got := tb.Rows[1][4]; got != "paper Table V" {
		t.Errorf("reference table note %q, want the study's alone", got)
	}
}

// A published ratio is shown as the source gave it, as a published
// normalized value is: %.3f cut nic-modes' 1.0793 to 1.079 and its
// 0.2201 to 0.220.
func TestRefValueRatioAsPublished(t *testing.T) {
	for r, want := range map[float64]string{1.0793: "numa-other / numa-same = 1.0793", 0.2201: "numa-other / numa-same = 0.2201", 0.5: "numa-other / numa-same = 0.5"} {
		ref := study.Reference{Workload: "numa-other", AgainstWorkload: "numa-same", Metric: results.MetricBitrate, Ratio: &r}
		if got := refValue(analysis.RefMatch{Reference: ref}); got != want {
			t.Errorf("ratio %v: %q, want %q", r, got, want)
		}
	}
}
