package report

import (
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
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

// Our number beside a published one says how many trials it rests on
// where the summary's "(n=K)" would (a cell that stopped short of the
// planned count), and a ratio's interval the trials of both its rows: the
// column read "9.51 [9.40, 9.62] Gbit/s" and "0.900 [0.850, 0.950]
// (fieller)" in an adaptive run whose cells stopped at 3 to 10 trials.
func TestOursForNamesN(t *testing.T) {
	v, ratio := 9e9, 1.08
	macvlan := dpRow("macvlan", "rr-chc", results.MetricBitrate, 9e9)
	ovs := dpRow("ovs", "rr-chc", results.MetricBitrate, 10e9)
	macvlan.N, ovs.N = 4, 10
	n := newNumbers(analysis.Model{TrialsPlanned: 10, Rows: []analysis.Row{macvlan, ovs}})
	ref := study.Reference{Datapath: "macvlan", Workload: "rr-chc", Metric: results.MetricBitrate, Value: &v}
	keys := []analysis.Key{analysis.RowKey(macvlan)}
	if got := n.oursFor(analysis.RefMatch{Reference: ref, Rows: keys}); !strings.HasSuffix(got, "] Gbit/s (n=4)") {
		t.Errorf("value: %q, want the cell's 4 trials", got)
	}
	if got := n.oursFor(analysis.RefMatch{Reference: study.Reference{Datapath: "ovs", Metric: results.MetricBitrate, Value: &v},
		Rows: []analysis.Key{analysis.RowKey(ovs)}}); strings.Contains(got, "(n=") {
		t.Errorf("value of a cell at the planned count: %q, want no n, as the summary's tables", got)
	}
	ref.Value, ref.Ratio, ref.Against = nil, &ratio, "ovs"
	for _, c := range []struct {
		ci   stats.Choice
		want string
	}{
		{stats.Choice{RatioCI: stats.RatioCI{Ratio: 0.9, Low: 0.85, High: 0.95, Method: stats.MethodFieller}}, "macvlan / ovs = 0.900 [0.850, 0.950] (fieller, n=4 and 10)"},
		{stats.Choice{RatioCI: stats.RatioCI{Ratio: 0.9, Low: 0.85, High: 0.95, Method: stats.MethodPairedT}}, "macvlan / ovs = 0.900 [0.850, 0.950] (paired-t, 4 pairs; n=4 and 10)"},
		{stats.Choice{RatioCI: stats.RatioCI{Ratio: 0.9, Low: math.NaN(), High: math.NaN(), Method: stats.MethodNone}}, "macvlan / ovs = 0.900 (ratio of means, no interval; n=4 and 10)"},
	} {
		m := analysis.RefMatch{Reference: ref, Rows: keys, RatioRows: keys, RatioLow: 0.9, RatioHigh: 0.9,
			RatioCI: &analysis.Pair{Against: "ovs", Paired: stats.PairedCI{N: 4}, Chosen: c.ci}}
		if got := n.oursFor(m); got != c.want {
			t.Errorf("ratio (%s): %q, want %q", c.ci.Method, got, c.want)
		}
	}
}

// A long method note (Table III's counting, ~400 characters) is named in
// a table cell and given whole in the references table alone; a short
// one stays in the cell.
func TestInlineMethodNoteShort(t *testing.T) {
	long := strings.Repeat("x", inlineMethodMax+1)
	if got := inlineMethodNote(long); strings.Contains(got, long) || !strings.Contains(got, "Published reference numbers") {
		t.Errorf("long note inline: %q", got)
	}
	if got := inlineMethodNote("placement fell back"); got != " (placement fell back)" {
		t.Errorf("short note inline: %q", got)
	}
	if got := inlineMethodNote(""); got != "" {
		t.Errorf("no note inline: %q", got)
	}
}
