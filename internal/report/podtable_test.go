package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Pod set-up is one measurement of the pods every tuning ran on: one row
// (or, at one replica count, one cell) for all tunings, not the same
// number once per tuning; tunings that ran on other pods (values that
// differ) keep their own.
func TestPodTableFoldsTunings(t *testing.T) {
	build := func(replicas []int, rpsSetup float64) string {
		s, err := study.Parse("p.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: p}
spec:
  datapaths: [calico-vxlan]
  tunings: [baseline, rps]
  workloads: [{name: tcp, tool: iperf3}]
  replicas: `+strings.ReplaceAll(fmt.Sprint(replicas), " ", ", ")+`
  trials: 2
  duration: 5s
`), study.Options{}, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		var samples []results.Sample
		for _, reps := range replicas {
			for trial := 1; trial <= 2; trial++ {
				for _, tn := range []string{"baseline", "rps"} {
					m := map[string]float64{results.MetricBitrate: 1e10 + float64(trial)}
					if trial == 1 {
						m["pod_setup_ms"] = 2.5
						if tn == "rps" {
							m["pod_setup_ms"] = rpsSetup
						}
					}
					samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: reps},
						Trial: trial, Start: t0, End: t0.Add(5 * time.Second), Metrics: m})
				}
			}
		}
		var b strings.Builder
		if err := writeMarkdown(&b, s, analysis.Build(s, samples), nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	table := func(md string) string {
		_, md, _ = strings.Cut(md, "### pod_setup_ms (ms)")
		md, _, _ = strings.Cut(md, "###")
		return md
	}
	if md := table(build([]int{1, 4}, 2.5)); !strings.Contains(md, "| every tuning (the same pods) | 2.5 (n=1, no CI) | 2.5 (n=1, no CI) |") || strings.Contains(md, "| rps |") {
		t.Errorf("pod set-up of shared pods:\n%s", md)
	}
	if md := table(build([]int{1, 4}, 3.5)); !strings.Contains(md, "| baseline | 2.5 (n=1, no CI) | 2.5 (n=1, no CI) |") || !strings.Contains(md, "| rps | 3.5 (n=1, no CI) | 3.5 (n=1, no CI) |") {
		t.Errorf("pod set-up of other pods:\n%s", md)
	}
	if row := mdRow(t, build([]int{1}, 2.5), "pod_setup_ms (ms)"); row != "| pod_setup_ms (ms) | 2.5 (n=1, no CI) | the same pods |" {
		t.Errorf("pod set-up of shared pods at one replica count: %s", row)
	}
	if row := mdRow(t, build([]int{1}, 3.5), "pod_setup_ms (ms)"); row != "| pod_setup_ms (ms) | 2.5 (n=1, no CI) | 3.5 (n=1, no CI) |" {
		t.Errorf("pod set-up of other pods at one replica count: %s", row)
	}
}
