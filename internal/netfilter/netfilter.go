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
	// Devices are the devices the node has, as an iptables rule names
	// them (a family by its prefix and "+"): NodeOf lists every device
	// of a built node, DatapathNode what the datapath says it makes.
	// Fits refuses a CNI whose rules need a device of its own
	// (Generator.Devices) the node does not have.
	Devices []string
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
	// Devices are devices of the CNI's own datapath that its rules match
	// by name and that no device of another datapath stands for, so
	// they are not renamed as Bridge and Tunnel are: the rules fit only
	// a node that has every one (Node.Devices; a family by its prefix
	// and "+", as iptables names it). Home is the datapath that has
	// them, which the refusal suggests.
	Devices []string
	Home    string
}

// generators is the one list of CNI variants.
var generators = []Generator{
	{Name: "flannel", Source: "flannel-io/flannel pkg/trafficmngr/iptables/iptables.go", Gen: Flannel},
	{Name: "weave", Source: "weaveworks/weave net/bridge.go, prog/weave-npc/main.go", Gen: Weave, Bridge: "weave"},
	{Name: "cilium", Source: "cilium/cilium v1.17.4 pkg/datapath/iptables/iptables.go (kube-proxy replacement off: iptables masquerade)",
		Gen: func(n Node) (*Ruleset, error) { return Cilium(n, false) }, Devices: ciliumDevices, Home: "cilium"},
	{Name: "cilium-kpr", Source: "cilium/cilium v1.17.4 pkg/datapath/iptables/iptables.go (kube-proxy replacement and BPF masquerade on)",
		Gen: func(n Node) (*Ruleset, error) { return Cilium(n, true) }, Devices: ciliumDevices, Home: "cilium"},
	{Name: "kube-router", Source: "cloudnativelabs/kube-router v2.11.1 pkg/controllers/netpol/npc_iptables.go, pkg/controllers/routing", Gen: KubeRouter, Bridge: "kube-bridge"},
	{Name: "calico-wp-ipip", Source: "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", Gen: calicoGen(CalicoWithPolicy, true), Tunnel: calicoIPIPTunnel, Devices: calicoDevices, Home: "calico-ipip"},
	{Name: "calico-np-ipip", Source: "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", Gen: calicoGen(CalicoNoPolicy, true), Tunnel: calicoIPIPTunnel, Devices: calicoDevices, Home: "calico-ipip"},
	{Name: "calico-wp-xsub", Source: "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", Gen: calicoGen(CalicoWithPolicy, false), Devices: calicoDevices, Home: "calico-routed"},
	{Name: "calico-np-xsub", Source: "projectcalico/calico v3.29 felix/rules/static.go + internal/policy", Gen: calicoGen(CalicoNoPolicy, false), Devices: calicoDevices, Home: "calico-routed"},
}

// Fits refuses a node the CNI's rules would never match on: one whose
// pods hang off no Linux bridge, for a CNI whose FORWARD rules name its
// bridge (weave, kube-router). Without the refusal the rules are
// installed, counted in the chains and rules, and skipped by every
// packet, so the path and its cost come out lower with nothing said.
//
// Likewise a node without a tunnel device, for a CNI whose rules match
// packets leaving by its tunnel (FitsTunnel), and a node without the
// devices of the CNI's own that its rules name (FitsDevices).
//
// The knob calls it on NodeOf's node, read from the built datapath;
// study validation first on DatapathNode's, what the datapath says of
// its nodes, so that a pair that cannot fit is bad input (exit 2)
// before anything is built.
func (g Generator) Fits(n Node) error {
	if g.Bridge != "" && n.Bridge == "" {
		return fmt.Errorf("%s's rules match pods' traffic on their bridge (%s on a real node), and this datapath puts its pods on no Linux bridge: "+
			"they would never match (use a datapath with a bridge: %s, bridge, flannel-vxlan)", g.Name, g.Bridge, g.Name)
	}
	// Devices first: on a datapath without them the tunnel's refusal
	// would suggest native routing's rules of the same CNI, which need
	// them too (calico-*-xsub on kube-router).
	if err := g.FitsDevices(n.Devices); err != nil {
		return err
	}
	return g.FitsTunnel(n.Tunnel)
}

// FitsDevices refuses a node whose devices are have for a CNI whose
// rules match devices of the CNI's own datapath by name (Cilium's
// CILIUM_FORWARD accepts for cilium_host, cilium_net and lxc+; Felix's
// dispatch by cali+). They are not renamed onto another datapath's
// devices as a bridge or a tunnel is: Cilium's rules sit beside an eBPF
// datapath that takes pods' packets past the FORWARD hook, and no other
// datapath has a device that does what cilium_host does; Felix's
// per-endpoint chains hang off its own veths' names. Installed as they
// are, their matches never fire, and packets take another way through
// the chains than on a node of that CNI (further for Cilium's, shorter
// for Calico's), which the measured netfilter cost would count with
// nothing said.
func (g Generator) FitsDevices(have []string) error {
	for _, dev := range g.Devices {
		if !hasDevice(have, dev) {
			return fmt.Errorf("%s's rules match %s's own devices (%s), and this datapath has no %s: no device of another datapath stands for them, "+
				"and rules that never match would take packets another way through the chains than on a %s node (use the %s datapath)",
				g.Name, g.Home, strings.Join(g.Devices, ", "), dev, g.Home, g.Home)
		}
	}
	return nil
}

// hasDevice says whether a node whose devices are have (names, and
// PREFIX+ for a family of them) has what an iptables interface match
// dev matches: the device dev, or for PREFIX+ one whose name starts
// with PREFIX. A family in have stands for no device of a given name.
func hasDevice(have []string, dev string) bool {
	prefix, family := strings.CutSuffix(dev, "+")
	for _, h := range have {
		hp, hfamily := strings.CutSuffix(h, "+")
		if family && strings.HasPrefix(hp, prefix) || !family && !hfamily && h == dev {
			return true
		}
	}
	return false
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
