package analysis

import (
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// node_cpu_percent averages the CPUs the local engine's nodes may use
// (env.json's machine_cpus, cnibench's cpuset: collect's countedCPUs),
// not every CPU of /proc/stat, which the per-core rows are: in a
// container limited to 2 of 8 CPUs the note said "the whole machine's 8
// CPUs" of a reading over 2.
func TestRefMethodSharedNodesCountsTheAveragedCPUs(t *testing.T) {
	s := flannelBackends(t, "quick-none")
	var samples []results.Sample
	for trial := 1; trial <= 3; trial++ {
		met := map[string]float64{results.MetricBitrate: 8e8 * wobble(trial), "node_cpu_percent_client": 40 * wobble(trial), "node_memory_percent_client": 30}
		smp := results.Sample{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@800M", Replicas: 1}, Trial: trial, Metrics: met}
		for c := 0; c < 8; c++ {
			smp.Cores = append(smp.Cores, results.CoreStat{CPU: c, CPUPercent: results.CPUPercent{Idle: 99, User: 1}})
		}
		samples = append(samples, smp)
	}
	for _, c := range []struct {
		machine []int
		want    string
	}{
		{[]int{0, 1}, "ours is CPUs 0-1, the 2 of the machine's 8 that cnibench's cpuset lets both emulated nodes use, on one kernel; the paper's its client node alone"},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, "ours is the whole machine's 8 CPUs, both emulated nodes on one kernel; the paper's its client node alone"},
		{nil, "ours is the whole machine's 8 CPUs, both emulated nodes on one kernel; the paper's its client node alone"},
	} {
		m := Build(s, samples)
		m.AddRun(s, &results.Run{Env: results.Env{SharedKernel: true, MachineCPUs: c.machine}, Samples: samples})
		if got := nodeMethods(m)["node_cpu_percent_client"]; got != c.want {
			t.Errorf("machine_cpus %v: method %q, want %q", c.machine, got, c.want)
		}
	}
}
