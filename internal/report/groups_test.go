package report

import (
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// A row with two groups of trials gets a line in summary.md's "Two
// groups of trials" table, in display units, with how the groups fall
// over the rounds; a model without such rows has no table.
func TestGroupsTable(t *testing.T) {
	cell := results.Cell{Datapath: "calico-vxlan", Tuning: "rps+", Workload: "tcp", Replicas: 1}
	row := func(g *stats.Groups) analysis.Row {
		return analysis.Row{SummaryRow: results.SummaryRow{Cell: cell, Metric: results.MetricBitrate, CPU: -1, N: 8}, Groups: g}
	}
	m := analysis.Model{Study: "t", Rows: []analysis.Row{
		row(&stats.Groups{LowMean: 7.2e9, HighMean: 8.5e9, LowN: 3, HighN: 5, Separation: 9.3}),
		row(&stats.Groups{LowMean: 7e9, HighMean: 9e9, LowN: 4, HighN: 4, Separation: math.Inf(1), InTime: true}),
		row(nil),
	}}
	md := markdownOf(t, nil, m)
	for _, want := range []string{
		"## Two groups of trials",
		"| calico-vxlan tcp rps+ r=1 | bitrate | 7.20 Gbit/s (3 trials) | 8.50 Gbit/s (5 trials) | 9.3 sd | alternating |",
		"| 7.00 Gbit/s (4 trials) | 9.00 Gbit/s (4 trials) | one value each | one group, then the other (a level shift) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	m.Rows = m.Rows[2:]
	if strings.Contains(markdownOf(t, nil, m), "Two groups") {
		t.Error("a table without rows")
	}
}
