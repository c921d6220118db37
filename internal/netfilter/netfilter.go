package netfilter

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Pod is a workload endpoint on the node, as rules match it: by its
// host-side interface (cali*, veth*, lxc*) and address.
type Pod struct {
	Iface string
	IP    net.IP
}

// Node is what a CNI daemon knows about the node it programs.
type Node struct {
	// PodCIDR is this node's pod subnet (the flannel lease, the Calico
	// block, the kube-router podCIDR).
	PodCIDR *net.IPNet
	// ClusterCIDR holds every pod of the cluster.
	ClusterCIDR *net.IPNet
	// NodeIP is the node's own address on the underlay (Cilium SNATs
	// host traffic to it).
	NodeIP net.IP
	// Pods are the workload endpoints on this node (Calico's
	// per-endpoint chains).
	Pods []Pod
	// AllowFrom are the pod networks a "wp" Calico policy admits.
	AllowFrom []*net.IPNet
	// Bridge, Tunnel and Underlay name the node's devices when they
	// differ from the CNI's default (weave, kube-bridge; tunl0; eth1).
	Bridge, Tunnel, Underlay string
	// KubeIPVS: kube-proxy runs in IPVS mode, so the node has its
	// kube-ipvs0 device, and Calico's Felix, which looks for it, adds
	// its IPVS rules (calicoipvs.go).
	KubeIPVS bool
}

func (n Node) validate() error {
	if n.PodCIDR == nil || n.ClusterCIDR == nil {
		return errors.New("node needs a pod CIDR and a cluster CIDR")
	}
	if n.PodCIDR.IP.To4() == nil || n.ClusterCIDR.IP.To4() == nil {
		return errors.New("only IPv4 pod and cluster CIDRs are modelled")
	}
	return nil
}

func (n Node) dev(def, set string) string {
	if set != "" {
		return set
	}
	return def
}

// Generator writes a CNI's rule set for one node.
type Generator struct {
	// Name is the CNI variant as seed 004 names it (lower case).
	Name string
	// Source names the daemon code the rules are modelled on.
	Source string
	Gen    func(Node) (*Ruleset, error)
	// Bridge is the bridge the CNI's rules match pods' traffic by (its
	// default name; Node.Bridge renames it), "" when they match none.
	Bridge string
	// Tunnel is the tunnel device the CNI's rules match packets leaving
	// by (its default name; Node.Tunnel renames it), "" when they match
	// none.
	Tunnel string
}

// generators is the one list of CNI variants.
var generators = []Generator{
	{"flannel", "flannel-io/flannel pkg/trafficmngr/iptables/iptables.go", Flannel, "", ""},
	{"weave", "weaveworks/weave net/bridge.go, prog/weave-npc/main.go", Weave, "weave", ""},
	{"cilium", "cilium/cilium v1.17.4 pkg/datapath/iptables/iptables.go (kube-proxy replacement off: iptables masquerade)", func(n Node) (*Ruleset, error) { return Cilium(n, false) }, "", ""},
	{"cilium-kpr", "cilium/cilium v1.17.4 pkg/datapath/iptables/iptables.go (kube-proxy replacement and BPF masquerade on)", func(n Node) (*Ruleset, error) { return Cilium(n, true) }, "", ""},
	{"kube-router", "cloudnativelabs/kube-router v2.11.1 pkg/controllers/netpol/npc_iptables.go, pkg/controllers/routing", KubeRouter, "kube-bridge", ""},
	{"calico-wp-ipip", "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", calicoGen(CalicoWithPolicy, true), "", calicoIPIPTunnel},
	{"calico-np-ipip", "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", calicoGen(CalicoNoPolicy, true), "", calicoIPIPTunnel},
	{"calico-wp-xsub", "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", calicoGen(CalicoWithPolicy, false), "", ""},
	{"calico-np-xsub", "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", calicoGen(CalicoNoPolicy, false), "", ""},
}

// Fits refuses a node the CNI's rules would never match on: one whose
// pods hang off no Linux bridge, for a CNI whose FORWARD rules name its
// bridge (weave, kube-router). Without the refusal the rules are
// installed, counted in the chains and rules, and skipped by every
// packet, so the path and its cost come out lower with nothing said.
//
// Likewise a node without a tunnel device, for a CNI whose rules match
// packets leaving by its tunnel (FitsTunnel).
func (g Generator) Fits(n Node) error {
	if g.Bridge != "" && n.Bridge == "" {
		return fmt.Errorf("%s's rules match pods' traffic on their bridge (%s on a real node), and this datapath puts its pods on no Linux bridge: "+
			"they would never match (use a datapath with a bridge: %s, bridge, flannel-vxlan)", g.Name, g.Bridge, g.Name)
	}
	return g.FitsTunnel(n.Tunnel)
}

// FitsTunnel refuses a datapath whose tunnel device is tunnel ("" for
// none) for a CNI whose rules match packets leaving by its tunnel
// (calico-*-ipip: Felix's masquerade of host-sourced packets out of
// tunl0, calicoNAT). Without a tunnel that rule would be installed and
// counted with a device no packet leaves by. A datapath's tunnel is
// fixed by its type, so study validation refuses the pair as bad input
// too, before anything is built (app's checkDatapath).
func (g Generator) FitsTunnel(tunnel string) error {
	if g.Tunnel != "" && tunnel == "" {
		return fmt.Errorf("%s's rules masquerade host-sourced packets leaving by its tunnel (%s on a real node), and this datapath has no tunnel device: "+
			"that rule would never match (use a datapath with a tunnel, such as calico-ipip, or native routing's rules, %s)",
			g.Name, g.Tunnel, strings.TrimSuffix(g.Name, "-ipip")+"-xsub")
	}
	return nil
}

func calicoGen(mode string, ipip bool) func(Node) (*Ruleset, error) {
	return func(n Node) (*Ruleset, error) { return Calico(n, mode, ipip) }
}

// Names returns the CNI variants, sorted.
func Names() []string {
	out := make([]string, len(generators))
	for i, g := range generators {
		out[i] = g.Name
	}
	sort.Strings(out)
	return out
}

// Lookup returns a CNI variant's generator.
func Lookup(name string) (Generator, error) {
	for _, g := range generators {
		if g.Name == name {
			return g, nil
		}
	}
	return Generator{}, fmt.Errorf("netfilter state for CNI %q: unknown (%sknown: %s)", name, suggest.Hint(name, Names()), strings.Join(Names(), ", "))
}

// Generate writes the rule set of CNI cni for node n, validated, after
// the kubelet's (Kubelet), which every node has whatever its CNI and
// Service proxy.
func Generate(cni string, n Node) (*Ruleset, error) {
	g, err := Lookup(cni)
	if err != nil {
		return nil, err
	}
	if err := n.validate(); err != nil {
		return nil, fmt.Errorf("netfilter state for %s: %w", cni, err)
	}
	cniRules, err := g.Gen(n)
	if err != nil {
		return nil, fmt.Errorf("netfilter state for %s: %w", cni, err)
	}
	rs := Kubelet()
	rs.Merge(cniRules)
	if err := rs.Validate(); err != nil {
		return nil, fmt.Errorf("netfilter state for %s: %w", cni, err)
	}
	return rs, nil
}

// comment renders an iptables comment match.
func comment(s string) string { return fmt.Sprintf("-m comment --comment %q", s) }
