// Package kuberouter wires pods the way Kube-router does (study name
// "kube-router"): one bridge per node, kube-bridge, and routes between
// nodes that Kube-router learns over BGP, no encapsulation.
//
// Design notes (what kube-router programs; source: cloudnativelabs/
// kube-router, pkg/controllers/routing/network_routes_controller.go,
// cni/10-kuberouter.conf, daemonset/kubeadm-kuberouter-all-features.yaml,
// pkg/routes/linux_routes.go):
//   - Each node has a pod CIDR (node.Spec.PodCIDR, a /24 of the cluster
//     CIDR given to kube-controller-manager; 10.244.0.0/16 here, as for
//     the bridge datapath, since kube-router's kubeadm guide leaves the
//     choice to the user). The routing controller creates kube-bridge
//     (setupKubeBridge) with the node's MTU (auto-mtu, on by default:
//     GetNodeMTU is the MTU of the interface holding the node IP) and
//     writes the pod CIDR into the CNI configuration's host-local range
//     (initCNIConfig, InsertPodCIDRIntoIPAM).
//   - Pods are wired by the reference bridge plugin from that
//     configuration: bridge kube-bridge, isDefaultGateway true (so the
//     bridge holds the CIDR's .1 and pods route everything via it),
//     hairpinMode true (the all-features daemonsets; kube-router's proxy
//     leaves hairpin to the plugin, pkg/controllers/proxy/hairpin_controller.go),
//     host-local over the pod CIDR. Same pod network as cni0 under Flannel,
//     but without Flannel's extra cluster route in the pod.
//   - Routes: every node's GoBGP speaker originates its pod CIDR to an
//     iBGP full mesh (AS 64512, the default cluster ASN); injectRoute puts
//     each learned CIDR into the kernel as PEER_CIDR via PEER_NODE_IP
//     proto zebra (0x11, routes.ZebraOriginator) when the peer shares the
//     node's subnet. Across subnets it would build an ipip tunnel (the
//     default overlay-type "subnet"); the emulated nodes share one L2
//     segment, so there is none, and the MTU stays the underlay's.
//   - By default (New) the routes are static, written with kube-router's
//     protocol number: the forwarding path is the same whichever daemon
//     wrote them. NewBIRD runs a BGP daemon per node instead (bird.go).
//   - Bridge netfilter: once kube-bridge is up the routing controller runs
//     modprobe br_netfilter and sets net.bridge.bridge-nf-call-iptables=1
//     (network_routes_controller.go, Run: "enable netfilter for the
//     bridge"), so bridged pod-to-pod packets pass the node's iptables.
//     The sysctl is per namespace (Linux 5.3 on), so SetupNode sets it in
//     the node's; cnibench loads no module (br_netfilter would send the
//     host's own bridged traffic through iptables too), so Features asks
//     for br_netfilter and a kernel without it is refused with the reason.
//   - Service proxy: kube-router's is IPVS (pkg/controllers/proxy). It
//     is the netfilter knob's kubeProxy: kube-router
//     (netfilter.KubeRouterProxy), chosen per study entry, because it
//     needs IPVS, which a kernel may lack (probe.IPVS).
package kuberouter

