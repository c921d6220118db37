// Package cilium wires pods the way Cilium does with its eBPF datapath in
// VXLAN tunnel mode.
//
// Design notes (what the Cilium agent programs, reduced to what moves
// packets; policy, identities, services and NAT are left out):
//   - No bridge. Each pod's veth has its host side lxc<hash> in the node
//     with a tc (clsact) ingress program, from_container (bpf/cilium.c).
//     It looks the destination up in the endpoints map: a local pod is
//     reached with bpf_redirect_peer directly into the pod's eth0, so the
//     packet never enters the node's IP stack or netfilter; a remote pod
//     through the ipcache map (remote pod CIDR -> node underlay IP), with
//     bpf_skb_set_tunnel_key and bpf_redirect to cilium_vxlan.
//   - cilium_vxlan is a VXLAN device in collect-metadata ("external")
//     mode, UDP 8472, as Cilium creates it. Its tc ingress program,
//     from_overlay, hands decapsulated packets to the destination pod with
//     bpf_redirect_peer.
//   - Each node owns a /24 of Cilium's default cluster pool 10.0.0.0/8.
//     The router address (.1) sits on cilium_host (a veth pair with
//     cilium_net, as in Cilium). A pod has eth0 with a /32, a scope-link
//     route to the router and a default route via it; the router's
//     neighbour entry is static (the lxc MAC), standing in for Cilium's
//     BPF ARP responder, so no ARP crosses the datapath.
//   - The node routes each local pod as PODIP/32 dev lxcX (Cilium's
//     endpoint-routes mode) so the node itself reaches its pods; pod to
//     pod traffic never uses those routes.
//   - MTU 1450 on a 1500-byte underlay (VXLAN overhead 50), on the pods
//     and cilium_vxlan. Cilium sets it elsewhere with the same path MTU:
//     devices (lxc, eth0, cilium_vxlan) at the underlay's 1500, 1450 on
//     the pod's default route only (cilium-cni SetupVeth(DeviceMTU),
//     IPv4Routes(addr, RouteMTU)); see datapaths-advanced.md.
//
// The BPF objects (programs and maps) are loaded once per node and kept
// open until Close, because pods attached later need the maps.
package cilium

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/lbmap"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Device is Cilium's VXLAN device.
	Device = "cilium_vxlan"
	// HostDev and NetDev are Cilium's host veth pair; HostDev carries the
	// node's router address.
	HostDev = "cilium_host"
	NetDev  = "cilium_net"
	// VethPrefix starts the name of each pod's host-side veth
	// (lxc<hash>).
	VethPrefix = "lxc"
	port       = 8472
	overhead   = 50
)

var poolBase = net.IPv4(10, 0, 0, 0)

// Datapath is the cilium datapath. It keeps the BPF objects of each node
// it set up; Close releases them.
type Datapath struct {
	datapath.MTUOverride
	mu    sync.Mutex
	nodes map[string]*nodeState // by node namespace
}

type nodeState struct {
	objs  bpfObjects
	vxlan int // ifindex of cilium_vxlan
	// services is what SetServices last wrote (nil before).
	services *lbmap.Table
}

// New returns the datapath.
func New() *Datapath { return &Datapath{nodes: map[string]*nodeState{}} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "cilium" }

// Features implements datapath.Datapath: besides attaching a tc program
// (cls_bpf), what the object's programs use (cilium-bpf: bpf_redirect_peer
// of Linux 5.10 among them), so a kernel the verifier would refuse them on
// is refused, or skipped, at preflight rather than mid-study.
func (*Datapath) Features() []string {
	return []string{probe.Veth, probe.Vxlan, probe.ClsBPF, probe.CiliumBPF}
}

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// PodBridge implements datapath.Datapath: none, pods' lxc veths are
// routed and steered by BPF.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: cilium_host and cilium_net,
// cilium_vxlan and the pods' lxc veths.
func (*Datapath) Devices() []string {
	return []string{HostDev, NetDev, Device, datapath.PodDevices(VethPrefix)}
}

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - overhead) }

func podCIDR(n datapath.Node) *net.IPNet  { return wire.Subnet24(poolBase, n.Index) }
func routerIP(n datapath.Node) net.IP     { return wire.PodAddr(podCIDR(n).IP, 1) }
func podIP(n datapath.Node, i int) net.IP { return wire.PodAddr(podCIDR(n).IP, i+2) }
func host32(ip net.IP) *net.IPNet         { return &net.IPNet{IP: ip.To4(), Mask: net.CIDRMask(32, 32)} }
func be32(ip net.IP) uint32               { return binary.NativeEndian.Uint32(ip.To4()) }

func (d *Datapath) state(ns string) *nodeState {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nodes[ns]
}

