package knob

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// netfilterEntry installs the iptables (and nftables) state a real node
// of the entry's CNI carries: the daemon's chains (internal/netfilter's
// generators, each citing the code it follows) and kube-proxy's for a
// number of ClusterIP Services. Without it the emulated datapaths meet
// almost no rule, and the netfilter share of the cost per packet and
// Table III's path are zero. Pods scope: Calico's chains name every
// endpoint, so the state is rewritten whenever the pods change. The
// rules live in the run's node namespaces; Undo still puts each node's
// tables back exactly as they were (a snapshot taken before the first
// write), so the next replica count starts from the datapath's own
// state and not from a second copy of the hooks.
var netfilterEntry = Entry{
	Name: "netfilter",
	Changes: "iptables rules of the CNI's daemon and kube-proxy (iptables, nftables or ipvs mode, N Services; ipvs adds the IPVS services, " +
		"the kube-ipvs0 dummy device and the ipsets) on both nodes, the datapath entry's netfilter; with Cilium's kube-proxy replacement, " +
		"socket load-balancing BPF programs on cnibench's cgroup instead of kube-proxy",
	Scope:  Pods,
	Wanted: func(t *Target) bool { return t.Datapath.Netfilter != nil },
	Needs:  func(t *Target) []string { return kubeProxyNeeds(t.Datapath.Netfilter) },
	Apply:  applyNetfilter,
}

// kubeProxyNeeds is what writing the CNI's and kube-proxy's state in
// nf's mode needs: in every mode the iptables rules (tried in a scratch
// namespace, probe.Iptables, not only the program found) and
// iptables-save, which snapshots each node's tables to put them back;
// nftables mode a table nft loads; an IPVS proxy IPVS, its dummy device
// and its ipsets; Cilium's replacement its socket programs.
func kubeProxyNeeds(nf *study.Netfilter) []string {
	f := []string{probe.ToolIptablesRestore, probe.ToolIptablesSave, probe.Iptables}
	switch {
	case nf != nil && nf.Mode() == study.KubeProxyNFT:
		f = append(f, probe.ToolNft, probe.NFTables)
	case ipvsProxy(nf) != "":
		f = append(f, probe.IPVS, probe.Dummy, probe.IPSet)
	case nf != nil && nf.Mode() == study.KubeProxyCilium:
		f = append(f, probe.SocketLB)
	}
	return f
}

// ipvsProxy is the IPVS Service proxy nf's mode names, if any.
func ipvsProxy(nf *study.Netfilter) netfilter.Proxy {
	if nf == nil {
		return ""
	}
	switch nf.Mode() {
	case study.KubeProxyIPVS:
		return netfilter.ProxyKubeProxy
	case study.KubeProxyKubeRouter:
		return netfilter.ProxyKubeRouter
	}
	return ""
}

// Where kube-proxy's Services and their (unreached) endpoints live: the
// kubeadm default service CIDR, and the shared address space no
// emulated pod or underlay uses.
var (
	serviceCIDR  = mustCIDR("10.96.0.0/12")
	endpointCIDR = mustCIDR("100.64.0.0/10")
)

// fillers are the filler Services of the entry's netfilter state (none
// without one, or without a Service proxy): kube-proxy's rules, IPVS's
// virtual servers or Cilium's tables hold them beside the measured ones.
func fillers(nf *study.Netfilter) ([]netfilter.Service, error) {
	if nf == nil || nf.Mode() == study.KubeProxyNone {
		return nil, nil
	}
	return netfilter.Fillers(nf.ServiceCount(), nf.EndpointCount(), serviceCIDR, endpointCIDR)
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func applyNetfilter(ctx context.Context, t *Target) (Undo, error) {
	nf := *t.Datapath.Netfilter
	gen, err := netfilter.Lookup(nf.CNI)
	if err != nil {
		return nil, err
	}
	env := &results.NetfilterEnv{CNI: nf.CNI, Source: gen.Source, KubeProxy: nf.Mode(), Chains: map[string]int{}, Rules: map[string]int{}}
	if nf.Mode() != study.KubeProxyNone {
		env.Services, env.Endpoints = nf.ServiceCount(), nf.EndpointCount()
	}
	t.Env.Netfilter = env
	var undos []func() error
	undo := func() error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			errs = append(errs, undos[i]())
		}
		return errors.Join(errs...)
	}
	var allow []*net.IPNet
	for _, side := range []struct {
		n    engine.Node
		pods []engine.Pod
	}{{t.Cluster.Server(), t.Servers}, {t.Cluster.Client(), t.Clients}} {
		run := netfilter.OnNode(side.n)
		snap, err := netfilter.Snapshot(ctx, run)
		if err != nil {
			return undo, fmt.Errorf("netfilter on %s: %w", side.n.Name(), err)
		}
		bases, err := netfilter.BaseChains(ctx, run)
		if err != nil {
			return undo, fmt.Errorf("netfilter on %s: %w", side.n.Name(), err)
		}
		name := side.n.Name()
		undos = append(undos, undoNode(t, side.n, nf, snap, bases))
		node, err := netfilter.NodeOf(side.n, side.pods)
		if err == nil {
			err = gen.Fits(node)
		}
		if err != nil {
			return undo, fmt.Errorf("datapath %s: netfilter %s: %w", t.Datapath.Name, nf.CNI, err)
		}
		if allow == nil {
			allow = []*net.IPNet{node.ClusterCIDR}
		}
		node.AllowFrom = allow
		// kube-proxy's IPVS mode leaves kube-ipvs0 on the node, and Felix
		// turns its IPVS support on when it sees it; kube-router's proxy
		// binds its Service IPs to kube-dummy-if, which Felix ignores.
		node.KubeIPVS = ipvsProxy(&nf) == netfilter.ProxyKubeProxy
		chains, rules, err := installNetfilter(ctx, t, side.n, nf, node)
		if err != nil {
			return undo, fmt.Errorf("datapath %s: netfilter %s on %s: %w", t.Datapath.Name, nf.CNI, name, err)
		}
		env.Chains[name], env.Rules[name] = chains, rules
	}
	if nf.Mode() == study.KubeProxyCilium {
		fill, err := fillers(&nf)
		if err != nil {
			return undo, err
		}
		u, what, err := attachSocketLB(t, fill)
		if u != nil {
			undos = append(undos, u)
		}
		if err != nil {
			return undo, fmt.Errorf("datapath %s: %w", t.Datapath.Name, err)
		}
		env.SocketLB = what
	}
	return undo, nil
}

