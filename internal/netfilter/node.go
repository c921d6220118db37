package netfilter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
)

// NodeOf describes a local-engine node for the generators: its pods'
// /24 (the node's block: every emulated datapath gives a node one /24),
// the /16 around it (the cluster), its underlay device and address, its
// tunnel, the Linux bridge its pods hang off (none where they do not),
// its pods' host-side devices and every device it has. The devices are
// the datapath's own, not the CNI's defaults: kube-router's FORWARD
// accepts on the bridge datapath name cni0, or they would wait for a
// kube-bridge that is not there and never match. The bridge and the
// devices are read from the kernel, so that Generator.Fits on this node
// is the check of what was built; DatapathNode is what the datapath
// says before it is built.
func NodeOf(n engine.Node, pods []engine.Pod) (Node, error) {
	if len(pods) == 0 {
		return Node{}, fmt.Errorf("node %s: no pods to describe", n.Name())
	}
	ip := pods[0].IP().To4()
	if ip == nil {
		return Node{}, fmt.Errorf("node %s: pod %s has no IPv4 address", n.Name(), pods[0].Name())
	}
	nn := Node{
		PodCIDR:     BlockOf(ip),
		ClusterCIDR: ClusterOf(ip),
		Underlay:    n.Underlay().Name,
	}
	var err error
	if nn.NodeIP, err = ifaceIP(n.Netns(), n.Underlay().Name); err != nil {
		return Node{}, fmt.Errorf("node %s: %w", n.Name(), err)
	}
	if tun, ok := n.Tunnel(); ok {
		nn.Tunnel = tun.Name
	}
	veths, err := n.HostVeths(pods)
	if err == nil {
		err = engine.OnePerPod(n, pods, veths, "the CNI's per-pod rules")
	}
	if err != nil {
		return Node{}, fmt.Errorf("node %s: the rules match pods by their host-side device: %w", n.Name(), err)
	}
	for i, p := range pods {
		nn.Pods = append(nn.Pods, Pod{Iface: veths[i].Name, IP: p.IP()})
	}
	if nn.Bridge, err = bridgeOf(veths[0]); err != nil {
		return Node{}, fmt.Errorf("node %s: %w", n.Name(), err)
	}
	if nn.Devices, err = devicesIn(n.Netns()); err != nil {
		return Node{}, fmt.Errorf("node %s: %w", n.Name(), err)
	}
	return nn, nil
}

// DatapathNode is what datapath d says of its nodes without building
// one: the Linux bridge its pods hang off, its tunnel and its devices
// (its PodBridge, Tunnel and Devices), the fields of NodeOf's node that
// Generator.Fits reads. Study validation refuses on it what the knob
// would refuse on NodeOf's node once the datapath is built
// (TestKernelDatapathNodeIsNodeOf holds the two together). Like NodeOf
// it refuses a datapath whose pods have no host-side device.
func DatapathNode(d datapath.Datapath) (Node, error) {
	if why := datapath.WhyNoPodPeers(d); why != "" {
		return Node{}, fmt.Errorf("%s, and the CNI's rules are written for each pod's host-side device (Calico's per-endpoint chains name them): "+
			"netfilter state needs a datapath whose pods have one", why)
	}
	return Node{Bridge: d.PodBridge(), Tunnel: d.Tunnel(), Devices: d.Devices()}, nil
}

// devicesIn names every device in namespace ns.
// Equivalent to: ip -n NS -o link show
func devicesIn(ns string) ([]string, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := netns.Dump(h.LinkList)
	if err != nil {
		return nil, fmt.Errorf("ip link show: %w", err)
	}
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.Attrs().Name
	}
	return out, nil
}

// bridgeOf is the Linux bridge port is a port of, or "" when it is none
// (a routed veth, or a port of an Open vSwitch datapath, which
// br_netfilter does not show iptables).
func bridgeOf(port netns.Iface) (string, error) {
	h, err := netns.Handle(port.Netns)
	if err != nil {
		return "", err
	}
	defer h.Close()
	l, err := h.LinkByName(port.Name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", port.Name, err)
	}
	if l.Attrs().MasterIndex == 0 {
		return "", nil
	}
	m, err := h.LinkByIndex(l.Attrs().MasterIndex)
	if err != nil {
		return "", fmt.Errorf("master of %s: %w", port.Name, err)
	}
	if _, ok := m.(*netlink.Bridge); !ok {
		return "", nil
	}
	return m.Attrs().Name, nil
}

