// Package calicopod wires a pod the way Calico's CNI plugin and Felix do,
// whatever carries traffic between nodes (VXLAN, IP-in-IP, native routes).
//
// Design notes (what Calico programs for every workload endpoint):
//   - Pods are routed, not bridged. Each pod gets eth0 with a /32 address
//     and a default route via the link-local gateway 169.254.1.1. The host
//     side of the veth, cali<hash>, has no address and the MAC
//     ee:ee:ee:ee:ee:ee; proxy ARP on it answers the pod's ARP for
//     169.254.1.1 with that MAC, so every packet the pod sends goes to the
//     node's routing table. (Proxy ARP only answers for targets the node
//     can route out of another device: the node's default route.)
//   - The node routes each local pod as PODIP/32 dev caliX scope link.
//   - Each node owns an address block, here a /24 of 192.168.0.0/16 per
//     node (Calico's default block is /26 and more are taken as they
//     fill, which changes nothing on the datapath). The block's .1 is the
//     node's tunnel address where the datapath has a tunnel; pods take .2
//     onwards. The node keeps a blackhole route for its own block
//     (Blackhole), so a packet for an address of the block that no pod
//     holds is dropped on the node instead of leaving by the default route.
package calicopod

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

var (
	poolBase = net.IPv4(192, 168, 0, 0)
	// GatewayIP is the pods' link-local default gateway.
	GatewayIP = net.IPv4(169, 254, 1, 1)
	// HostVethMAC is the MAC Calico gives every host-side veth.
	HostVethMAC = net.HardwareAddr{0xee, 0xee, 0xee, 0xee, 0xee, 0xee}
)

// VethPrefix starts the name of each pod's host-side veth (cali<hash>).
const VethPrefix = "cali"

// Devices are what a Calico datapath has on a node (datapath.Datapath's
// Devices): the pods' cali veths and the datapath's tunnel, if any.
func Devices(tunnel string) []string {
	out := []string{datapath.PodDevices(VethPrefix)}
	if tunnel != "" {
		out = append(out, tunnel)
	}
	return out
}

// Pool is the IP pool every node's block is carved from (Calico's
// default pool, 192.168.0.0/16).
func Pool() *net.IPNet { return &net.IPNet{IP: poolBase.To4(), Mask: net.CIDRMask(16, 32)} }

// Block is the node's address block.
func Block(n datapath.Node) *net.IPNet { return wire.Subnet24(poolBase, n.Index) }

// TunnelIP is the node's tunnel address (the block's .1).
func TunnelIP(n datapath.Node) net.IP { return wire.PodAddr(Block(n).IP, 1) }

// PodIP is the address of the node's i-th pod.
func PodIP(n datapath.Node, i int) net.IP { return wire.PodAddr(Block(n).IP, i+2) }

// Attach wires one pod with the given MTU.
// Equivalent to:
//
//	ip -n NODE link add caliX mtu MTU address ee:ee:ee:ee:ee:ee type veth peer eth0 netns POD
//	ip -n POD addr add PODIP/32 dev eth0
//	ip -n POD route add 169.254.1.1 dev eth0 scope link; ip -n POD route add default via 169.254.1.1
//	ip -n NODE route replace PODIP/32 dev caliX scope link
//	sysctl -w net.ipv4.conf.caliX.proxy_arp=1 net.ipv4.neigh.caliX.proxy_delay=0 (in NODE)
func Attach(n datapath.Node, p datapath.Pod, mtu int) (datapath.Attachment, error) {
	pv, err := wire.NewPodVeth(n, p, VethPrefix, mtu)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pv.Close()
	node, pod, host, hostName := pv.Node, pv.Pod, pv.Host, pv.Host.Attrs().Name
	if err := node.LinkSetHardwareAddr(host, HostVethMAC); err != nil {
		return datapath.Attachment{}, fmt.Errorf("ip link set %s address %s: %w", hostName, HostVethMAC, err)
	}
	p.Steps.Done(datapath.StepLink)
	// proxy_arp must be on before the pod asks for its gateway.
	if err := wire.Sysctl(n.Netns, "net/ipv4/conf/"+hostName+"/proxy_arp", "1"); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.Sysctl(n.Netns, "net/ipv4/neigh/"+hostName+"/proxy_delay", "0"); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepPort)
	ip := PodIP(n, p.Index)
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepLink)
	if err := wire.AddrAdd(pod, eth, ip, 32); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepAddress)
	if err := wire.RouteLink(pod, eth, &net.IPNet{IP: GatewayIP, Mask: net.CIDRMask(32, 32)}); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.RouteVia(pod, eth, nil, GatewayIP, false); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.PodRoute(node, host, &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepRoutes)
	return datapath.Attachment{IP: ip, HostVeth: hostName}, nil
}

// ProtoFelixVXLAN is the protocol (80) Felix's VXLAN manager gives the
// blackhole routes of its local blocks (dataplanedefs.VXLANDefaultProto,
// used while DeviceRouteProtocol is left at RTPROT_BOOT: Felix's
// dataplane/linux/vxlan_mgr.go, blackholeRoutes).
const ProtoFelixVXLAN = netlink.RouteProtocol(80)

// Blackhole adds the blackhole route for the node's own block, with the
// protocol of whoever programs it on a real node: BIRD with BGP
// (birdmesh.RTProtBird), Felix in VXLAN mode (ProtoFelixVXLAN).
// Equivalent to: ip route add blackhole BLOCK proto PROTO
func Blackhole(n datapath.Node, proto netlink.RouteProtocol) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	r := &netlink.Route{Dst: Block(n), Type: unix.RTN_BLACKHOLE, Protocol: proto}
	if err := h.RouteAdd(r); err != nil {
		return fmt.Errorf("ip route add blackhole %s proto %d on %s: %w", Block(n), proto, n.Name, err)
	}
	return nil
}
