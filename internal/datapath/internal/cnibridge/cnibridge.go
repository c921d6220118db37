// Package cnibridge wires pods the way the reference bridge CNI plugin
// does, which Flannel's CNI plugin delegates to (and Kube-router's, and
// the bridge-based datapaths here).
//
// Design notes (what the bridge plugin with host-local IPAM programs):
//   - Each node has a /24 pod subnet. The bridge cni0 holds the subnet's
//     .1 as the pods' gateway; pods take .2 onwards.
//   - Each pod's veth (host side veth<hash>) is a port of cni0; the pod has
//     eth0 with a /24 address and a default route via .1.
//   - Bridge, veths and pods carry the datapath's MTU.
//   - Flannel's CNI plugin delegates to the bridge plugin with a little
//     more (flannel.go): hairpin on the port and a route to the whole
//     cluster network via .1 besides the default route. FlannelCNIConfig
//     is that delegate configuration, so wiring cni can hand it to the
//     real plugin and get the same pod network.
package cnibridge

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// Bridge is the bridge pods attach to.
const Bridge = "cni0"

// VethPrefix starts the name of each pod's host-side veth (veth<hash>;
// the bridge plugin's own, with wiring cni, are veth<random>).
const VethPrefix = "veth"

// Devices are what a datapath that wires its pods here has on a node
// (datapath.Datapath's Devices): cni0, the pods' veths and the
// datapath's other devices, more.
func Devices(more ...string) []string {
	return append([]string{Bridge, datapath.PodDevices(VethPrefix)}, more...)
}

// Subnet is node n's pod /24 within base (a.b.0.0).
func Subnet(base net.IP, n datapath.Node) *net.IPNet { return wire.Subnet24(base, n.Index) }

// Gateway is the bridge address of a subnet (.1).
func Gateway(subnet *net.IPNet) net.IP { return wire.PodAddr(subnet.IP, 1) }

// PodIP is the address of the i-th pod of a subnet.
func PodIP(subnet *net.IPNet, i int) net.IP { return wire.PodAddr(subnet.IP, i+2) }

// SetupBridge creates cni0 with the subnet's gateway address and turns on
// forwarding.
// Equivalent to:
//
//	ip link add cni0 mtu MTU type bridge; ip addr add SUBNET.1/24 dev cni0; ip link set cni0 up
//	sysctl net.ipv4.ip_forward=1
func SetupBridge(h *netns.NetlinkHandle, n datapath.Node, subnet *net.IPNet, mtu int) error {
	return SetupNamedBridge(h, n, Bridge, subnet, mtu)
}

// SetupNamedBridge is SetupBridge for a bridge of another name
// (Kube-router's kube-bridge).
func SetupNamedBridge(h *netns.NetlinkHandle, n datapath.Node, name string, subnet *net.IPNet, mtu int) error {
	br := &netlink.Bridge{LinkAttrs: wire.Attrs(name, mtu)}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("ip link add %s type bridge on %s: %w", name, n.Name, err)
	}
	bl, err := wire.Up(h, name)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, bl, Gateway(subnet), 24); err != nil {
		return err
	}
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// Attach wires one pod to cni0, as the bridge CNI plugin does.
// Equivalent to:
//
//	ip -n NODE link add vethX mtu MTU type veth peer eth0 netns POD; ip -n NODE link set vethX master cni0 up
//	ip -n POD addr add SUBNET.M/24 dev eth0; ip -n POD route add default via SUBNET.1
func Attach(n datapath.Node, p datapath.Pod, subnet *net.IPNet, mtu int) (datapath.Attachment, error) {
	return AttachPort(n, p, Port{
		Bridge: Bridge, VethPrefix: VethPrefix, MTU: mtu,
		IP: PodIP(subnet, p.Index), PrefixLen: 24, Gateway: Gateway(subnet),
	})
}

// Port describes one pod's port on a node bridge: the bridge, the prefix
// of the host-side veth name, the pod's address and prefix length, its
// default gateway and the MTU. Weave's plugin does the same as the bridge
// plugin with other names and a /12.
type Port struct {
	Bridge, VethPrefix string
	IP                 net.IP
	PrefixLen          int
	Gateway            net.IP
	MTU                int
	// Routes are destinations the pod reaches via Gateway besides the
	// default route (the IPAM routes of a CNI configuration).
	Routes []*net.IPNet
	// Hairpin lets the bridge send a frame back out of the port it came
	// in on (the bridge plugin's hairpinMode), so a pod can reach itself
	// through a service address.
	Hairpin bool
}

// AttachPort wires one pod as a port of a bridge.
// Equivalent to:
//
//	ip -n NODE link add PREFIXhash mtu MTU type veth peer eth0 netns POD; ip -n NODE link set PREFIXhash master BRIDGE up
//	[ip -n NODE link set PREFIXhash type bridge_slave hairpin on]
//	ip -n POD addr add IP/LEN dev eth0; ip -n POD route add default via GATEWAY
//	[ip -n POD route add ROUTE via GATEWAY ...]
func AttachPort(n datapath.Node, p datapath.Pod, port Port) (datapath.Attachment, error) {
	pv, err := wire.NewPodVeth(n, p, port.VethPrefix, port.MTU)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pv.Close()
	node, pod, host, hostName := pv.Node, pv.Pod, pv.Host, pv.Host.Attrs().Name
	p.Steps.Done(datapath.StepLink)
	br, err := node.LinkByName(port.Bridge)
	if err != nil {
		return datapath.Attachment{}, fmt.Errorf("find %s on %s: %w", port.Bridge, n.Name, err)
	}
	if err := node.LinkSetMaster(host, br); err != nil {
		return datapath.Attachment{}, fmt.Errorf("ip link set %s master %s: %w", hostName, port.Bridge, err)
	}
	if port.Hairpin {
		if err := node.LinkSetHairpin(host, true); err != nil {
			return datapath.Attachment{}, fmt.Errorf("ip link set %s type bridge_slave hairpin on: %w", hostName, err)
		}
	}
	p.Steps.Done(datapath.StepPort)
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepLink)
	if err := wire.AddrAdd(pod, eth, port.IP, port.PrefixLen); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepAddress)
	if err := wire.RouteVia(pod, eth, nil, port.Gateway, false); err != nil {
		return datapath.Attachment{}, err
	}
	for _, r := range port.Routes {
		if err := wire.RouteVia(pod, eth, r, port.Gateway, false); err != nil {
			return datapath.Attachment{}, err
		}
	}
	p.Steps.Done(datapath.StepRoutes)
	return datapath.Attachment{IP: port.IP, HostVeth: hostName}, nil
}
