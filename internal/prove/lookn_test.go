package prove

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// A cell decided at its look after 5 trials of the 7 it ran gives n=5,
// the trials the decision and its interval rest on, as the run's report
// and advise --run's sightings do; it gave n=7.
func TestProofCellNIsTheLooks(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	st := results.Stop{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}, Metric: "bitrate",
		N: 7, Valid: 7, Look: 5, Decision: "better", Versus: "baseline", Ratio: f(1.2), Low: f(1.1), High: f(1.3), Method: "paired-t", Confidence: 0.9875}
	_, cs := cells(nil, analysis.Model{}, []results.Stop{st}, "baseline", "rfs", true, nil)
	if len(cs) != 1 || cs[0].N != 5 {
		t.Fatalf("cells %+v, want one of n=5", cs)
	}
	if txt := measured(&advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Cells: cs, Margin: 0.02}); !strings.Contains(txt, "98.75%, n=5, better") {
		t.Errorf("measured %q", txt)
	}
}
