package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// A workload whose placement fell back (nic-modes' numa-same and
// numa-other on a one-NUMA-node machine: pin.fallback: mark, samples
// with pin_not_comparable = 1) is marked not comparable where its
// numbers meet the paper's or others': the reference table, the
// datapath tables and the glance; its group says so once, in a note,
// not as a metric row of "1". The workload that ran its placement is
// not marked.
func TestPinFellBackMarked(t *testing.T) {
	s, samples := pinStudy(t)
	m := analysis.Build(s, samples)
	var b strings.Builder
	if err := writeMarkdown(&b, s, m, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	mark := "· " + analysis.PinFellBack
	section := func(title string) string {
		_, rest, _ := strings.Cut(md, "## "+title+"\n")
		sec, _, _ := strings.Cut(rest, "\n## ")
		return sec
	}
	// The glance has a table per workload, a row per datapath: near's
	// and far's four are marked, plain's two not.
	if g := section("At a glance"); !strings.Contains(g, "plain") || strings.Count(g, mark) != 4 {
		t.Errorf("the glance marks %d cells, want near's and far's 4:\n%s", strings.Count(g, mark), g)
	}
	if !strings.Contains(section("Datapaths side by side"), "| bridge |") {
		t.Fatalf("summary.md has no datapath table:\n%s", md)
	}
	// The datapath table has a column per workload: near's and far's.
	for _, line := range strings.Split(section("Datapaths side by side"), "\n") {
		if strings.HasPrefix(line, "| calico-vxlan |") || strings.HasPrefix(line, "| bridge |") {
			if got := strings.Count(line, mark); got != 2 {
				t.Errorf("datapath table: %q marks %d cells, want near's and far's", line, got)
			}
		}
	}
	if refs := section("Published reference numbers"); !strings.Contains(refs, analysis.PinFellBack) {
		t.Errorf("the reference table does not mark numa-other / numa-same:\n%s", refs)
	}
	if strings.Contains(md, "| pin_not_comparable") {
		t.Error("summary.md shows pin_not_comparable as a metric row")
	}
	if sec := section("calico-vxlan / far"); !strings.Contains(sec, "Not comparable: this machine could not honour the placement") {
		t.Errorf("calico-vxlan / far does not say its placement fell back:\n%s", sec)
	}
	if sec := section("calico-vxlan / plain"); strings.Contains(sec, "Not comparable") {
		t.Errorf("calico-vxlan / plain is marked though it ran its placement")
	}
	pg := buildPage(&results.Run{Samples: samples}, s, m)
	for _, g := range pg.Groups {
		if want := !strings.HasSuffix(g.Name, "plain"); (g.PinNote != "") != want {
			t.Errorf("report.html's %s: note %q", g.Name, g.PinNote)
		}
	}
}

// pinStudy is a study of two datapaths, two tunings and three workloads
// with 3 trials of bitrate each; near's and far's samples carry
// pin_not_comparable, plain's do not.
func pinStudy(t *testing.T) (*study.Study, []results.Sample) {
	t.Helper()
	const text = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: pins}
spec:
  datapaths: [calico-vxlan, bridge]
  tunings: [baseline, {name: busy, sysctls: {net.core.busy_read: 50}}]
  workloads:
    - {name: near, tool: iperf3, protocol: tcp}
    - {name: far, tool: iperf3, protocol: tcp}
    - {name: plain, tool: iperf3, protocol: tcp}
  reference:
    - {workload: far, againstWorkload: near, metric: bitrate, ratio: 0.2201}
  trials: 3
  duration: 5s
`
	cat := study.Catalog{Datapaths: []string{"calico-vxlan", "bridge"}, Tools: registry.Tools()}
	s, err := study.Parse("pins.yaml", []byte(text), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, dp := range []string{"calico-vxlan", "bridge"} {
		for _, tn := range []string{"baseline", "busy"} {
			for _, wl := range []string{"near", "far", "plain"} {
				for trial := 1; trial <= 3; trial++ {
					m := map[string]float64{results.MetricBitrate: 5e9 * (1 + 0.01*float64(trial))}
					if wl != "plain" {
						m[analysis.MetricPinNotComparable] = 1
					}
					samples = append(samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: tn, Workload: wl, Replicas: 1}, Trial: trial, Metrics: m})
				}
			}
		}
	}
	return s, samples
}
