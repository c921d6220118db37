package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cnibench/cnibench/internal/hostcpus"
)

// A workload that pins by placement name has the server node's agent
// read that node's CPU topology and the CPUs its pods may use at
// preflight; a node whose sysfs cannot
// be read stops preflight with an error naming the node.
func TestServerTopologyThroughAgent(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	setCPUs(fs, 4, func(cpu int) (int, int) { return cpu / 2, cpu % 2 })
	fs.set("", "sysfs", "devices/system/node/node0/cpulist", "0-1")
	fs.set("", "sysfs", "devices/system/node/node1/cpulist", "2-3")
	fx := &fakeExec{fs: fs, dir: t.TempDir()}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, nil, pinReads{allowed: true, topology: true})
	if err != nil {
		t.Fatal(err)
	}
	topo := nf.topo
	if topo.Where != "node w1" || len(topo.CPUs) != 4 || topo.Nodes() != 2 || topo.CPUs[3].Node != 1 || topo.CPUs[2].Package != 1 {
		t.Errorf("topology %+v, want node w1's 4 CPUs on 2 NUMA nodes", topo)
	}
	// The CPUs the node lets its pods run on are the agent's cgroup's
	// cpuset (the fake agent runs in this process).
	if own, _, _ := hostcpus.Allowed(); topo.Allowed.String() != own.String() || !strings.Contains(topo.AllowedWhy, "cpuset its pods run in") {
		t.Errorf("allowed CPUs %v (%s), want the agent's cpuset %v", topo.Allowed, topo.AllowedWhy, own)
	}
	// CPU-list pins alone read the allowed CPUs, not the topology.
	nf, err = preflightNodes(context.Background(), &fakeExec{fs: agentFS(), dir: t.TempDir()}, cs, cfg, place, nil, pinReads{allowed: true})
	if err != nil || nf.topo == nil || len(nf.topo.Allowed) == 0 || len(nf.topo.CPUs) != 0 {
		t.Errorf("CPU-list pins: %v %+v, want the allowed CPUs and no topology", err, nf.topo)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			t.Errorf("preflight created a %s", a.GetResource().Resource)
		}
	}

	_, err = preflightNodes(context.Background(), &fakeExec{fs: agentFS(), dir: t.TempDir()}, cs, cfg, place, nil, pinReads{allowed: true, topology: true})
	if err == nil || !strings.Contains(err.Error(), "node w1: read its CPU topology (for the placement names the workloads pin by) through its agent") || !strings.Contains(err.Error(), "online") {
		t.Errorf("unreadable sysfs: %v", err)
	}
}

// setCPUs gives the fake agent's sysfs n online CPUs, each in the package
// and with the core id at returns.
func setCPUs(fs *memFS, n int, at func(cpu int) (pkg, core int)) {
	fs.set("", "sysfs", "devices/system/cpu/online", fmt.Sprintf("0-%d", n-1))
	for cpu := range n {
		pkg, core := at(cpu)
		fs.set("", "sysfs", fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", cpu), fmt.Sprint(pkg))
		fs.set("", "sysfs", fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", cpu), fmt.Sprint(core))
	}
}

// Each end's node's CPUs, which RPS masks span, are its online CPUs as
// its agent reads them (a gap where SMT siblings are offline), else its
// capacity's 0..n-1.
func TestNodesOnlineCPUsThroughAgents(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	fs.set("", "sysfs", "devices/system/cpu/online", "0,2,4,6")
	nf, err := preflightNodes(context.Background(), &fakeExec{fs: fs, dir: t.TempDir()}, cs, cfg, place, nil, pinReads{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"w1", "w2"} {
		if got := nf.online[n].String(); got != "0,2,4,6" {
			t.Errorf("node %s: online CPUs %q, want 0,2,4,6", n, got)
		}
	}
	if got := cpusOf(nf.online["w1"], place.Server).String(); got != "0,2,4,6" {
		t.Errorf("server node's CPUs %q, want its online ones", got)
	}
	// An agent that cannot read them leaves the node's capacity.
	nf, err = preflightNodes(context.Background(), &fakeExec{fs: agentFS(), dir: t.TempDir()}, cs, cfg, place, nil, pinReads{})
	if err != nil || len(nf.online) != 0 {
		t.Fatalf("unreadable online CPUs: %v, %v", err, nf.online)
	}
	place.Server.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	if got := cpusOf(nil, place.Server).String(); got != "0-2" {
		t.Errorf("capacity 3: CPUs %q, want 0-2", got)
	}
	if got := cpusOf(nil, &corev1.Node{}); got != nil {
		t.Errorf("nothing known: CPUs %v, want nil (this machine's)", got)
	}
}
