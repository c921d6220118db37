package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

func dpRow(dp, wl, metric string, mean float64) results.SummaryRow {
	return results.SummaryRow{
		Cell:   results.Cell{Datapath: dp, Tuning: "baseline", Workload: wl, Replicas: 1},
		Metric: metric, CPU: -1, N: 3, Mean: mean, CI95Low: mean * 0.9, CI95High: mean * 1.1,
	}
}

func TestDatapathFigures(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rows := []results.SummaryRow{
		dpRow("bridge", "tcp-inter", results.MetricBitrate, 9e9),
		dpRow("bridge", "udp-inter", results.MetricBitrate, 1e9),
		dpRow("calico-vxlan", "tcp-inter", results.MetricBitrate, 6e9),
		dpRow("calico-vxlan", "udp-inter", results.MetricBitrate, 0.9e9),
		dpRow("calico-vxlan", "udp-inter", "lost_percent", 3),
		dpRow("bridge", "tcp-inter", "pod_setup_ms", 2.5),
	}
	figs, tables := datapathFigures(s, rows)
	if len(figs) != 3 || len(tables) != 3 {
		t.Fatalf("%d figures, %d tables; want 3 each (bitrate, loss, setup)", len(figs), len(tables))
	}
	if !strings.Contains(string(figs[0].SVG), "<svg") {
		t.Error("bitrate figure has no SVG")
	}
	bt := tables[0]
	if len(bt.Rows) != 2 || bt.Rows[0][0] != "bridge" || len(bt.Head) != 3 {
		t.Fatalf("bitrate table %+v", bt)
	}
	// A datapath without a value for a workload shows a dash, not a zero.
	lt := tables[1]
	if lt.Rows[0][0] != "bridge" || lt.Rows[0][1] != "—" {
		t.Errorf("loss table %+v", lt)
	}
}

func TestNoDatapathFiguresForOneDatapath(t *testing.T) {
	rows := []results.SummaryRow{dpRow("bridge", "tcp", results.MetricBitrate, 1e9)}
	if figs, _ := datapathFigures(&study.Study{}, rows); len(figs) != 0 {
		t.Errorf("%d figures for a single-datapath run", len(figs))
	}
}