// UnderlayIP is node n's own address: the first IPv4 address of its
// underlay device.
func UnderlayIP(n engine.Node) (net.IP, error) {
	ip, err := ifaceIP(n.Netns(), n.Underlay().Name)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name(), err)
	}
	return ip, nil
}

// ifaceIP is the first IPv4 address of dev in namespace ns.
func ifaceIP(ns, dev string) (net.IP, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dev, err)
	}
	addrs, err := h.AddrList(l, netlink.FAMILY_V4)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("no IPv4 address on %s: %v", dev, err)
	}
	return addrs[0].IP, nil
}

// builtinChains are the built-in chains of the tables the generators
// write, as iptables-restore needs them to empty a table.
var builtinChains = []struct{ table, chains string }{
	{"raw", "PREROUTING OUTPUT"},
	{"mangle", "PREROUTING INPUT FORWARD OUTPUT POSTROUTING"},
	{"filter", "INPUT FORWARD OUTPUT"},
	{"nat", "PREROUTING INPUT OUTPUT POSTROUTING"},
}

// Snapshot reads the rules where run runs (iptables-save, no
// counters) so that Restore can put exactly them back.
func Snapshot(ctx context.Context, run Runner) ([]byte, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	out, err := run(ctx, []string{"iptables-save"}, nil)
	if err != nil {
		return nil, fmt.Errorf("iptables-save: %w", err)
	}
	return out, nil
}

// Restore puts back a Snapshot: each table in it is replaced by its
// content then, and each of raw, mangle, filter and nat that it did not
// hold is emptied (its policies ACCEPT), so rules written since are
// gone whichever table they went to. The rules go on iptables-restore's
// stdin; dir is no longer used (see Apply).
func Restore(ctx context.Context, run Runner, snap []byte) error {
	var b bytes.Buffer
	b.Write(snap)
	for _, t := range builtinChains {
		if bytes.Contains(snap, []byte("\n*"+t.table+"\n")) || bytes.HasPrefix(snap, []byte("*"+t.table+"\n")) {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", t.table)
		for _, c := range strings.Fields(t.chains) {
			fmt.Fprintf(&b, ":%s ACCEPT [0:0]\n", c)
		}
		b.WriteString("COMMIT\n")
	}
	if _, err := run(ctx, []string{"iptables-restore"}, b.Bytes()); err != nil {
		return fmt.Errorf("iptables-restore of the snapshot: %w", err)
	}
	return nil
}

// DeleteNFT removes kube-proxy's nftables table where run runs; a table
// that is not there is no error.
func DeleteNFT(ctx context.Context, run Runner) error {
	out, err := run(ctx, []string{"nft", "list", "tables", "ip"}, nil)
	if err != nil {
		return fmt.Errorf("nft list tables: %w", err)
	}
	if !bytes.Contains(out, []byte("table ip "+NFTTable+"\n")) && !bytes.HasSuffix(bytes.TrimSpace(out), []byte("table ip "+NFTTable)) {
		return nil
	}
	if _, err := run(ctx, []string{"nft", "delete", "table", "ip", NFTTable}, nil); err != nil {
		return errors.Join(fmt.Errorf("nft delete table ip %s", NFTTable), err)
	}
	return nil
}

// ClusterOf is the cluster CIDR the generators assume around a pod
// address: its /16 (every emulated datapath numbers its pods so).
func ClusterOf(podIP net.IP) *net.IPNet {
	return &net.IPNet{IP: podIP.To4().Mask(net.CIDRMask(16, 32)), Mask: net.CIDRMask(16, 32)}
}

// BlockOf is the node's pod block the generators assume around a pod
// address: its /24 (NodeOf's PodCIDR).
func BlockOf(podIP net.IP) *net.IPNet {
	return &net.IPNet{IP: podIP.To4().Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}
}

// WithoutHooks is rs without its rules in the built-in chains: the
// user chains alone, for rewriting a rule set whose hooks a node
// already has (iptables-restore --noflush appends them again).
func WithoutHooks(rs *Ruleset) *Ruleset {
	out := New()
	for _, c := range rs.Chains() {
		table, name, _ := strings.Cut(c, "/")
		out.Chain(table, name)
	}
	for _, r := range rs.Rules() {
		if rs.HasChain(r.Table, r.Chain) {
			out.Append(r.Table, r.Chain, "%s", r.Spec)
		}
	}
	return out
}
