package analysis

import (
	"bytes"
	"math"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A cell whose bitrate alternates between two values gets Groups on its
// bitrate row (a headline metric), not on its retransmits or per-core
// rows, nor on a cell scattering around one value; the groups survive
// summary.json, an unbounded separation as null.
func TestSummarizeFlagsTwoGroups(t *testing.T) {
	var samples []results.Sample
	for trial := 1; trial <= 8; trial++ {
		for _, tn := range []string{"baseline", "rfs"} {
			br := 9e9 * wobble(trial%3+1)
			if tn == "rfs" && trial%2 == 0 {
				br = 7e9 // the flow hashed onto the busy core
			} else if tn == "rfs" {
				br = 9e9
			}
			samples = append(samples, results.Sample{
				Cell:    results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1},
				Trial:   trial,
				Metrics: map[string]float64{results.MetricBitrate: br, results.MetricRetransmits: float64(trial % 2)},
				Cores:   []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 50 + 40*float64(trial%2)}}},
			})
		}
	}
	m := Build(quickStudy(t, "replicas=[1]"), samples)
	for _, r := range m.Rows {
		want := r.Tuning == "rfs" && r.Metric == results.MetricBitrate && r.CPU < 0
		if (r.Groups != nil) != want {
			t.Errorf("%s %s cpu %d: groups %+v", r.Tuning, r.Metric, r.CPU, r.Groups)
		}
	}
	g := find(t, m.Rows, "rfs", 1, results.MetricBitrate, -1).Groups
	if g == nil || g.LowMean != 7e9 || g.HighMean != 9e9 || g.LowN != 4 || g.HighN != 4 || g.InTime || !math.IsInf(g.Separation, 1) {
		t.Fatalf("groups %+v", g)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := find(t, back.Rows, "rfs", 1, results.MetricBitrate, -1).Groups; b == nil || *b != *g {
		t.Errorf("read back %+v, want %+v", b, g)
	}
}
