package analysis

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
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
	if sh := SharedNodeReadings(&apart, Build(&apart, samples(true)).Rows, true); sh.Metrics[cpu] || !sh.Metrics[mem] {
		t.Errorf("one kernel, nodes pinned apart: shared %v, want memory alone", sh.Metrics)
	}
}
