// Package ipvlan wires pods with IPVLAN on the node's underlay NIC, as the
// ipvlan CNI plugin does: in L2 mode (the plugin's default, study name
// "ipvlan") or in L3 mode ("ipvlan-l3").
//
// Design notes:
//   - Each pod's eth0 is an ipvlan child of the node's eth1. Unlike
//     macvlan, all children share the parent's MAC; the driver
//     demultiplexes received packets by destination IP, and traffic
//     between children of one parent is switched inside the driver.
//   - L2 mode: the children ARP on the underlay themselves, so pods take
//     underlay addresses (package underlaypod) and reach every node's pods
//     on the shared L2 segment.
//   - L3 mode: the children are NOARP and the driver hands their egress
//     packets to the parent's namespace (the node), which routes them with
//     its own table out of eth1 (ip_local_out: the node's OUTPUT and
//     POSTROUTING hooks see them, no forwarding). Ingress goes from eth1
//     straight to the child owning the destination address, bypassing
//     the node's IP stack. No one answers ARP for a pod, so pods cannot
//     sit on the underlay subnet: each node gets a pod subnet
//     (10.244.N.0/24, pods from .2, the ipvlan plugin's host-local
//     defaults) and the nodes route to each other's subnets via the
//     underlay, as host-gw does. The pod's default route names .1, which
//     no device holds: a NOARP device never resolves its next hop, so the
//     route only picks eth0 (it is what the CNI plugin programs).
//   - The parent cannot reach its own children in either mode; pod-to-pod
//     traffic is unaffected.
//   - MTU: the underlay's.
package ipvlan

import (
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/underlaypod"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// PodNetwork is the L3 mode's pod network; node N leases 10.244.N.0/24.
var PodNetwork = &net.IPNet{IP: net.IPv4(10, 244, 0, 0).To4(), Mask: net.CIDRMask(16, 32)}

// Datapath is the ipvlan datapath in one mode.
type Datapath struct {
	datapath.MTUOverride
	l3 bool
}

// New returns the datapath in L2 mode.
func New() *Datapath { return &Datapath{} }

// NewL3 returns the datapath in L3 mode.
func NewL3() *Datapath { return &Datapath{l3: true} }

// Name implements datapath.Datapath.
func (d *Datapath) Name() string {
	if d.l3 {
		return "ipvlan-l3"
	}
	return "ipvlan"
}

// mode is the mode as the kernel and the CNI plugin name it.
func (d *Datapath) mode() (netlink.IPVlanMode, string) {
	if d.l3 {
		return netlink.IPVLAN_MODE_L3, "l3"
	}
	return netlink.IPVLAN_MODE_L2, "l2"
}

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.IPVlan} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: none, each pod's eth0 is a
// ipvlan child of the node's underlay, with no peer on the node.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: none, the children are made
// in the pods' namespaces.
func (*Datapath) Devices() []string { return nil }

// PodPeerless implements datapath.PodPeerless.
func (*Datapath) PodPeerless() string {
	return "its pods' eth0 is an ipvlan child of the node's underlay, with no peer on the node"
}

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

// SetupNode implements datapath.Datapath; the underlay NIC is all it
// needs (L3 mode's egress is routed as the node's own output, so not even
// forwarding).
func (*Datapath) SetupNode(datapath.Node) error { return nil }

// ConnectNodes implements datapath.Datapath. L2 pods share the underlay's
// L2; L3 mode routes every other node's pod subnet via that node.
// Equivalent to (L3): ip route add 10.244.M.0/24 via REMOTE_UNDERLAY_IP dev eth1
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	if !d.l3 {
		return nil
	}
	return wire.RoutePeers(nodes, subnet)
}

// subnet is node n's pod subnet in L3 mode.
func subnet(n datapath.Node) *net.IPNet { return wire.Subnet24(PodNetwork.IP, n.Index) }

// addressing is where node n's pods take their addresses.
func (d *Datapath) addressing(n datapath.Node) (underlaypod.Addressing, error) {
	if !d.l3 {
		return underlaypod.Underlay(n)
	}
	s := subnet(n)
	return underlaypod.Addressing{
		Subnet:  s,
		Gateway: wire.PodAddr(s.IP, 1),
		First:   wire.PodAddr(s.IP, 2),
		Max:     datapath.MaxPodsPerNode,
	}, nil
}

// AttachPod gives the pod an ipvlan child of eth1 in the datapath's mode.
// Equivalent to (L3):
//
//	ip -n NODE link add link eth1 name eth0 netns POD mtu MTU type ipvlan mode l3
//	ip -n POD addr add 10.244.N.(2+i)/24 dev eth0; ip -n POD link set eth0 up
//	ip -n POD route add default via 10.244.N.1 dev eth0
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	a, err := d.addressing(n)
	if err != nil {
		return datapath.Attachment{}, err
	}
	mode, _ := d.mode()
	return underlaypod.AttachWith(n, p, d.MTU(n.UnderlayMTU), func(attrs netlink.LinkAttrs) netlink.Link {
		return &netlink.IPVlan{LinkAttrs: attrs, Mode: mode}
	}, a)
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string {
	return []string{cniconf.TypeIPVlan, cniconf.TypeHostLocal}
}

// CNIConfig implements datapath.CNIDelegate: the ipvlan plugin's
// configuration giving node n's pods an ipvlan child of eth1 in the
// datapath's mode, with the addresses and route AttachPod gives them.
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	a, err := d.addressing(n)
	if err != nil {
		return nil, err
	}
	_, mode := d.mode()
	return underlaypod.CNIConfigWith(cniconf.TypeIPVlan, mode, n, d.MTU(n.UnderlayMTU), a)
}
