// Package ovs wires pods to an Open vSwitch kernel datapath, the "veth +
// Open vSwitch" setup of seeds 001 and 003: containers' veths are ports of
// the OVS bridge br0 (kernel datapath, the openvswitch module), and nodes
// reach each other's pod subnets over the underlay.
//
// Design notes:
//   - No ovs-vswitchd: the datapath's flows are put in place with
//     ovs-dpctl (internal/datapath/ovsdp), statically, as the flows
//     vswitchd's NORMAL action would end up with: one flow per (input
//     port, destination MAC) for IPv4, output to the port behind that MAC.
//     ARP is not needed and gets no flow: every neighbour a packet needs
//     (pods on the node, the gateway) is a permanent entry, the way Calico
//     avoids ARP on its veths.
//   - br0's local (internal) port holds the subnet's .1/24 and is the
//     pods' default gateway; node N's pods live in 10.88.N.0/24.
//   - Across nodes the node routes the other node's pod subnet via its
//     underlay address (host-gw style). A VXLAN vport is not built.
//   - MTU: the underlay's (no encapsulation).
//   - Each pod adds O(pods on the node) flows and neighbour entries; each
//     flow is one ovs-dpctl run, so large pod counts take a while to set
//     up (measured setup latency shows it).
package ovs

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/ovsdp"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Bridge is the OVS datapath (and its local port device).
	Bridge = "br0"
	// vethPrefix starts the name of each pod's host-side veth.
	vethPrefix = "veth"
	// ipv4Key is the L2/L3 part of every flow key.
	ipv4Key = "eth_type(0x0800),ipv4(frag=no)"
)

var netBase = net.IPv4(10, 88, 0, 0)

// Datapath is the ovs datapath.
type Datapath struct {
	datapath.MTUOverride
	mu    sync.Mutex
	nodes map[string]*nodeState // by node namespace
}

type port struct {
	no  int
	mac net.HardwareAddr
	ip  net.IP
	ns  string // pod namespace; "" for the local port
}

type nodeState struct {
	ports []port // ports[0] is br0's local port
}

// New returns the datapath.
func New() *Datapath { return &Datapath{nodes: map[string]*nodeState{}} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "ovs" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string {
	return []string{probe.Veth, probe.OpenvSwitch, probe.ToolOvsDpctl}
}

// Tunnel implements datapath.Datapath: none, the underlay carries pods'
// packets.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: none. br0 is an Open vSwitch
// datapath, not a Linux bridge: its ports' master is an openvswitch
// device, and br_netfilter does not show its packets to iptables.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: br0 (the datapath's local port)
// and the pods' veths.
func (*Datapath) Devices() []string { return []string{Bridge, datapath.PodDevices(vethPrefix)} }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

func subnet(n datapath.Node) *net.IPNet   { return wire.Subnet24(netBase, n.Index) }
func gwIP(n datapath.Node) net.IP         { return wire.PodAddr(subnet(n).IP, 1) }
func podIP(n datapath.Node, i int) net.IP { return wire.PodAddr(subnet(n).IP, i+2) }

// SetupNode creates the OVS datapath br0 and gives its local port the
// gateway address.
// Equivalent to:
//
//	ovs-dpctl add-dp br0; ip link set br0 mtu M up; ip addr add 10.88.N.1/24 dev br0
//	sysctl net.ipv4.ip_forward=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	if err := ovsdp.AddDP(n.Netns, Bridge); err != nil {
		return fmt.Errorf("ovs on %s: %w", n.Name, err)
	}
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	br, err := h.LinkByName(Bridge)
	if err != nil {
		return fmt.Errorf("find %s on %s: %w", Bridge, n.Name, err)
	}
	if err := h.LinkSetMTU(br, d.MTU(n.UnderlayMTU)); err != nil {
		return fmt.Errorf("ip link set %s mtu: %w", Bridge, err)
	}
	if _, err := wire.Up(h, Bridge); err != nil {
		return err
	}
	if err := wire.AddrAdd(h, br, gwIP(n), 24); err != nil {
		return err
	}
	d.mu.Lock()
	d.nodes[n.Netns] = &nodeState{ports: []port{{no: 0, mac: br.Attrs().HardwareAddr, ip: gwIP(n)}}}
	d.mu.Unlock()
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// ConnectNodes routes every other node's pod subnet over the underlay.
// Equivalent to: ip route add 10.88.M.0/24 via REMOTE_UNDERLAY_IP dev eth1
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.RoutePeers(nodes, subnet)
}

