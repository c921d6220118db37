package runner

import (
	"context"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// The knobs' needs depend on whether the nodes are this machine, which
// the engine's facts say only after its preflight, yet the needs are
// that preflight's input: they were gathered as the local engine's for
// every engine. On a cluster the service path (the local engine's
// kube-proxy rules) was asked of the nodes, whose agents then had to
// run iptables-restore their image lacks, refusing cni-compare's
// Service workloads; and a tuning's congestion control was probed as
// written in a namespace other than the host's, where a cluster node's
// agent writes it in the host's. The engine's name says it before.
func TestNeedsFollowTheEngine(t *testing.T) {
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings: [baseline, {name: bbr, sysctls: {net.ipv4.tcp_congestion_control: bbr}}]
  workloads: [{name: svc, tool: iperf3, target: service}]
  replicas: [1]
  trials: 1
  duration: 3s
`
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	all := func(n engine.Needs) []string {
		var out []string
		for _, k := range n.Knobs {
			out = append(out, k.Features...)
		}
		return out
	}
	var remote engine.Needs
	if _, err := checkPlan(context.Background(), stubEngine{needs: &remote, remote: true}, s, nil); err != nil {
		t.Fatal(err)
	}
	got := all(remote)
	if slices.Contains(got, probe.Iptables) || slices.Contains(got, probe.ToolIptablesRestore) {
		t.Errorf("a cluster's needs %v: the local service path's iptables", got)
	}
	if want := probe.SysctlValue("net.ipv4.tcp_congestion_control", "bbr", false); !slices.Contains(got, want) {
		t.Errorf("a cluster's needs %v: no %s (written in the host's namespace)", got, want)
	}
	var local engine.Needs
	probed := false
	if _, err := checkPlan(context.Background(), localStub{stubEngine: stubEngine{needs: &local}, probed: &probed}, s, nil); err != nil {
		t.Fatal(err)
	}
	got = all(local)
	if !slices.Contains(got, probe.Iptables) {
		t.Errorf("the local engine's needs %v: no %s for the service path", got, probe.Iptables)
	}
	if want := probe.SysctlValue("net.ipv4.tcp_congestion_control", "bbr", true); !slices.Contains(got, want) {
		t.Errorf("the local engine's needs %v: no %s (written in a node's namespace)", got, want)
	}
}
