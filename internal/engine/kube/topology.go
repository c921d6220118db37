package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/tune"
)

// serverTopology reads the CPU topology of the server's node through its
// agent, for the placement names a workload pins by (seed 001 bound its
// receiver to the sender's NUMA node or another one): on a cluster the
// names mean that node's CPUs, not this machine's. The runner resolves
// them (workload.Prepare), and refuses them across nodes, where the other
// end's CPUs are another machine's.
func serverTopology(ctx context.Context, ex Execer, cs kubernetes.Interface, cfg Config, place Placement) (*engine.NodeTopology, error) {
	node := place.Server.Name
	c := &Cluster{cfg: cfg, cs: cs, poll: 500 * time.Millisecond}
	agents, err := c.waitAgents(ctx, node)
	if err != nil {
		return nil, err
	}
	var t topology.Topology
	err = withAgent(ctx, ex, cfg.AgentNamespace, node, agents[node], preflightRun, func(a *agent.Client) (err error) {
		t, err = topology.ReadFrom(tune.HostSysfs(a))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: read its CPU topology through its agent, for the placement names the workloads pin by: %w", node, err)
	}
	return &engine.NodeTopology{Where: "node " + node, Topology: t}, nil
}
