package runner

import (
	"bytes"
	"runtime"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
)

// A cluster run's env.json holds none of this machine's facts: the
// nodes are other machines. It used to keep the controller's CPU model,
// NUMA count and tool versions (a laptop's iperf3 where the pods ran
// the image's), and its host, kernel and CPUs where the engine could
// not read the node's; what the engine's Describe does not give is
// blank. A local run's are this machine's.
func TestWriteEnvRemoteKeepsNoControllerFacts(t *testing.T) {
	here := envinfo.Collect(nil)
	for _, remote := range []bool{true, false} {
		w, err := results.Create(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		r := &run{engine: envEngine{}, plan: &plan{remote: remote}, out: w,
			study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}, opt: Options{Progress: progress.New(&log)}}
		if err := r.writeEnv(envCluster{}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		e := r.env
		if !remote {
			if e.Hostname != here.Hostname || e.CPUModel != here.CPUModel || e.CPUs != here.CPUs || e.NUMANodes != here.NUMANodes {
				t.Errorf("local run: env %+v, want this machine's", e)
			}
			continue
		}
		if e.Hostname != "" || e.Kernel != "" || e.CPUModel != "" || e.CPUs != 0 || e.NUMANodes != 0 || e.CPUIdle != nil {
			t.Errorf("cluster run: host %q, kernel %q, CPU %d × %q, %d NUMA nodes, idle %v; want none of this machine's",
				e.Hostname, e.Kernel, e.CPUs, e.CPUModel, e.NUMANodes, e.CPUIdle)
		}
		if len(e.Tools) != 1 || e.Tools["go"] != runtime.Version() {
			t.Errorf("cluster run: tools %v, want only go (this cnibench's build)", e.Tools)
		}
	}
}

// A local run records the CPUs its nodes could use (cnibench's cpuset):
// the one-core judgement leaves out the cores sampled beyond them
// (analysis.OneCoreTally). A cluster's nodes are other machines: none.
func TestWriteEnvMachineCPUs(t *testing.T) {
	for _, remote := range []bool{false, true} {
		w, err := results.Create(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		r := &run{engine: envEngine{}, plan: &plan{remote: remote, machine: cpuset.Set{0, 1}}, out: w,
			study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}, opt: Options{Progress: progress.New(&log)}}
		if err := r.writeEnv(envCluster{}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		want := []int{0, 1}
		if remote {
			want = nil
		}
		if !slices.Equal(r.env.MachineCPUs, want) {
			t.Errorf("remote %v: machine_cpus %v, want %v", remote, r.env.MachineCPUs, want)
		}
	}
}