// AttachPod plugs a pod's veth into br0 and adds its flows and
// neighbour entries.
// Equivalent to:
//
//	ip -n NODE link add vethX type veth peer eth0 netns POD; ip -n NODE link set vethX up
//	ovs-dpctl add-if br0 vethX
//	ip -n POD addr add 10.88.N.M/24 dev eth0; ip -n POD route add default via 10.88.N.1
//	ovs-dpctl add-flow br0 'in_port(P),eth(dst=MAC_Q),eth_type(0x0800),ipv4(frag=no)' Q   (both ways, every port Q)
//	ip neigh add IP_Q lladdr MAC_Q dev eth0 nud permanent                              (both ways, every port Q)
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	d.mu.Lock()
	st := d.nodes[n.Netns]
	d.mu.Unlock()
	if st == nil {
		return datapath.Attachment{}, fmt.Errorf("node %s was not set up by the ovs datapath", n.Name)
	}
	pv, err := wire.NewPodVeth(n, p, vethPrefix, d.MTU(n.UnderlayMTU))
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pv.Close()
	node, pod, hostName := pv.Node, pv.Pod, pv.Host.Attrs().Name
	p.Steps.Done(datapath.StepLink)
	if err := ovsdp.AddIf(n.Netns, Bridge, hostName); err != nil {
		return datapath.Attachment{}, err
	}
	ports, err := ovsdp.Ports(n.Netns, Bridge)
	if err != nil {
		return datapath.Attachment{}, err
	}
	no, ok := ports[hostName]
	if !ok {
		return datapath.Attachment{}, fmt.Errorf("%s is not a port of %s after add-if (ports %v)", hostName, Bridge, ports)
	}
	p.Steps.Done(datapath.StepPort)
	ip := podIP(n, p.Index)
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepLink)
	if err := wire.AddrAdd(pod, eth, ip, 24); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepAddress)
	if err := wire.RouteVia(pod, eth, nil, gwIP(n), false); err != nil {
		return datapath.Attachment{}, err
	}
	me := port{no: no, mac: eth.Attrs().HardwareAddr, ip: ip, ns: p.Netns}
	br, err := node.LinkByName(Bridge)
	if err != nil {
		return datapath.Attachment{}, fmt.Errorf("find %s on %s: %w", Bridge, n.Name, err)
	}
	if err := wire.NeighPermanent(node, br, ip, me.mac); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepRoutes)
	if err := d.connectPort(n, st, me, pod, eth); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepPort)
	return datapath.Attachment{IP: ip, HostVeth: hostName}, nil
}

// connectPort programs the flows between a new port and every other one
// of its node, both ways, and the neighbour entries of both ends; then
// adds it to the node's ports. It holds the lock throughout, so pods
// attached at once (pod start-up bursts) each see all the others:
// without it two new ports could miss each other.
func (d *Datapath) connectPort(n datapath.Node, st *nodeState, me port, pod *netns.NetlinkHandle, eth netlink.Link) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range st.ports {
		if err := flow(n.Netns, me.no, q); err != nil {
			return err
		}
		if err := flow(n.Netns, q.no, me); err != nil {
			return err
		}
		if err := wire.NeighPermanent(pod, eth, q.ip, q.mac); err != nil {
			return err
		}
		if err := neighIn(q, me); err != nil {
			return err
		}
	}
	st.ports = append(st.ports, me)
	return nil
}

// DetachPod takes a pod's port out of the bridge before the engine
// deletes the pod (pods removed by scaling down or after a pod start-up
// burst): the flows to and from it go, and later pods no longer program
// flows and neighbours toward it. Without it a new port that reuses the
// number would collide with the old port's flows (add-flow: exists) and
// its neighbour entries would be written into a deleted namespace.
// Equivalent to: ovs-dpctl del-flow br0 KEY (both directions, every
// other port); ovs-dpctl del-if br0 vethX.
func (d *Datapath) DetachPod(n datapath.Node, p datapath.Pod) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.nodes[n.Netns]
	if st == nil {
		return nil
	}
	i := slices.IndexFunc(st.ports, func(q port) bool { return q.ns == p.Netns })
	if i < 0 {
		return nil
	}
	me := st.ports[i]
	st.ports = slices.Delete(st.ports, i, i+1)
	var errs []error
	for _, q := range st.ports {
		errs = append(errs,
			ovsdp.DelFlow(n.Netns, Bridge, flowKey(me.no, q)),
			ovsdp.DelFlow(n.Netns, Bridge, flowKey(q.no, me)))
	}
	errs = append(errs, ovsdp.DelIf(n.Netns, Bridge, wire.HostVethName(vethPrefix, p.HostKey())))
	return errors.Join(errs...)
}

// flow sends IPv4 frames arriving on port in and addressed to dst's MAC
// out of dst's port.
func flow(ns string, in int, dst port) error {
	return ovsdp.AddFlow(ns, Bridge, flowKey(in, dst), strconv.Itoa(dst.no))
}

func flowKey(in int, dst port) string {
	return fmt.Sprintf("in_port(%d),eth(dst=%s),%s", in, dst.mac, ipv4Key)
}

// neighIn adds a permanent neighbour entry for dst in q's namespace
// (the node's, on br0, for the local port).
func neighIn(q, dst port) error {
	if q.ns == "" {
		return nil // the node's own entry is added by AttachPod
	}
	h, err := netns.Handle(q.ns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(datapath.PodEth)
	if err != nil {
		return err
	}
	return wire.NeighPermanent(h, l, dst.ip, dst.mac)
}
