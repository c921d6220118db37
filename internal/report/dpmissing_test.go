package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A workload no trial measured on any datapath (every trial failed, or
// the run ended first) keeps its column in "Datapaths side by side",
// its cells "missing" as in the other tables, from the rows of N = 0
// analysis.Summarize gives its planned cells: the table filtered its
// workloads to those with a value and dropped it, as if the study never
// asked for it. Two such workloads are two columns, not one folded as
// on the same pods; a comparison of nothing but such columns draws no
// figure of empty slots.
func TestDatapathTablesKeepUnmeasuredWorkloads(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	empty := func(dp, wl, metric string) analysis.Row {
		r := dpRow(dp, wl, metric, math.NaN())
		r.N, r.CI95Low, r.CI95High = 0, math.NaN(), math.NaN()
		return r
	}
	rows := []analysis.Row{
		dpRow("bridge", "tcp", results.MetricBitrate, 9e9),
		dpRow("calico-vxlan", "tcp", results.MetricBitrate, 6e9),
		empty("bridge", "udp", results.MetricBitrate),
		empty("calico-vxlan", "udp", results.MetricBitrate),
		empty("bridge", "setup-a", "pod_setup_ms"),
		empty("calico-vxlan", "setup-a", "pod_setup_ms"),
		empty("bridge", "setup-b", "pod_setup_ms"),
		empty("calico-vxlan", "setup-b", "pod_setup_ms"),
	}
	m := analysis.Model{Rows: rows}
	tables := datapathTables(s, m)
	if len(tables) != 2 {
		t.Fatalf("%d tables, want bitrate's and pod set-up's", len(tables))
	}
	bt := tables[0]
	if !slices.Equal(bt.Head[1:], []string{"tcp", "udp"}) {
		t.Fatalf("bitrate table head %q, want tcp and udp", bt.Head)
	}
	for _, r := range bt.Rows {
		if r[2] != "missing" {
			t.Errorf("%s × udp: %q, want missing", r[0], r[2])
		}
	}
	if st := tables[1]; !slices.Equal(st.Head[1:], []string{"setup-a", "setup-b"}) || st.Rows[0][1] != "missing" || st.Rows[0][2] != "missing" {
		t.Errorf("pod set-up table %q %q: want two columns, missing", st.Head, st.Rows)
	}
	// A cell the run did not plan (spec.only) is "not run", as elsewhere.
	planned := []results.Stop{{Cell: rows[0].Cell}, {Cell: rows[1].Cell}, {Cell: rows[3].Cell}}
	if got := datapathTables(s, analysis.Model{Rows: rows, Stops: planned})[0].Rows; got[0][2] != "not run" || got[1][2] != "missing" {
		t.Errorf("udp cells %q, %q: want not run at bridge, missing at calico-vxlan", got[0][2], got[1][2])
	}
	if !strings.Contains(datapathCaption(s, m), `"missing" where a planned cell has no value`) {
		t.Errorf("caption %q does not say what missing is", datapathCaption(s, m))
	}
	figs, _ := datapathFigures(s, m)
	var titles []string
	for _, f := range figs {
		titles = append(titles, f.Title)
		if f.Title == "bitrate by datapath" && !strings.Contains(f.Caption, "No value for bridge × udp, calico-vxlan × udp") {
			t.Errorf("bitrate caption %q, want the missing cells named", f.Caption)
		}
	}
	if !slices.Equal(titles, []string{"bitrate by datapath"}) {
		t.Errorf("figures %q, want bitrate's alone (pod set-up has no value to draw)", titles)
	}
}

// A measured cell without a value of one metric is not missing: every
// cell of a workload has a row of each metric it recorded anywhere, so
// daemon memory, recorded where the datapath runs a daemon (flanneld),
// has rows of N = 0 at the datapaths that run none. They were marked
// "missing", which the caption says of failed trials; they show "—".
func TestDatapathTableUnrecordedMetricIsNotMissing(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	daemons := dpRow("bridge", "tcp", "daemons_rss_bytes", math.NaN())
	daemons.N, daemons.CI95Low, daemons.CI95High = 0, math.NaN(), math.NaN()
	rows := []analysis.Row{
		dpRow("bridge", "tcp", results.MetricBitrate, 9e9),
		dpRow("flannel-udp", "tcp", results.MetricBitrate, 3e9),
		daemons,
		dpRow("flannel-udp", "tcp", "daemons_rss_bytes", 30e6),
	}
	var found bool
	for _, c := range datapathComparisons(s, analysis.Model{Rows: rows}) {
		if c.Metric != "daemons_rss_bytes" {
			continue
		}
		found = true
		tb := c.table()
		if tb.Rows[0][0] != "bridge" || tb.Rows[0][1] != "—" || tb.Rows[1][1] == "—" || tb.Rows[1][1] == "missing" {
			t.Errorf("daemon memory rows %q: want — at bridge, a value at flannel-udp", tb.Rows)
		}
	}
	if !found {
		t.Fatal("no daemon memory comparison")
	}
}
