package knob

import (
	"context"
	"fmt"
	"net"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/policy"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
)

// policyEntry writes the datapath entry's network-policy rule set. The
// rules live inside the run's node namespaces, so deleting the namespaces
// undoes them. The rule set is rewritten whenever pods come or go, as
// Felix reprograms endpoints: the FORWARD hooks are added once per node,
// and the chains the last rule set declared that this one does not (the
// endpoint chains of deleted pods, dispatch child chains) are deleted in
// the same transaction, so a node holds what the current rule set says
// (Target.State remembers, per node, whether it is hooked and what it
// declared).
var policyEntry = Entry{
	Name:    "policy",
	Changes: "iptables rules (Calico-style per-endpoint chains) on both nodes for the pods that exist, the datapath entry's policy",
	Scope:   Pods,
	Wanted:  func(t *Target) bool { return t.Datapath.Policy != "" },
	Needs:   func(*Target) []string { return []string{probe.ToolIptablesRestore} },
	Apply:   applyPolicy,
}

// applyPolicy (re)writes the entry's Calico-style rule set on both nodes
// for the pods that exist now, and counts its chains and rules in env.
func applyPolicy(ctx context.Context, t *Target) (Undo, error) {
	sd := t.Datapath
	if t.Env.Policy == nil {
		style, err := catalog.PolicyStyle(sd.Type)
		if err != nil {
			return nil, err
		}
		t.Env.Policy = &results.PolicyEnv{Style: style, Mode: sd.Policy, Chains: map[string]int{}, Rules: map[string]int{}}
	}
	// The chains each node holds: none there yet means its FORWARD
	// hooks are still to be written.
	held, _ := t.State["policy"].(map[string][]string)
	if held == nil {
		held = map[string][]string{}
		t.State["policy"] = held
	}
	var ips []net.IP
	for _, p := range append(append([]engine.Pod{}, t.Servers...), t.Clients...) {
		ips = append(ips, p.IP())
	}
	allow := policy.PodNetworks(ips)
	for _, x := range []struct {
		n    engine.Node
		pods []engine.Pod
	}{{t.Cluster.Server(), t.Servers}, {t.Cluster.Client(), t.Clients}} {
		name := x.n.Name()
		prev, hooked := held[name]
		rules, full, err := nodeRules(x.n, x.pods, sd.Policy, allow, !hooked)
		if err != nil {
			return nil, err
		}
		write, err := policy.Retire(rules, prev)
		if err != nil {
			return nil, fmt.Errorf("policy on %s: %w", name, err)
		}
		if err := restore(ctx, t, x.n, write); err != nil {
			return nil, err
		}
		held[name] = policy.Declared(rules)
		// What the node holds: the hooks count whether this rewrite
		// wrote them or an earlier one did.
		chains, n := policy.Count(full)
		t.Env.Policy.Chains[name], t.Env.Policy.Rules[name] = chains, n
	}
	return nil, nil
}

// nodeRules renders n's rule set for its pods: rules to write (with the
// FORWARD hooks when hook is set) and full, the same with the hooks.
func nodeRules(n engine.Node, pods []engine.Pod, mode string, allow []*net.IPNet, hook bool) (rules, full []byte, err error) {
	veths, err := n.HostVeths(pods)
	if err == nil {
		err = engine.OnePerPod(n, pods, veths, "the policy's endpoint rules")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("policy on %s: %w", n.Name(), err)
	}
	eps := make([]policy.Endpoint, len(pods))
	for i, p := range pods {
		eps[i] = policy.Endpoint{Iface: veths[i].Name, IP: p.IP()}
	}
	if full, err = policy.Calico(mode, eps, allow, true); err != nil {
		return nil, nil, fmt.Errorf("policy on %s: %w", n.Name(), err)
	}
	if hook {
		return full, full, nil
	}
	rules, err = policy.Calico(mode, eps, allow, false)
	return rules, full, err
}

// restore loads rules on n with iptables-restore, which reads them on
// its stdin: no shell, no user text on its command line, and no file,
// which a run killed meanwhile (kill -9) left in the results directory.
func restore(ctx context.Context, t *Target, n engine.Node, rules []byte) error {
	if _, err := netfilter.OnNode(n)(ctx, []string{"iptables-restore", "--noflush"}, rules); err != nil {
		return fmt.Errorf("policy %s on %s: iptables-restore: %w", t.Datapath.Policy, n.Name(), err)
	}
	return nil
}