// SetupNode creates cilium_host/cilium_net and cilium_vxlan, loads the
// BPF objects for the node and attaches from_overlay.
// Equivalent to:
//
//	ip link add cilium_host type veth peer name cilium_net; ip addr add ROUTER/32 dev cilium_host
//	ip link add cilium_vxlan mtu 1450 type vxlan external dstport 8472; ip link set cilium_vxlan up
//	tc qdisc add dev cilium_vxlan clsact
//	tc filter add dev cilium_vxlan ingress bpf direct-action obj bpf_bpfel.o sec tc (from_overlay)
//	sysctl net.ipv4.ip_forward=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := d.MTU(n.UnderlayMTU)
	hv := &netlink.Veth{LinkAttrs: wire.Attrs(HostDev, n.UnderlayMTU), PeerName: NetDev}
	if err := h.LinkAdd(hv); err != nil {
		return fmt.Errorf("ip link add %s type veth peer %s on %s: %w", HostDev, NetDev, n.Name, err)
	}
	if _, err := wire.Up(h, NetDev); err != nil {
		return err
	}
	hl, err := wire.Up(h, HostDev)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, hl, routerIP(n), 32); err != nil {
		return err
	}
	vx := &netlink.Vxlan{LinkAttrs: wire.Attrs(Device, mtu), FlowBased: true, Port: port, Learning: false}
	if err := h.LinkAdd(vx); err != nil {
		return fmt.Errorf("ip link add %s type vxlan external on %s: %w", Device, n.Name, err)
	}
	vl, err := wire.Up(h, Device)
	if err != nil {
		return err
	}

	spec, err := loadBpf()
	if err != nil {
		return err
	}
	if err := spec.Variables[bpfVarVxlanIfindex].Set(uint32(vl.Attrs().Index)); err != nil {
		return fmt.Errorf("set vxlan_ifindex: %w", err)
	}
	st := &nodeState{vxlan: vl.Attrs().Index}
	if err := spec.LoadAndAssign(&st.objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("load cilium BPF programs: %+v", ve)
		}
		return fmt.Errorf("load cilium BPF programs: %w", err)
	}
	d.mu.Lock()
	if old := d.nodes[n.Netns]; old != nil {
		old.objs.Close()
	}
	d.nodes[n.Netns] = st
	d.mu.Unlock()
	if err := attachIngress(h, vl, st.objs.FromOverlay); err != nil {
		return err
	}
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// attachIngress attaches prog to the tc ingress hook of l.
// Equivalent to: tc qdisc add dev DEV clsact; tc filter add dev DEV ingress bpf da fd PROG
func attachIngress(h *netns.NetlinkHandle, l netlink.Link, prog *ebpf.Program) error {
	idx := l.Attrs().Index
	q := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}
	if err := wire.IgnoreExist(h.QdiscAdd(q)); err != nil {
		return fmt.Errorf("tc qdisc add dev %s clsact: %w", l.Attrs().Name, err)
	}
	info, _ := prog.Info()
	name := "cnb"
	if info != nil {
		name = info.Name
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: idx,
			Parent:    netlink.HANDLE_MIN_INGRESS,
			Handle:    netlink.MakeHandle(0, 1),
			Protocol:  unix.ETH_P_ALL,
			Priority:  1,
		},
		Fd:           prog.FD(),
		Name:         name,
		DirectAction: true,
	}
	if err := h.FilterAdd(f); err != nil {
		return fmt.Errorf("tc filter add dev %s ingress bpf da %s: %w", l.Attrs().Name, name, err)
	}
	return nil
}

// ConnectNodes fills each node's ipcache with the other nodes' pod CIDRs,
// as the agent does from the nodes it learns about.
// Equivalent to: bpftool map update name ipcache key PREFIX/24 value REMOTE_UNDERLAY_IP
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	for i, n := range nodes {
		st := d.state(n.Netns)
		if st == nil {
			return fmt.Errorf("node %s was not set up by the cilium datapath", n.Name)
		}
		for j, r := range nodes {
			if i == j {
				continue
			}
			k := bpfIpcacheKey{Prefixlen: 24, Ip: be32(podCIDR(r).IP)}
			v := bpfRemote{TunnelIp: be32(r.UnderlayIP)}
			if err := st.objs.Ipcache.Put(&k, &v); err != nil {
				return fmt.Errorf("ipcache update %s -> %s on %s: %w", podCIDR(r), r.UnderlayIP, n.Name, err)
			}
		}
	}
	return nil
}

