// Package flannelvxlan wires pods the way Flannel's VXLAN backend and its
// CNI plugin (delegating to the bridge plugin) do.
//
// Design notes (what flanneld and the bridge CNI plugin program):
//   - Each node leases a /24 of 10.244.0.0/16. Pods hang off the bridge
//     cni0 (package cnibridge: .1 gateway on cni0, veth<hash> ports with
//     hairpin, pods with a /24 address, a default route and a route to
//     10.244.0.0/16 via .1).
//   - flannel.1 is the VXLAN device (VNI 1, UDP 8472, no learning) with the
//     subnet's .0 as /32.
//   - For every remote subnet flanneld adds: route SUBNET via REMOTE.0 dev
//     flannel.1 onlink; permanent neighbour REMOTE.0 -> remote VTEP MAC;
//     FDB VTEP MAC -> remote node's public (underlay) IP.
//   - MTU 1450 on a 1500-byte underlay, on flannel.1, cni0 and the pods.
//   - Bridge netfilter: flanneld (v0.28.4, main.go:285-291) exits 1 at
//     start ("Failed to check br_netfilter") where its namespace has no
//     /proc/sys/net/bridge/bridge-nf-call-iptables, and a Kubernetes node
//     runs with it 1 (kubeadm's preflight requires it), so bridged
//     pod-to-pod packets on cni0 pass the node's iptables: without it
//     Table III's rule counts sit beside a netfilter cost of about 0.
//     SetupNode sets the sysctl in the node's namespace (per namespace
//     from Linux 5.3; it goes with it) where br_netfilter is there
//     (cnibench loads no module). Unlike kube-router's datapath, Features
//     does not ask for it: it matters where the entry's netfilter state
//     is measured (netfilter:), and the local engine requires it of such
//     an entry alone; elsewhere the datapath runs without it and the run
//     notes so (WithoutBrNetfilter, brnetfilter.go).
package flannelvxlan

import (
	"net"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Device is flanneld's VXLAN device for VNI 1.
	Device = "flannel.1"
	// Bridge is the bridge the CNI plugin attaches pods to.
	Bridge   = cnibridge.Bridge
	vni      = 1
	port     = 8472
	overhead = 50
)

// Datapath is the flannel-vxlan datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "flannel-vxlan" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Bridge, probe.Vxlan} }

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// PodBridge implements datapath.Datapath: cni0.
func (*Datapath) PodBridge() string { return Bridge }

// Devices implements datapath.Datapath: cni0, the pods' veths and
// flannel.1.
func (*Datapath) Devices() []string { return cnibridge.Devices(Device) }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - overhead) }

func subnet(n datapath.Node) *net.IPNet { return cnibridge.Subnet(cnibridge.FlannelNetwork.IP, n) }
func vtepIP(n datapath.Node) net.IP     { return wire.PodAddr(subnet(n).IP, 0) }

// SetupNode creates cni0 and flannel.1 and turns on bridge netfilter
// where the node has it.
// Equivalent to:
//
//	ip link add cni0 mtu 1450 type bridge; ip addr add 10.244.N.1/24 dev cni0; ip link set cni0 up
//	ip link add flannel.1 mtu 1450 type vxlan id 1 local UNDERLAY_IP dev eth1 dstport 8472 nolearning
//	ip addr add 10.244.N.0/32 dev flannel.1; ip link set flannel.1 up
//	sysctl net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := d.MTU(n.UnderlayMTU)
	if err := cnibridge.SetupBridge(h, n, subnet(n), mtu); err != nil {
		return err
	}
	if err := wire.AddVxlan(h, n, Device, vni, port, mtu, false); err != nil {
		return err
	}
	vl, err := wire.Up(h, Device)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, vl, vtepIP(n), 32); err != nil {
		return err
	}
	return wire.BridgeNetfilterOn(n.Netns)
}

// ConnectNodes programs what flanneld's VXLAN backend adds per remote lease.
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.ConnectVTEPs(nodes, Device, vtepIP, subnet)
}

// AttachPod wires one pod to cni0 as Flannel's CNI plugin has the bridge
// plugin do it (cnibridge.AttachFlannel).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return cnibridge.AttachFlannel(n, p, subnet(n), d.MTU(n.UnderlayMTU))
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string { return cnibridge.FlannelCNIPlugins() }

// CNIConfig implements datapath.CNIDelegate: what Flannel's CNI plugin
// hands the bridge plugin on node n (cnibridge.FlannelCNIConfig).
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	return cnibridge.FlannelCNIConfig(subnet(n), d.MTU(n.UnderlayMTU))
}
