package knob

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/study"
)

// BasePort is the port measured server 0 listens on and its Service
// forwards; server i uses BasePort+i (engine.BasePort).
const BasePort = engine.BasePort

// servicePathEntry puts a ClusterIP Service in front of each measured
// server for a trial whose workload targets the Service (or hairpins
// through it), on the local engine: kube-proxy's iptables rules for
// them on both nodes (kube-proxy runs on every node; the client's node
// translates), and Target.Front the ClusterIPs the runner hands the
// driver instead of the pod IPs. On a cluster the kube engine's own
// Services front the servers already, so the knob is not wanted there.
// When the datapath carries kube-proxy's state (knob netfilter), the
// measured Services join its filler Services in the same chains, as on
// a real node; Undo puts each node's rules back from a snapshot.
var servicePathEntry = Entry{
	Name: "service-path",
	Changes: "kube-proxy's state (iptables rules, the nftables table, or IPVS services with their ipsets and rules) on both nodes, " +
		"or the entries of Cilium's tables (the cilium datapath's per-packet ones, its socket load balancer's), for a ClusterIP Service per measured server, for a trial whose workload's target is service or hairpin",
	Scope: Trial,
	Wanted: func(t *Target) bool {
		return t.Local && (t.Workload.Target == study.TargetService || t.Workload.Target == study.TargetHairpin)
	},
	Needs: func(t *Target) []string { return kubeProxyNeeds(t.Datapath.Netfilter) },
	Apply: applyServicePath,
}

func applyServicePath(ctx context.Context, t *Target) (Undo, error) {
	if len(t.Measured) == 0 {
		return nil, errors.New("service path: no measured server")
	}
	var ips []net.IP
	for _, p := range t.Measured {
		ips = append(ips, p.IP())
	}
	bench := netfilter.BenchServices(ips, BasePort)
	var undos []func() error
	undo := func() error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			errs = append(errs, undos[i]())
		}
		return errors.Join(errs...)
	}
	// Cilium's own tables: the datapath's (per packet), then its
	// replacement's socket load balancer, which leaves kube-proxy out.
	cilium := t.Datapath.Netfilter != nil && t.Datapath.Netfilter.Mode() == study.KubeProxyCilium
	u, err := serviceDatapathLB(t, bench)
	if u != nil {
		undos = append(undos, u)
	}
	if err == nil && cilium {
		if u, err = serviceSocketLB(t, bench); u != nil {
			undos = append(undos, u)
		}
	}
	if err != nil {
		return undo, fmt.Errorf("datapath %s: %w", t.Datapath.Name, err)
	}
	if cilium {
		front(t)
		return undo, nil
	}
	cluster := netfilter.ClusterOf(ips[0])
	for _, side := range []struct {
		n    engine.Node
		pods []engine.Pod
	}{{t.Cluster.Server(), t.Servers}, {t.Cluster.Client(), t.Clients}} {
		n := side.n
		var block *net.IPNet
		if len(side.pods) > 0 {
			block = netfilter.BlockOf(side.pods[0].IP())
		}
		u, err := serviceRules(ctx, t, n, block, cluster, bench)
		if u != nil {
			name := n.Name()
			undos = append(undos, func() error {
				if err := u(); err != nil {
					return fmt.Errorf("service path on %s: %w", name, err)
				}
				return nil
			})
		}
		if err != nil {
			return undo, fmt.Errorf("datapath %s: service path on %s: %w", t.Datapath.Name, n.Name(), err)
		}
	}
	front(t)
	return undo, nil
}

// front hands the runner the measured Services' ClusterIPs.
func front(t *Target) {
	for i := range t.Measured {
		t.Front = append(t.Front, netfilter.BenchClusterIP(i))
	}
}

// serviceRules writes the measured Services on one node, whose pods are
// in block, and returns how to take them away again.
func serviceRules(ctx context.Context, t *Target, n engine.Node, block, cluster *net.IPNet, bench []netfilter.Service) (func() error, error) {
	nf, run := t.Datapath.Netfilter, netfilter.OnNode(n)
	fill, err := fillers(nf)
	if err != nil {
		return nil, err
	}
	if nf != nil && nf.Mode() == study.KubeProxyNFT {
		// The table is rewritten whole: with the measured Services, then
		// back to the fillers alone. NodePorts match the node's address
		// (kube-proxy's default --nodeport-addresses=primary).
		ip, err := netfilter.UnderlayIP(n)
		if err != nil {
			return nil, err
		}
		script, err := netfilter.KubeProxyNFT(cluster, serviceCIDR, append(fill, bench...), true, ip)
		if err != nil {
			return nil, err
		}
		back, err := netfilter.KubeProxyNFT(cluster, serviceCIDR, fill, true, ip)
		if err != nil {
			return nil, err
		}
		u := func() error { return netfilter.ApplyNFT(context.Background(), run, back) }
		return u, netfilter.ApplyNFT(ctx, run, script)
	}
	snap, err := netfilter.Snapshot(ctx, run)
	if err != nil {
		return nil, err
	}
	u := func() error { return netfilter.Restore(context.Background(), run, snap) }
	var rs *netfilter.Ruleset
	if p := ipvsProxy(nf); p != "" {
		if rs, u, err = serviceIPVS(p, n, block, cluster, fill, bench, u); err != nil {
			return u, err
		}
	} else if rs, err = netfilter.KubeProxy(cluster, append(fill, bench...)); err != nil {
		return u, err
	}
	if fill != nil {
		// kube-proxy's hooks are on the node already (knob netfilter).
		rs = netfilter.WithoutHooks(rs)
	} else {
		// No netfilter knob wrote the node's state: the kubelet's goes
		// with kube-proxy's, as on any node (its jumps appended, below
		// kube-proxy's inserted hooks).
		kl := netfilter.Kubelet()
		kl.Merge(rs)
		rs = kl
	}
	return u, netfilter.Apply(ctx, run, rs)
}

// serviceIPVS adds the measured Services to IPVS proxy p's state on node
// n (the fillers' sets, dummy addresses and virtual servers, which knob
// netfilter installed) and returns the rules to load, and the undo:
// restore, then the fillers' state alone.
func serviceIPVS(p netfilter.Proxy, n engine.Node, block, cluster *net.IPNet, fill, bench []netfilter.Service, restore func() error) (*netfilter.Ruleset, func() error, error) {
	if block == nil {
		return nil, restore, errors.New("no pods on the node to place its pod block")
	}
	back, err := netfilter.IPVSOn(p, n, block, cluster, fill)
	if err != nil {
		return nil, restore, err
	}
	st, err := netfilter.IPVSOn(p, n, block, cluster, append(fill, bench...))
	if err != nil {
		return nil, restore, err
	}
	undo := func() error { return errors.Join(restore(), netfilter.SyncIPVS(n.Netns(), back)) }
	return st.Rules, undo, netfilter.SyncIPVS(n.Netns(), st)
}