// undoNode puts node n's netfilter state back as the snapshot snap and
// the base chains bases found it, and takes out what kube-proxy's
// nftables or IPVS mode added beside the tables.
func undoNode(t *Target, n engine.Node, nf study.Netfilter, snap []byte, bases map[string]bool) func() error {
	run := netfilter.OnNode(n)
	return func() error {
		err := netfilter.Restore(context.Background(), run, snap)
		if err == nil {
			err = netfilter.PruneBaseChains(context.Background(), run, bases)
		}
		if nf.Mode() == study.KubeProxyNFT {
			err = errors.Join(err, netfilter.DeleteNFT(context.Background(), run))
		}
		if p := ipvsProxy(&nf); p != "" {
			err = errors.Join(err, clearIPVS(n.Netns(), p))
		}
		if err != nil {
			return fmt.Errorf("netfilter on %s: %w", n.Name(), err)
		}
		return nil
	}
}

// installNetfilter writes kube-proxy's rules (or its stand-in's) and
// then the CNI's on one node, and counts what it installed. The order is
// a kubeadm node's steady state: kube-proxy prepends its hooks and does
// not move them once present, and the CNI daemon then inserts its own
// above them or appends them below, as each one does
// (internal/netfilter's Insert and Append, per generator), so the CNI's
// rules go in last to land on the right side.
func installNetfilter(ctx context.Context, t *Target, n engine.Node, nf study.Netfilter, node netfilter.Node) (chains, rules int, err error) {
	run := netfilter.OnNode(n)
	chains, rules, err = installProxy(ctx, t, n, nf, node)
	if err != nil {
		return 0, 0, err
	}
	rs, err := netfilter.Generate(nf.CNI, node)
	if err != nil {
		return 0, 0, err
	}
	if err := netfilter.Apply(ctx, run, rs); err != nil {
		return 0, 0, err
	}
	c, r := rs.Count()
	return chains + c, rules + r, nil
}

// installProxy writes the Service proxy's state in nf's mode on one node
// and counts its iptables chains and rules: kube-proxy's iptables rules,
// its nftables table (not counted: no iptables rule), or an IPVS proxy's
// sets, virtual servers and rules. With no proxy, or Cilium's
// replacement (BPF map entries, see applyNetfilter), nothing.
func installProxy(ctx context.Context, t *Target, n engine.Node, nf study.Netfilter, node netfilter.Node) (chains, rules int, err error) {
	if nf.Mode() == study.KubeProxyNone || nf.Mode() == study.KubeProxyCilium {
		return 0, 0, nil
	}
	run := netfilter.OnNode(n)
	svcs, err := fillers(&nf)
	if err != nil {
		return 0, 0, err
	}
	var kp *netfilter.Ruleset
	switch p := ipvsProxy(&nf); {
	case nf.Mode() == study.KubeProxyNFT:
		script, err := netfilter.KubeProxyNFT(node.ClusterCIDR, serviceCIDR, svcs, true, node.NodeIP)
		if err != nil {
			return 0, 0, err
		}
		return 0, 0, netfilter.ApplyNFT(ctx, run, script)
	case p != "":
		// The sets go in first: the rules match them.
		st, err := netfilter.IPVSOn(p, n, node.PodCIDR, node.ClusterCIDR, svcs)
		if err == nil {
			err = netfilter.SyncIPVS(n.Netns(), st)
		}
		if err != nil {
			return 0, 0, err
		}
		kp = st.Rules
	default:
		if kp, err = netfilter.KubeProxy(node.ClusterCIDR, svcs); err != nil {
			return 0, 0, err
		}
	}
	if err := netfilter.Apply(ctx, run, kp); err != nil {
		return 0, 0, err
	}
	c, r := kp.Count()
	return c, r, nil
}

// clearIPVS takes proxy p's IPVS state out of namespace ns.
func clearIPVS(ns string, p netfilter.Proxy) error {
	l, err := netfilter.Layout(p)
	if err != nil {
		return err
	}
	return netfilter.ClearIPVS(ns, l)
}
