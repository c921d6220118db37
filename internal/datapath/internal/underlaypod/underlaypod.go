// Package underlaypod wires pods straight onto the node's underlay NIC,
// as the macvlan and ipvlan CNI plugins do: the pod's eth0 is a child
// device of the node's eth1 and the pod has an address of the underlay
// subnet, so there is no routing hop, bridge or tunnel in the node.
//
// Addressing: the engine's underlay is 198.18.0.0/24 with nodes at .1, .2
// and the (absent) router at .254. Pods take .100 + 50*node + pod, so each
// node has room for 50 pods and three nodes fit below .250.
package underlaypod

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// MaxPods bounds pods per node (the underlay /24 is shared).
const MaxPods = 50

const (
	firstHost = 100
	prefixLen = 24
)

// Gateway is the underlay's router, the pods' default gateway as on a LAN.
var Gateway = net.IPv4(198, 18, 0, 254)

// Addressing is where one node's pods take their addresses: the on-link
// subnet, the next hop of their default route, the first pod's address
// and how many pods fit from there.
type Addressing struct {
	Subnet  *net.IPNet
	Gateway net.IP
	First   net.IP
	Max     int
}

// PodIP is the i-th pod's address.
func (a Addressing) PodIP(i int) (net.IP, error) {
	if i < 0 || i >= a.Max {
		return nil, fmt.Errorf("pod %d: the node's range from %s has room for %d pods", i, a.First, a.Max)
	}
	first := a.First.To4()
	return wire.PodAddr(first, int(first[3])+i), nil
}

// Underlay is node n's addressing on the underlay: its block of the
// shared /24, next hop the underlay's router.
func Underlay(n datapath.Node) (Addressing, error) {
	host := firstHost + MaxPods*n.Index
	if n.Index < 0 || host+MaxPods > 250 {
		return Addressing{}, fmt.Errorf("node %d: the underlay /24 has room for %d pods on each of 3 nodes", n.Index, MaxPods)
	}
	mask := net.CIDRMask(prefixLen, 32)
	return Addressing{
		Subnet:  &net.IPNet{IP: n.UnderlayIP.Mask(mask), Mask: mask},
		Gateway: Gateway,
		First:   wire.PodAddr(n.UnderlayIP, host),
		Max:     MaxPods,
	}, nil
}

// PodIP is the underlay address of node n's i-th pod.
func PodIP(n datapath.Node, i int) (net.IP, error) {
	a, err := Underlay(n)
	if err != nil {
		return nil, err
	}
	return a.PodIP(i)
}

// CNIConfig is the configuration list for the macvlan or ipvlan plugin
// (typ, in mode) that gives node n's pods what Attach gives them: a child
// of the node's underlay NIC with the MTU, an address from the node's
// block of the underlay /24 (host-local's rangeStart and rangeEnd, so the
// i-th pod gets PodIP(n, i) on a fresh node) and a default route via the
// underlay's router (the range's gateway).
//
//	{"type":"macvlan","master":"eth1","mode":"bridge","mtu":1500,
//	 "ipam":{"type":"host-local","ranges":[[{"subnet":"198.18.0.0/24","rangeStart":"198.18.0.100",
//	   "rangeEnd":"198.18.0.149","gateway":"198.18.0.254"}]],"routes":[{"dst":"0.0.0.0/0"}]}}
func CNIConfig(typ, mode string, n datapath.Node, mtu int) ([]byte, error) {
	a, err := Underlay(n)
	if err != nil {
		return nil, err
	}
	return CNIConfigWith(typ, mode, n, mtu, a)
}

// CNIConfigWith is CNIConfig with the pods' addresses from a.
func CNIConfigWith(typ, mode string, n datapath.Node, mtu int, a Addressing) ([]byte, error) {
	first, err := a.PodIP(0)
	if err != nil {
		return nil, err
	}
	last, err := a.PodIP(a.Max - 1)
	if err != nil {
		return nil, err
	}
	return cniconf.Marshal(typ, cniconf.Underlay{
		Type: typ, Master: n.Underlay, Mode: mode, MTU: mtu,
		IPAM: cniconf.HostLocal{
			Type: cniconf.TypeHostLocal,
			Ranges: [][]cniconf.Range{{{
				Subnet: a.Subnet.String(), RangeStart: first.String(), RangeEnd: last.String(), Gateway: a.Gateway.String(),
			}}},
			Routes: []cniconf.Route{{Dst: "0.0.0.0/0"}},
		},
	})
}

// Attach creates the child device with mk (given the attributes: name
// eth0, MTU, parent = the node's underlay NIC, created straight in the
// pod's namespace) and gives it the pod's underlay address.
// Equivalent to:
//
//	ip -n NODE link add link eth1 name eth0 netns POD mtu MTU type macvlan mode bridge   (or ipvlan mode l2)
//	ip -n POD addr add 198.18.0.X/24 dev eth0; ip -n POD link set eth0 up
//	ip -n POD route add default via 198.18.0.254
func Attach(n datapath.Node, p datapath.Pod, mtu int, mk func(netlink.LinkAttrs) netlink.Link) (datapath.Attachment, error) {
	a, err := Underlay(n)
	if err != nil {
		return datapath.Attachment{}, err
	}
	return AttachWith(n, p, mtu, mk, a)
}

// AttachWith is Attach with the pod's address and default route from a.
func AttachWith(n datapath.Node, p datapath.Pod, mtu int, mk func(netlink.LinkAttrs) netlink.Link, a Addressing) (datapath.Attachment, error) {
	ip, err := a.PodIP(p.Index)
	if err != nil {
		return datapath.Attachment{}, err
	}
	node, err := netns.Handle(n.Netns)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer node.Close()
	pod, err := netns.Handle(p.Netns)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pod.Close()
	parent, err := node.LinkByName(n.Underlay)
	if err != nil {
		return datapath.Attachment{}, fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
	}
	attrs := wire.Attrs(datapath.PodEth, mtu)
	attrs.ParentIndex = parent.Attrs().Index
	attrs.Namespace = netlink.NsFd(pod.NsFd())
	l := mk(attrs)
	if err := node.LinkAdd(l); err != nil {
		return datapath.Attachment{}, fmt.Errorf("ip link add link %s name %s netns %s type %s: %w", n.Underlay, datapath.PodEth, p.Netns, l.Type(), err)
	}
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepLink)
	ones, _ := a.Subnet.Mask.Size()
	if err := wire.AddrAdd(pod, eth, ip, ones); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepAddress)
	if err := wire.RouteVia(pod, eth, nil, a.Gateway, false); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepRoutes)
	return datapath.Attachment{IP: ip}, nil
}
