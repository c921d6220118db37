package kube

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
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
		"[{tool: iperf3, cpp: true, counters: true}]", "[{tool: qperf, messageSize: 1}]", "[{tool: qperf, target: service}]",
		"[{tool: iperf3, background: {connections: [0, 10], pairs: 2, rate: 10M}}]"} {
		s := stubStudy(t, wl)
		if err := errors2(kubeUnsupported(s), checkStudy(s)); err != nil {
			t.Errorf("%s on kube: %v", wl, err)
		}
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
	if _, err := pickDatapath(s, cnidetect.Result{Name: "unknown"}); s.Locate(err) == nil || !strings.HasPrefix(s.Locate(err).Error(), "s.yaml:5: spec.datapaths: the kube engine measures the cluster's own CNI") {
		t.Errorf("two datapaths: %v", err)
	}
	s = stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Nodes.Server.CPUs = "0"
	if err := checkStudy(s); s.Locate(err) == nil || !strings.Contains(s.Locate(err).Error(), "spec.nodes: a node's cpus pin an emulated node") {
		t.Errorf("cpus: %v", err)
	}
}

// What of a datapath's entry only shapes the local engine's emulated
// nodes is left out on a cluster with a note naming it, so a built-in
// study (cni-compare's datapaths carry mtu and netfilter) runs there as
// written; the run's study then says what ran.
func TestKubeLeavesOutEmulationFields(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}]")
	if notes := leaveOutEmulation(s); notes != nil {
		t.Errorf("plain datapath: notes %v", notes)
	}
	d := &s.Spec.Datapaths[0]
	d.MTU, d.Offloads, d.Netfilter = 1450, map[string]string{"tx-udp_tnl-segmentation": "off"}, &study.Netfilter{CNI: "flannel"}
	s.Spec.Link.Rate = "1gbit"
	notes := leaveOutEmulation(s)
	if want := "datapath bridge: mtu, offloads, netfilter, spec.link shape the local engine's emulated nodes and are not applied on a cluster, whose CNI and NICs decide them; the cells keep the name bridge"; len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if d.MTU != 0 || d.Offloads != nil || d.Netfilter != nil || s.Spec.Link.Rate != "" || d.Name != "bridge" {
		t.Errorf("left in the run's study: %+v, link %+v", *d, s.Spec.Link)
	}
}

// Every built-in study runs on a cluster with one of its datapath entries
// as the label (--set datapaths=[NAME]), every profile: no workload is
// refused there, and what an entry only emulates is a note.
func TestBuiltinStudiesPassOnKube(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		base, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, profile := range append([]string{""}, base.ProfileNames()...) {
			s, err := study.Resolve(name, study.Options{Profile: profile}, cat)
			if err != nil {
				t.Fatalf("%s %s: %v", name, profile, err)
			}
			s.Spec.Datapaths = s.Spec.Datapaths[:1]
			if err := checkStudy(s); err != nil {
				t.Errorf("%s %s: %v", name, profile, err)
			}
			if err := kubeUnsupported(s); err != nil {
				t.Errorf("%s %s: %v", name, profile, err)
			}
		}
	}
}
