package analysis

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRefMethodPktgenJitter: a published jitter beside ours for a load
// pktgen sent says the two were timed differently; beside iperf3's own, or
// for another metric of the pktgen load, nothing is said. summary.json
// keeps it.
func TestRefMethodPktgenJitter(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [flannel-vxlan]
  trials: 3
  duration: 10s
  workloads:
    - {name: kern, tool: iperf3, protocol: udp, rates: [500M, 1G], sender: pktgen}
    - {name: user, tool: iperf3, protocol: udp, rate: 500M}
  reference:
    - {workload: kern, metric: jitter_ms, value: 0.013}
    - {workload: kern, metric: bitrate, value: 5e8}
    - {workload: user, metric: jitter_ms, value: 0.013}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, w := range []string{"kern@500M", "kern@1G", "user"} {
		for trial := 1; trial <= 3; trial++ {
			samples = append(samples, results.Sample{
				Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricJitter: 0.01 * wobble(trial), results.MetricBitrate: 4.9e8 * wobble(trial)},
			})
		}
	}
	m := Build(s, samples)
	for i, want := range []string{PktgenJitter, "", ""} {
		if got := m.References[i].Method; got != want {
			t.Errorf("reference %d (%s of %s): method %q, want %q", i, m.References[i].Reference.Metric, m.References[i].Reference.Workload, got, want)
		}
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.References[0].Method != PktgenJitter || back.References[2].Method != "" {
		t.Errorf("summary.json read back methods %q, %q", back.References[0].Method, back.References[2].Method)
	}
}
