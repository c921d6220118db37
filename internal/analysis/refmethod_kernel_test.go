package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The run's own record that its nodes shared a kernel (env.json
// shared_kernel) says the client's readings are the machine's, whatever
// rows a server twin left (here both nodes' rows, as a collector that
// read each node would have written); a run without it (an old run, or
// two kernels) is judged by the rows as before: no _server row, shared.
// CPU stays the node's own where spec.nodes pins the nodes apart.
func TestRefMethodRecordedSharedKernel(t *testing.T) {
	s := flannelBackends(t, "quick-none")
	samples := func(server bool) []results.Sample {
		var out []results.Sample
		for trial := 1; trial <= 3; trial++ {
			met := map[string]float64{results.MetricBitrate: 8e8 * wobble(trial), "node_cpu_percent_client": 40 * wobble(trial), "node_memory_percent_client": 30}
			if server {
				met["node_cpu_percent_server"], met["node_memory_percent_server"] = 20, 30
			}
			smp := results.Sample{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@800M", Replicas: 1}, Trial: trial, Metrics: met}
			smp.Cores = []results.CoreStat{{CPU: 0}, {CPU: 1}}
			out = append(out, smp)
		}
		return out
	}
	const cpu, mem = "node_cpu_percent_client", "node_memory_percent_client"
	run := func(smp []results.Sample, shared bool) Model {
		m := Build(s, smp)
		m.AddRun(s, &results.Run{Env: results.Env{SharedKernel: shared}, Samples: smp})
		return m
	}
	if got := nodeMethods(run(samples(true), true)); !strings.Contains(got[cpu], "whole machine's 2 CPUs") || !strings.Contains(got[mem], "whole machine's memory") {
		t.Errorf("recorded one kernel, server rows too: methods %q, want both the machine's", got)
	}
	if got := nodeMethods(run(samples(true), false)); got[cpu] != "" || got[mem] != "" {
		t.Errorf("not recorded, server rows: methods %q, want none", got)
	}
	if got := nodeMethods(run(samples(false), false)); got[cpu] == "" || got[mem] == "" {
		t.Errorf("not recorded (an old run), no server rows: methods %q, want the rows' inference", got)
	}
	apart := *s
	apart.Spec.Nodes.Client.CPUs, apart.Spec.Nodes.Server.CPUs = "0", "1"
	if sh := SharedNodeReadings(&apart, Build(&apart, samples(true)).Rows, true, nil); sh.Metrics[cpu] || !sh.Metrics[mem] {
		t.Errorf("one kernel, nodes pinned apart: shared %v, want memory alone", sh.Metrics)
	}
}

// A cost per packet of an inter-node workload in a kube run on two
// kernels is the server node's alone (its agent's perf), where seed
// 004's inter-host numbers are both hosts' cycles: the reference says
// so. Not an intra-node workload's (both ends on that node), not the
// local engine's or a kube run whose nodes share a kernel (perf samples
// the one machine), not the packet count, and not before the run's env
// is known (Build).
func TestRefMethodCPPOneNode(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [flannel-vxlan]
  trials: 3
  duration: 10s
  workloads:
    - {name: cpp-inter, tool: iperf3, protocol: tcp, cpp: true}
    - {name: cpp-intra, tool: iperf3, protocol: tcp, cpp: true, placement: intra-node}
  reference:
    - {workload: cpp-inter, metric: cpp_netfilter_cycles, value: 749}
    - {workload: cpp-inter, metric: cpp_total_ns, value: 3000}
    - {workload: cpp-inter, metric: cpp_packets_count, value: 1e6}
    - {workload: cpp-intra, metric: cpp_netfilter_cycles, value: 324}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, w := range []string{"cpp-inter", "cpp-intra"} {
		for trial := 1; trial <= 3; trial++ {
			samples = append(samples, results.Sample{
				Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{"cpp_netfilter_cycles": 300 * wobble(trial), "cpp_total_ns": 2000 * wobble(trial), "cpp_packets_count": 1e6},
			})
		}
	}
	methods := func(env *results.Env) []string {
		m := Build(s, samples)
		if env != nil {
			m.AddRun(s, &results.Run{Env: *env, Samples: samples})
		}
		var out []string
		for _, r := range m.References {
			out = append(out, r.Method)
		}
		return out
	}
	none := []string{"", "", "", ""}
	for _, tc := range []struct {
		name string
		env  *results.Env
		want []string
	}{
		{"kube, two kernels", &results.Env{Engine: "kube"}, []string{CPPOneNode, CPPOneNode, "", ""}},
		{"kube, one kernel", &results.Env{Engine: "kube", SharedKernel: true}, none},
		{"local", &results.Env{Engine: "local", SharedKernel: true}, none},
		{"no env.json (Build)", nil, none},
	} {
		if got := methods(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("%s: methods %q, want %q", tc.name, got, tc.want)
		}
	}
}