// AttachPod wires one pod and registers it as an endpoint.
// Equivalent to:
//
//	ip -n NODE link add lxcX mtu 1450 type veth peer eth0 netns POD
//	ip -n POD addr add PODIP/32 dev eth0
//	ip -n POD route add ROUTER dev eth0 scope link; ip -n POD route add default via ROUTER
//	ip -n POD neigh add ROUTER lladdr LXC_MAC dev eth0 nud permanent
//	ip -n NODE route replace PODIP/32 dev lxcX scope link
//	tc qdisc add dev lxcX clsact; tc filter add dev lxcX ingress bpf da ... (from_container)
//	bpftool map update name endpoints key PODIP value {lxcX ifindex, eth0 MAC, lxcX MAC}
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	st := d.state(n.Netns)
	if st == nil {
		return datapath.Attachment{}, fmt.Errorf("node %s was not set up by the cilium datapath", n.Name)
	}
	pv, err := wire.NewPodVeth(n, p, VethPrefix, d.MTU(n.UnderlayMTU))
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pv.Close()
	node, pod, host := pv.Node, pv.Pod, pv.Host
	ip, gw := podIP(n, p.Index), routerIP(n)
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepLink)
	if err := wire.AddrAdd(pod, eth, ip, 32); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepAddress)
	if err := wire.RouteLink(pod, eth, host32(gw)); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.RouteVia(pod, eth, nil, gw, false); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.NeighPermanent(pod, eth, gw, host.Attrs().HardwareAddr); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.PodRoute(node, host, host32(ip)); err != nil {
		return datapath.Attachment{}, err
	}
	p.Steps.Done(datapath.StepRoutes)
	if err := attachIngress(node, host, st.objs.FromContainer); err != nil {
		return datapath.Attachment{}, err
	}
	ep := bpfEndpoint{Ifindex: uint32(host.Attrs().Index)}
	copy(ep.Mac[:], eth.Attrs().HardwareAddr)
	copy(ep.NodeMac[:], host.Attrs().HardwareAddr)
	key := be32(ip)
	if err := st.objs.Endpoints.Put(&key, &ep); err != nil {
		return datapath.Attachment{}, fmt.Errorf("endpoints update %s on %s: %w", ip, n.Name, err)
	}
	// Cilium's "endpoint creation": its BPF program on the host veth and
	// the endpoint map entry.
	p.Steps.Done(datapath.StepPort)
	return datapath.Attachment{IP: ip, HostVeth: host.Attrs().Name}, nil
}

// Stats counts, per node, the packets the BPF programs steered each way.
type Stats struct {
	Local   uint64 // pod -> pod on the node, bpf_redirect_peer
	Tunnel  uint64 // pod -> remote pod, into cilium_vxlan
	Overlay uint64 // cilium_vxlan -> pod, bpf_redirect_peer
	Pass    uint64 // handed to the node's stack
	LB      uint64 // packets to a ClusterIP sent to a backend
	RevNAT  uint64 // replies shown as from their Service
}

// NodeStats reads the counters of the node whose namespace is netnsName.
func (d *Datapath) NodeStats(netnsName string) (Stats, error) {
	st := d.state(netnsName)
	if st == nil {
		return Stats{}, fmt.Errorf("no cilium node in %s", netnsName)
	}
	var s Stats
	for i, dst := range []*uint64{&s.Local, &s.Tunnel, &s.Overlay, &s.Pass, &s.LB, &s.RevNAT} {
		var per []uint64
		if err := st.objs.Stats.Lookup(uint32(i), &per); err != nil {
			return Stats{}, fmt.Errorf("read stats: %w", err)
		}
		for _, v := range per {
			*dst += v
		}
	}
	return s, nil
}

// Counts implements engine.Counter: every node's Stats, summed, as
// cilium_{local,tunnel,overlay,pass,lb,revnat}_count.
func (d *Datapath) Counts() (map[string]uint64, error) {
	d.mu.Lock()
	nss := make([]string, 0, len(d.nodes))
	for ns := range d.nodes {
		nss = append(nss, ns)
	}
	d.mu.Unlock()
	out := map[string]uint64{}
	for _, ns := range nss {
		s, err := d.NodeStats(ns)
		if err != nil {
			return nil, err
		}
		for k, v := range map[string]uint64{"local": s.Local, "tunnel": s.Tunnel, "overlay": s.Overlay,
			"pass": s.Pass, "lb": s.LB, "revnat": s.RevNAT} {
			out["cilium_"+k+"_count"] += v
		}
	}
	return out, nil
}

// Close releases the BPF objects held for every node. Programs stay
// attached as long as their devices exist (the namespaces hold them), so
// Close may run before or after the namespaces are deleted. Idempotent.
func (d *Datapath) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for ns, st := range d.nodes {
		if err := st.objs.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close BPF objects of %s: %w", ns, err))
		}
		delete(d.nodes, ns)
	}
	return errors.Join(errs...)
}