import (
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// Bridge is the bridge kube-router creates and its CNI configuration names.
const Bridge = "kube-bridge"

// ClusterCIDR is the cluster's pod network; each node's pod CIDR is a /24
// of it (kube-controller-manager's default --node-cidr-mask-size).
var ClusterCIDR = &net.IPNet{IP: net.IPv4(10, 244, 0, 0).To4(), Mask: net.CIDRMask(16, 32)}

// NetworkName is the network name of kube-router's CNI configuration
// (cni/10-kuberouter.conf); host-local keeps its leases under it.
const NetworkName = "mynet"

// RTProtZebra is the protocol of the routes kube-router injects
// (routes.ZebraOriginator, 0x11).
const RTProtZebra = netlink.RouteProtocol(0x11)

// Datapath is the kube-router datapath with static routes.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "kube-router" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Bridge, probe.BrNetfilter} }

// Tunnel implements datapath.Datapath: there is none (nodes share a subnet).
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: kube-bridge.
func (*Datapath) PodBridge() string { return Bridge }

// Devices implements datapath.Datapath: kube-bridge and the pods' veths.
func (*Datapath) Devices() []string {
	return []string{Bridge, datapath.PodDevices(cnibridge.VethPrefix)}
}

// MTU implements datapath.Datapath: auto-mtu takes the node interface's.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

// PodCIDR is node n's pod CIDR.
func PodCIDR(n datapath.Node) *net.IPNet { return cnibridge.Subnet(ClusterCIDR.IP, n) }

// SetupNode creates kube-bridge with the pod CIDR's gateway address,
// turns on forwarding and bridge netfilter. (kube-router creates the
// bridge bare; the bridge plugin adds the gateway address on the first
// pod, isDefaultGateway. The end state is the same.)
// Equivalent to:
//
//	ip link add kube-bridge mtu MTU type bridge; ip addr add CIDR.1/24 dev kube-bridge; ip link set kube-bridge up
//	sysctl net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := cnibridge.SetupNamedBridge(h, n, Bridge, PodCIDR(n), d.MTU(n.UnderlayMTU)); err != nil {
		return err
	}
	// A new namespace starts with 1 where br_netfilter is present; kube-
	// router writes it all the same, and so does this.
	return wire.Sysctl(n.Netns, "net/bridge/bridge-nf-call-iptables", "1")
}

// ConnectNodes adds, on every node, the route injectRoute installs for
// each other node's pod CIDR.
// Equivalent to: ip route add PEER_CIDR via PEER_UNDERLAY_IP dev eth1 proto zebra
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.RoutePeersProto(nodes, PodCIDR, RTProtZebra)
}

// Port is the port the bridge plugin makes for pod p from kube-router's
// configuration on a node with that pod CIDR.
func Port(p datapath.Pod, cidr *net.IPNet, mtu int) cnibridge.Port {
	ones, _ := cidr.Mask.Size()
	return cnibridge.Port{
		Bridge: Bridge, VethPrefix: cnibridge.VethPrefix, MTU: mtu,
		IP: cnibridge.PodIP(cidr, p.Index), PrefixLen: ones, Gateway: cnibridge.Gateway(cidr),
		Hairpin: true,
	}
}

// AttachPod wires one pod to kube-bridge as the bridge plugin does (Port).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return cnibridge.AttachPort(n, p, Port(p, PodCIDR(n), d.MTU(n.UnderlayMTU)))
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string { return []string{cniconf.TypeBridge, cniconf.TypeHostLocal} }

// CNIConfig implements datapath.CNIDelegate: kube-router's configuration
// (the all-features daemonset's cni-conf.json) once the routing
// controller has inserted the pod CIDR and the MTU:
//
//	{"type":"bridge","bridge":"kube-bridge","mtu":MTU,"isDefaultGateway":true,"hairpinMode":true,
//	 "ipam":{"type":"host-local","ranges":[[{"subnet":"POD_CIDR"}]]}}
//
// isGateway is written out: the plugin sets it whenever
// isDefaultGateway is set. ipMasq is false, as kube-router leaves it.
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	return cniconf.Marshal(NetworkName, cniconf.Bridge{
		Type: cniconf.TypeBridge, Bridge: Bridge, MTU: d.MTU(n.UnderlayMTU),
		IsGateway: true, IsDefaultGateway: true, HairpinMode: true,
		IPAM: cniconf.HostLocal{
			Type:   cniconf.TypeHostLocal,
			Ranges: [][]cniconf.Range{{{Subnet: PodCIDR(n).String()}}},
		},
	})
}

var (
	_ datapath.Datapath    = (*Datapath)(nil)
	_ datapath.CNIDelegate = (*Datapath)(nil)
	_ datapath.MTUSetter   = (*Datapath)(nil)
)
