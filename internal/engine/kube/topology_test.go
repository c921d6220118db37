package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A workload that pins by placement name has the server node's agent
// read that node's CPU topology at preflight; a node whose sysfs cannot
// be read stops preflight with an error naming the node.
func TestServerTopologyThroughAgent(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	fs.set("", "sysfs", "devices/system/cpu/online", "0-3")
	for cpu := range 4 {
		fs.set("", "sysfs", fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", cpu), fmt.Sprint(cpu/2))
		fs.set("", "sysfs", fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", cpu), fmt.Sprint(cpu%2))
	}
	fs.set("", "sysfs", "devices/system/node/node0/cpulist", "0-1")
	fs.set("", "sysfs", "devices/system/node/node1/cpulist", "2-3")
	fx := &fakeExec{fs: fs, dir: t.TempDir()}
	topo, err := serverTopology(context.Background(), fx, cs, cfg, place)
	if err != nil {
		t.Fatal(err)
	}
	if topo.Where != "node w1" || len(topo.CPUs) != 4 || topo.Nodes() != 2 || topo.CPUs[3].Node != 1 || topo.CPUs[2].Package != 1 {
		t.Errorf("topology %+v, want node w1's 4 CPUs on 2 NUMA nodes", topo)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			t.Errorf("preflight created a %s", a.GetResource().Resource)
		}
	}

	_, err = serverTopology(context.Background(), &fakeExec{fs: agentFS(), dir: t.TempDir()}, cs, cfg, place)
	if err == nil || !strings.Contains(err.Error(), "node w1: read its CPU topology through its agent") || !strings.Contains(err.Error(), "online") {
		t.Errorf("unreadable sysfs: %v", err)
	}
}
