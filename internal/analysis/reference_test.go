package analysis

import (
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRefMatchesWorkload: a reference naming a workload matches each
// variant of its sweep; one naming a variant matches only that one.
func TestRefMatchesWorkload(t *testing.T) {
	row := func(w string) results.SummaryRow {
		return results.SummaryRow{Cell: results.Cell{Datapath: "flannel-udp", Tuning: "baseline", Workload: w, Replicas: 1}, Metric: "bitrate"}
	}
	all := study.Reference{Workload: "udp", Metric: "bitrate"}
	one := study.Reference{Workload: "udp@500M", Metric: "bitrate"}
	for _, tc := range []struct {
		ref  study.Reference
		row  string
		want bool
	}{
		{all, "udp", true}, {all, "udp@500M", true}, {all, "udp@1500M", true}, {all, "udp-intra", false}, {all, "tcp", false},
		{one, "udp@500M", true}, {one, "udp@1500M", false}, {one, "udp", false},
		{study.Reference{Metric: "bitrate"}, "anything", true},
	} {
		if got := RefMatches(tc.ref, row(tc.row)); got != tc.want {
			t.Errorf("reference workload %q vs row %q: %v, want %v", tc.ref.Workload, tc.row, got, tc.want)
		}
	}
}

// TestRefRatio: a ratio reference is our mean at its datapath over our
// mean at the same point of the datapath it names.
func TestRefRatio(t *testing.T) {
	row := func(dp, w string, mean float64) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: "transactions_per_s", CPU: -1, N: 5, Mean: mean}}
	}
	rows := []Row{row("bridge", "rr-chc", 1000), row("macvlan", "rr-chc", 1300), row("macvlan", "rr-chhc", 900)}
	r := 1.3163
	m := matchReferences([]study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}, rows)[0]
	if len(m.Rows) != 2 || len(m.RatioRows) != 1 || m.RatioLow != 1.3 || m.RatioHigh != 1.3 {
		t.Errorf("match %+v: want the rr-chc row's ratio 1.3 only (rr-chhc has no bridge row)", m)
	}
}
