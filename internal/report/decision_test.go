package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// TestNormCellCounts: the normalized cell names what its decision rests
// on. Without the baseline's first trial, rfs at 1 replica has 2 complete
// pairs (too few for a paired interval) and is decided on Fieller's
// interval of its 3 trials against the baseline's 2; the report looks up
// the baseline's count rather than repeating the row's.
func TestNormCellCounts(t *testing.T) {
	var smp []results.Sample
	for _, x := range quickSamples() {
		if x.Cell.Replicas == 1 && x.Cell.Tuning == "baseline" && x.Trial == 1 {
			continue
		}
		smp = append(smp, x)
	}
	m := analysis.Build(quickStudy(t), smp)
	n := newNumbers(m)
	r, ok := n.row(results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}, results.MetricBitrate, -1)
	if !ok || r.VsBaseline == nil {
		t.Fatal("no rfs row compared with the baseline")
	}
	if got := n.normCell(r); !strings.Contains(got, "fieller, n=3 vs baseline's 2:") {
		t.Errorf("cell %q, want the decision on 3 trials against 2", got)
	}
}

func TestTrialsText(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int
		want   string
	}{
		{0, 0, "n per cell as measured"},
		{20, 20, "20 per cell planned"},
		{0, 20, "20 per cell planned"},
		{3, 10, "3 to 10 per cell, adaptive"},
	} {
		if got := trialsText(tc.lo, tc.hi); !strings.HasPrefix(got, tc.want) {
			t.Errorf("trialsText(%d, %d) = %q, want %q...", tc.lo, tc.hi, got, tc.want)
		}
	}
}
