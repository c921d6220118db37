package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// A wide row gets a line in summary.md's "Trials that spread widely"
// table, its trials in display units in the order they ran, and the end
// of the run names it; a model without such rows has neither.
func TestWideTableAndLine(t *testing.T) {
	cell := results.Cell{Datapath: "calico-vxlan", Tuning: "rps+", Workload: "tcp", Replicas: 1}
	wide := &analysis.WideSpread{Wide: stats.Wide{Spread: 0.152, Typical: 0.0114, Others: 8, DF: 24, P: 1e-16},
		Values: []float64{12.63e9, 17.87e9, 13.66e9, 16.84e9, 13.46e9}}
	m := analysis.Model{Study: "t", Rows: []analysis.Row{
		{SummaryRow: results.SummaryRow{Cell: cell, Metric: results.MetricBitrate, CPU: -1, N: 5}, Wide: wide},
		{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}, Metric: results.MetricBitrate, CPU: -1, N: 5}},
	}}
	md := markdownOf(t, nil, m)
	for _, want := range []string{
		"## Trials that spread widely",
		"| calico-vxlan tcp rps+ r=1 | bitrate | 12.63, 17.87, 13.66, 16.84, 13.46 Gbit/s | ±15.2% | ±1.1% (8 cells) | p<0.001 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	want := `note: 1 cell's trials spread far more than the other cells of their workload (calico-vxlan tcp rps+ r=1: ±15% against ±1.1%): read their trials before their intervals (summary.md, "Trials that spread widely")`
	if l := WideLine(m.Rows); l != want {
		t.Errorf("line\n%s\nwant\n%s", l, want)
	}
	// Wide in a second metric too (a request/response cell's latency):
	// named once.
	twice := append(m.Rows, analysis.Row{SummaryRow: results.SummaryRow{Cell: cell, Metric: "rtt_mean_us", CPU: -1, N: 5}, Wide: wide})
	if l := WideLine(twice); l != want {
		t.Errorf("a cell wide in two metrics:\n%s\nwant\n%s", l, want)
	}
	m.Rows = m.Rows[1:]
	if strings.Contains(markdownOf(t, nil, m), "spread widely") || WideLine(m.Rows) != "" {
		t.Error("a table or a line without wide rows")
	}
}

// The glance marks a cell whose trials are two groups or spread widely,
// two groups first (it says more), and nothing otherwise.
func TestSpreadNote(t *testing.T) {
	w := &analysis.WideSpread{}
	g := &stats.Groups{}
	for _, tc := range []struct {
		r    analysis.Row
		want string
	}{
		{analysis.Row{}, ""},
		{analysis.Row{Wide: w}, ", wide spread"},
		{analysis.Row{Groups: g}, ", two groups"},
		{analysis.Row{Groups: g, Wide: w}, ", two groups"},
	} {
		if got := spreadNote(tc.r); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
