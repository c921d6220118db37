package analysis

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// tableIIIStudy is cni-compare in small: Table III counts, a cost per
// packet and a bitrate of weave and flannel beside the paper's, with
// each datapath's samples.
func tableIIIStudy(t *testing.T) (*study.Study, []results.Sample) {
	t.Helper()
	cat := study.Catalog{Datapaths: []string{"weave", "flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths:
    - {name: weave, type: weave, netfilter: {cni: weave}}
    - {name: flannel, type: flannel-vxlan, netfilter: {cni: flannel}}
  trials: 3
  duration: 10s
  workloads:
    - {name: tcp-inter, tool: iperf3, protocol: tcp, counters: true}
    - {name: cpp-inter, tool: iperf3, protocol: tcp, cpp: true}
  reference:
    - {datapath: weave, workload: tcp-inter, metric: iptables_path_rules_count, value: 21}
    - {datapath: weave, workload: tcp-inter, metric: trace_path_chains_count, value: 10}
    - {datapath: weave, workload: cpp-inter, metric: cpp_netfilter_cycles, value: 245}
    - {datapath: weave, workload: tcp-inter, metric: bitrate, value: 1.4e10}
    - {datapath: flannel, workload: tcp-inter, metric: iptables_path_rules_count, value: 21}
    - {datapath: flannel, workload: cpp-inter, metric: cpp_netfilter_cycles, value: 245}
    - {workload: cpp-inter, metric: cpp_veth_cycles, value: 6}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, dp := range []string{"weave", "flannel"} {
		for trial := 1; trial <= 3; trial++ {
			cell := results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp-inter", Replicas: 1}
			samples = append(samples, results.Sample{Cell: cell, Trial: trial, Metrics: map[string]float64{
				"iptables_path_rules_count": 51, "trace_path_chains_count": 26, results.MetricBitrate: 1e10 * wobble(trial),
			}})
			cell.Workload = "cpp-inter"
			samples = append(samples, results.Sample{Cell: cell, Trial: trial, Metrics: map[string]float64{
				"cpp_netfilter_cycles": 600 * wobble(trial), "cpp_veth_cycles": 8 * wobble(trial),
			}})
		}
	}
	return s, samples
}

// Table III's counts say how ours were counted, which the paper does
// not: counters that moved (or the trace's path), built-in chains
// included, both nodes, on which rules (the CNI's model the run
// recorded, kube-proxy's mode and Services, the kubelet's). Without the
// run's env.json the rules are not named.
func TestRefMethodTableIIISaysHowOursWereCounted(t *testing.T) {
	s, samples := tableIIIStudy(t)
	m := Build(s, samples)
	if got := m.References[0].Method; !strings.HasPrefix(got, "ours: chains and rules whose packet counters grew") ||
		!strings.Contains(got, "built-in chains included, summed over both nodes") || !strings.HasSuffix(got, "; the paper does not say how it counted") ||
		strings.Contains(got, "model") {
		t.Errorf("without env.json: iptables path method %q", got)
	}
	env := results.Env{Engine: "local", Datapaths: map[string]results.DatapathEnv{
		"weave":   {Type: "weave", Netfilter: &results.NetfilterEnv{CNI: "weave", Source: "weaveworks/weave net/bridge.go", KubeProxy: "iptables", Services: 10}},
		"flannel": {Type: "flannel-vxlan", Netfilter: &results.NetfilterEnv{CNI: "flannel", Source: "flannel-io/flannel iptables.go", KubeProxy: "nftables", Services: 40}},
	}}
	m.AddRun(s, &results.Run{Env: env, Samples: samples})
	for i, want := range []string{
		"ours: chains and rules whose packet counters grew over the trial, the connection's set-up included, built-in chains included, summed over both nodes (a rule tested without matching does not count), " +
			"on cnibench's model of weaveworks/weave net/bridge.go (weave) plus kube-proxy in iptables mode (10 Services) and the kubelet's rules; the paper does not say how it counted",
		"ours: chains the measured packets entered or jumped to and rules they matched, in an nf_tables trace from before the clients connect until the measured window, built-in chains included, summed over both nodes, " +
			"on cnibench's model of weaveworks/weave net/bridge.go (weave) plus kube-proxy in iptables mode (10 Services) and the kubelet's rules; the paper does not say how it counted",
		"", "",
		"ours: chains and rules whose packet counters grew over the trial, the connection's set-up included, built-in chains included, summed over both nodes (a rule tested without matching does not count), " +
			"on cnibench's model of flannel-io/flannel iptables.go (flannel) plus kube-proxy in nftables mode (40 Services) and the kubelet's rules; the paper does not say how it counted",
		"", "",
	} {
		if got := m.References[i].Method; got != want {
			t.Errorf("reference %d (%s of %s):\n got %q\nwant %q", i, m.References[i].Reference.Metric, m.References[i].Reference.Datapath, got, want)
		}
	}
	// A datapath with Calico's policy chains alone (policy:), or with no
	// rules written, says so.
	env.Datapaths["weave"] = results.DatapathEnv{Type: "calico-routed", Policy: &results.PolicyEnv{Style: "calico", Mode: "wp"}}
	env.Datapaths["flannel"] = results.DatapathEnv{Type: "flannel-vxlan"}
	m.AddRun(s, &results.Run{Env: env, Samples: samples})
	if got := m.References[0].Method; !strings.Contains(got, ", on cnibench's calico policy wp chains, without kube-proxy's rules; the paper") {
		t.Errorf("policy chains alone: %q", got)
	}
	if got := m.References[4].Method; !strings.Contains(got, ", on nodes where no CNI or kube-proxy rules were written") {
		t.Errorf("no rules written: %q", got)
	}
	// A cluster's nodes hold their own rules.
	env.Engine, env.Datapaths = "kube", map[string]results.DatapathEnv{"weave": {Type: "cluster CNI (labelled weave)"}}
	m.AddRun(s, &results.Run{Env: env, Samples: samples})
	if got := m.References[0].Method; !strings.Contains(got, ", on the cluster's own rules; the paper") {
		t.Errorf("cluster run: %q", got)
	}
}

// Where the run's weave was the Linux bridge standing in for Open
// vSwitch (env.json's mode and stand_in), its Table III counts and costs
// per packet say what the stand-in changes (a second netfilter pass),
// after how they were counted; its bitrate, flannel's numbers and a run
// that built OVS's datapath say nothing of it. A reference of every
// datapath names weave's.
func TestRefMethodWeaveBridgeStandIn(t *testing.T) {
	s, samples := tableIIIStudy(t)
	const standIn = "a Linux bridge stands in for Weave's Open vSwitch fast datapath: a second netfilter pass"
	env := results.Env{Engine: "local", Datapaths: map[string]results.DatapathEnv{
		"weave":   {Type: "weave", Mode: "bridge", StandIn: standIn},
		"flannel": {Type: "flannel-vxlan"},
	}}
	m := Build(s, samples)
	m.AddRun(s, &results.Run{Env: env, Samples: samples})
	for i, want := range []bool{true, true, true, false, false, false} {
		got := m.References[i].Method
		if strings.HasSuffix(got, standIn) != want {
			t.Errorf("bridge mode, reference %d (%s of %s): method %q, stand-in noted %v", i, m.References[i].Reference.Metric, m.References[i].Reference.Datapath, got, want)
		}
	}
	if got := m.References[2].Method; got != standIn {
		t.Errorf("weave's cost per packet: method %q, want the stand-in alone", got)
	}
	if got := m.References[6].Method; got != "weave: "+standIn {
		t.Errorf("every datapath's veth cost: method %q, want weave's stand-in named", got)
	}
	env.Datapaths["weave"] = results.DatapathEnv{Type: "weave", Mode: "ovs"}
	m.AddRun(s, &results.Run{Env: env, Samples: samples})
	for i, r := range m.References {
		if strings.Contains(r.Method, "stands in") {
			t.Errorf("OVS mode, reference %d (%s of %s): method %q", i, r.Reference.Metric, r.Reference.Datapath, r.Method)
		}
	}
}
