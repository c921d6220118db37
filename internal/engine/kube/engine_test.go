package kube

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

func stubStudy(t *testing.T, workloads string) *study.Study {
	t.Helper()
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings: [baseline]
  workloads: ` + workloads + `
  replicas: [1]
  trials: 1
  duration: 3s
`
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()}
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// What kube cannot run is refused early, all of it in one error; what it
// can run passes, whatever this machine has installed.
func TestKubeUnsupported(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, wl := range []string{"[{tool: iperf3}]", "[{tool: sockperf}]", "[{tool: ab, size: 1M}]", "[{tool: iperf3, pin: {server: '0', client: '0'}}]",
		"[{tool: iperf3, cpp: true, counters: true}]"} {
		s := stubStudy(t, wl)
		if err := errors2(kubeUnsupported(s), checkStudy(s)); err != nil {
			t.Errorf("%s on kube: %v", wl, err)
		}
	}
	err := kubeUnsupported(stubStudy(t,
		"[{name: bg, tool: iperf3, background: {connections: [0, 10], pairs: 2, rate: 10M}}, {name: c, tool: iperf3}, {name: bg2, tool: iperf3, background: {connections: [5], pairs: 1, rate: 10M}}]"))
	if err == nil || !strings.Contains(err.Error(), "the kube engine cannot run workload bg: background load") ||
		!strings.Contains(err.Error(), "; workload bg2: background load") || strings.Contains(err.Error(), "workload c") {
		t.Errorf("got %v", err)
	}
}

func errors2(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func TestKubeTools(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}, {tool: ab, size: 1M, pin: {server: '0', client: '1'}}, {tool: sockperf}, {name: c, tool: iperf3, cpp: true, counters: true}]")
	if got := strings.Join(kubeTools(s), ","); got != "iperf3,ab,nginx,taskset,sockperf,perf,iptables-save,nft" {
		t.Errorf("tools %s", got)
	}
}

// What only emulated nodes can do is refused at the field that asks for
// it, which the runner reports at its line.
func TestKubeRefusalsAtTheirField(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Datapaths = append(s.Spec.Datapaths, s.Spec.Datapaths[0])
	if err := s.Locate(checkStudy(s)); err == nil || !strings.HasPrefix(err.Error(), "s.yaml:5: spec.datapaths: the kube engine measures the cluster's own CNI") {
		t.Errorf("two datapaths: %v", err)
	}
	s = stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Datapaths[0].MTU = 1400
	if err := s.Locate(checkStudy(s)); err == nil || !strings.HasPrefix(err.Error(), "s.yaml:5: spec.datapaths[0]: datapath bridge: mtu, offloads") {
		t.Errorf("mtu: %v", err)
	}
}
