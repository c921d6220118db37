package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/agent"
)

// InspectServer inspects, read-only, the study's server node through the
// installed agent (`cnibench advise --engine kube`): it finds the node
// the server selector names, opens one agent session (no Lease: it
// changes nothing) and returns the node's inspection and name. It
// creates no pod or Service, so it does not ask whether the namespace
// admits the run's (inspectNode).
func InspectServer(ctx context.Context, cfg Config) (*inspect.Inspection, string, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, "", err
	}
	rc, cs, err := Connect(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return nil, "", err
	}
	node, err := inspectNode(ctx, cs, cfg)
	if err != nil {
		return nil, "", err
	}
	c := &Cluster{cfg: cfg, cs: cs, poll: 500 * time.Millisecond}
	agents, err := c.waitAgents(ctx, node)
	if err != nil {
		return nil, "", err
	}
	if cfg.RunID == "" {
		cfg.RunID = "advise"
	}
	var in *inspect.Inspection
	err = withAgent(ctx, &APIExecer{Config: rc, Client: cs}, cfg.AgentNamespace, agents[node], cfg.RunID, func(a *agent.Client) (err error) {
		in, err = a.Inspect()
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("inspect node %s through its agent: %w", node, err)
	}
	in.Source = "node " + node + " (through the cnibench agent)"
	return in, node, nil
}

// inspectNode is the server node InspectServer inspects, after the
// preflight checks that concern it: the cluster, the rights (the agent
// exec among them) and the nodes, not the admission of the run's pods
// and Services, which it does not create.
func inspectNode(ctx context.Context, cs kubernetes.Interface, cfg Config) (string, error) {
	place, err := preflight(ctx, cs, cfg, false)
	if err != nil {
		return "", err
	}
	return place.Server.Name, nil
}
