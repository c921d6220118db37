package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The report's reference table sets a Table III count beside the
// paper's with how ours was counted and on which rules and, where weave
// ran as the Linux bridge standing in for Open vSwitch, what the
// stand-in adds; the environment section says which mode weave built
// and whose rules its nodes held.
func TestTableIIIRowsSayHowAndOnWhat(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"weave"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [{name: weave, type: weave, netfilter: {cni: weave}}]
  trials: 3
  duration: 10s
  workloads: [{name: tcp-inter, tool: iperf3, protocol: tcp, counters: true}]
  reference:
    - {datapath: weave, workload: tcp-inter, metric: iptables_path_rules_count, value: 21, note: "Table III"}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for trial := 1; trial <= 3; trial++ {
		samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "weave", Tuning: "baseline", Workload: "tcp-inter", Replicas: 1},
			Trial: trial, Metrics: map[string]float64{"iptables_path_rules_count": 51}})
	}
	nf := &results.NetfilterEnv{CNI: "weave", Source: "weaveworks/weave net/bridge.go", KubeProxy: "iptables", Services: 10, Endpoints: 2,
		Chains: map[string]int{"client": 25, "server": 26}, Rules: map[string]int{"client": 80, "server": 81}}
	de := results.DatapathEnv{Type: "weave", Mode: "bridge", StandIn: "a Linux bridge stands in for OVS: a second netfilter pass", Netfilter: nf}
	run := &results.Run{HasEnv: true, Env: results.Env{Engine: "local", Datapaths: map[string]results.DatapathEnv{"weave": de}}, Samples: samples}
	m := analysis.Build(s, samples)
	m.AddRun(s, run)
	tb, _ := newNumbers(m).refTable()
	note := tb.Rows[0][4]
	for _, want := range []string{"Table III; ours: chains and rules whose packet counters grew", "summed over both nodes",
		"on cnibench's model of weaveworks/weave net/bridge.go (weave) plus kube-proxy in iptables mode (10 Services) and the kubelet's rules",
		"the paper does not say how it counted; a Linux bridge stands in for OVS: a second netfilter pass"} {
		if !strings.Contains(note, want) {
			t.Errorf("Table III row's note %q\nlacks %q", note, want)
		}
	}
	kv, _ := envView(run)
	var text string
	for _, l := range kv {
		if l[0] == "datapath weave" {
			text = l[1]
		}
	}
	want := "weave, mode bridge (a Linux bridge stands in for OVS: a second netfilter pass), " +
		"netfilter weave (rules modelled on weaveworks/weave net/bridge.go) and Service proxy iptables with 10 Services of 2 endpoints, the kubelet's rules beside them, " +
		"installed: client 25 chains, 80 rules; server 26 chains, 81 rules"
	if text != want {
		t.Errorf("datapath weave:\n got %q\nwant %q", text, want)
	}
}
