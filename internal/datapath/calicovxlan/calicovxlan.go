// Package calicovxlan wires pods the way Calico does in VXLAN mode.
//
// Design notes (what Calico's Felix programs, reproduced with netlink):
//   - Pods are routed, not bridged (package calicopod): eth0 with a /32,
//     default route via 169.254.1.1 answered by proxy ARP on cali<hash>,
//     and PODIP/32 dev caliX on the node.
//   - Each node owns an address block (here a /24 of 192.168.0.0/16, one
//     per node; Calico's default block is /26 and it allocates more as they
//     fill, which changes nothing on the datapath). The node's vxlan.calico
//     device (VNI 4096, UDP 4789, no learning) carries a /32 of the
//     block: here its .1 (calicopod.TunnelIP, pods from .2); Calico's IPAM
//     gives the tunnel the block's first free address, in a fresh block
//     its first (.0). Only the address differs, not the path.
//   - For every remote node: a route BLOCK via REMOTE_TUNNEL_IP dev
//     vxlan.calico onlink, a permanent neighbour REMOTE_TUNNEL_IP ->
//     remote VTEP MAC, and an FDB entry VTEP MAC -> remote underlay IP.
//   - The node's own block has a blackhole route, proto 80 (Felix's, see
//     calicopod.Blackhole): an address of the block that no pod holds is
//     dropped on the node instead of leaving by the default route.
//   - MTU: VXLAN costs 50 bytes, so 1450 on a 1500-byte underlay for the
//     tunnel and the pods (Calico's VXLAN MTU).
//   - On a kernel up to 5.7.0 Felix turns vxlan.calico's tx checksum
//     offload off, and with it TSO (calicopod.FelixTxOff); so does
//     SetupNode, and the run records it as the datapath's mode.
package calicovxlan

import (
	"net"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Device is Calico's VXLAN device name.
	Device = "vxlan.calico"
	vni    = 4096
	port   = 4789
	// overhead is outer Ethernet-less IPv4 + UDP + VXLAN + inner Ethernet.
	overhead = 50
)

// Datapath is the calico-vxlan datapath.
type Datapath struct {
	datapath.MTUOverride
	// TxOff turns vxlan.calico's tx checksumming off where Felix would
	// (SetupNode) and says whether it did (BuiltMode).
	TxOff calicopod.FelixTxOff
}

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "calico-vxlan" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Vxlan} }

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// PodBridge implements datapath.Datapath: none, pods are routed.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: the pods' cali veths and
// vxlan.calico.
func (*Datapath) Devices() []string { return calicopod.Devices(Device) }

// BuiltMode implements datapath.Moded: whether SetupNode turned
// vxlan.calico's tx checksumming off, as Felix does on this kernel.
func (d *Datapath) BuiltMode() (mode, standIn string) { return d.TxOff.BuiltMode() }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - overhead) }

func block(n datapath.Node) *net.IPNet { return calicopod.Block(n) }
func tunnelIP(n datapath.Node) net.IP  { return calicopod.TunnelIP(n) }

// SetupNode creates vxlan.calico, turns on forwarding and adds the
// blackhole route Felix's VXLAN manager keeps for the node's own block.
// Equivalent to:
//
//	ip link add vxlan.calico mtu 1450 type vxlan id 4096 local UNDERLAY_IP dev eth1 dstport 4789 nolearning
//	ethtool -K vxlan.calico tx off   (kernel <= 5.7.0 only, as Felix)
//	ip addr add TUNNEL_IP/32 dev vxlan.calico; ip link set vxlan.calico up
//	sysctl net.ipv4.ip_forward=1
//	ip route add blackhole BLOCK proto 80
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := wire.AddVxlan(h, n, Device, vni, port, d.MTU(n.UnderlayMTU), false); err != nil {
		return err
	}
	if err := d.TxOff.Setup(n, Device); err != nil {
		return err
	}
	l, err := wire.Up(h, Device)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, l, tunnelIP(n), 32); err != nil {
		return err
	}
	if err := wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	return calicopod.Blackhole(n, calicopod.ProtoFelixVXLAN)
}

// ConnectNodes programs the route, neighbour and FDB entry for every
// remote node's block, as Felix's VXLAN manager does.
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.ConnectVTEPs(nodes, Device, tunnelIP, block)
}

// AttachPod wires one pod the Calico way (package calicopod).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return calicopod.Attach(n, p, d.MTU(n.UnderlayMTU))
}
