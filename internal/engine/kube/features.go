package kube

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// preflightRun names the agent sessions preflight opens: they only read
// (probe in a scratch namespace), so they never journal anything.
const preflightRun = "preflight"

// checkNodeFeatures asks each node's agent, before the run creates
// anything, whether the node's kernel has what the study's knobs need
// (netem, and ifb for ingress impairments). The datapath's features are
// not asked: on a real cluster its CNI is the datapath. A missing feature
// is a *probe.UnsupportedError naming the node and what needed it, as
// the local engine's preflight names it for this machine. Where a
// tuning bounds idle (probe.CPUIdle) and a node has idle states, the
// agent also reads its CPU 0's, for the runner to check the bound
// against on the node of each end the tuning goes on
// (engine.Facts.IdleStates).
func checkNodeFeatures(ctx context.Context, ex Execer, cs kubernetes.Interface, cfg Config, place Placement, needs []engine.Need) ([]engine.NodeIdle, error) {
	var want []string
	for _, n := range needs {
		for _, f := range n.Features {
			if nodeProbed(f) && !slices.Contains(want, f) {
				want = append(want, f)
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	c := &Cluster{cfg: cfg, cs: cs, poll: 500 * time.Millisecond}
	nodes := []string{place.Server.Name}
	sides := map[string][]string{place.Server.Name: {study.SideServer}}
	if place.Client.Name != place.Server.Name {
		nodes = append(nodes, place.Client.Name)
	}
	sides[place.Client.Name] = append(sides[place.Client.Name], study.SideClient)
	agents, err := c.waitAgents(ctx, nodes...)
	if err != nil {
		return nil, err
	}
	var idle []engine.NodeIdle
	for _, node := range nodes {
		missing, states, err := nodeFeatures(ctx, ex, cfg, node, agents[node], want)
		if err != nil {
			return nil, err
		}
		for _, n := range needs {
			for _, f := range n.Features {
				if why, ok := missing[f]; ok && nodeProbed(f) {
					return nil, n.Refusal(": node "+node, &probe.UnsupportedError{Name: f, Kind: probe.KindKernel, Reason: why})
				}
			}
		}
		if states != nil {
			idle = append(idle, engine.NodeIdle{Where: "node " + node + "'s", Sides: sides[node], States: states})
		}
	}
	return idle, nil
}

// nodeFeatures asks one node's agent which of want its kernel lacks and,
// where want has probe.CPUIdle and the node has it, CPU 0's idle states
// (nil otherwise).
func nodeFeatures(ctx context.Context, ex Execer, cfg Config, node, pod string, want []string) (map[string]string, []cpuidle.State, error) {
	var states []cpuidle.State
	var missing map[string]string
	err := withAgent(ctx, ex, cfg.AgentNamespace, node, pod, preflightRun, func(a *agent.Client) (err error) {
		missing, err = a.Features(want...)
		if _, lacks := missing[probe.CPUIdle]; err == nil && !lacks && slices.Contains(want, probe.CPUIdle) {
			// Not read is not fatal: the trial's plan reads them again
			// and refuses a bound that changes nothing there.
			states, _ = cpuidle.States(tune.HostSysfs(a), 0)
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: probe %v through its agent: %w", node, want, err)
	}
	return missing, states, nil
}

// nodeProbed says whether preflight probes feature f on the nodes: the
// kernel features. RPS and RFS included: the agent's probe reads the
// host-global RFS table through the init network namespace, as its knob
// writes it, so it finds it on nodes that are namespaces of one machine
// (the test cluster) too; and a tuning's sysctls (probe.Sysctl), looked
// for in the same namespace.
func nodeProbed(f string) bool {
	return probe.IsKernel(f)
}
