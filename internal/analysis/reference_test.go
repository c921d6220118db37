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
