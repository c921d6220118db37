// Package wire holds the netlink steps datapaths share: veth pairs into
// pods, addresses, routes, neighbour and FDB entries, sysctls inside a
// namespace. Each function names the iproute2 command it equals.
package wire

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/netns"
)

// HostVethName derives a stable host-side name from the pod name the way
// Calico does (prefix + first 11 hex digits of a SHA-1), so names fit
// IFNAMSIZ and do not collide between pods.
func HostVethName(prefix, pod string) string {
	sum := sha1.Sum([]byte(pod))
	return prefix + hex.EncodeToString(sum[:])[:15-len(prefix)]
}

// staleVethWait bounds how long VethIntoPod waits for a host-side name
// held by a device of a deleted namespace.
const staleVethWait = 5 * time.Second

// VethIntoPod creates a veth pair with hostName in the node namespace and
// eth0 in the pod namespace, both with the given MTU, and sets both up.
// Equivalent to: ip -n NODE link add HOST mtu M type veth peer name eth0 netns POD mtu M
func VethIntoPod(node, pod *netns.NetlinkHandle, hostName, podName string, mtu int) (netlink.Link, error) {
	v := &netlink.Veth{
		LinkAttrs:     Attrs(hostName, mtu),
		PeerName:      podName,
		PeerNamespace: netlink.NsFd(pod.NsFd()),
	}
	// The name may still be held by the veth of a pod whose namespace was
	// just deleted: the kernel destroys a deleted namespace's devices
	// later, from a work queue (cleanup_net), so a pod created again under
	// the same name (scaling back up, the next start-up burst) can meet
	// the old device for a moment. Wait for it to go; a device that stays
	// is a real conflict and fails after staleVethWait.
	deadline := time.Now().Add(staleVethWait)
	for {
		err := node.LinkAdd(v)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || time.Now().After(deadline) {
			return nil, fmt.Errorf("ip link add %s type veth peer %s: %w", hostName, podName, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	host, err := node.LinkByName(hostName)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", hostName, err)
	}
	peer, err := pod.LinkByName(podName)
	if err != nil {
		return nil, fmt.Errorf("find %s in pod: %w", podName, err)
	}
	// veth ends inherit MTU only on creation in some kernels; set both.
	if err := pod.LinkSetMTU(peer, mtu); err != nil {
		return nil, fmt.Errorf("ip link set %s mtu %d: %w", podName, mtu, err)
	}
	if err := node.LinkSetUp(host); err != nil {
		return nil, fmt.Errorf("ip link set %s up: %w", hostName, err)
	}
	return host, nil
}

// PodVeth is a pod being wired: handles on its node's and its own
// namespace and the host side of its veth pair. Close releases the
// handles (not the devices).
type PodVeth struct {
	Node, Pod *netns.NetlinkHandle
	Host      netlink.Link
}

// NewPodVeth opens n's and p's namespaces and creates p's veth pair, the
// host side named from prefix (HostVethName), eth0 in the pod, both with
// mtu and up: the first steps of every datapath that gives a pod a veth.
// Equivalent to: ip -n NODE link add PREFIXhash mtu MTU type veth peer eth0 netns POD
func NewPodVeth(n datapath.Node, p datapath.Pod, prefix string, mtu int) (*PodVeth, error) {
	if p.Index >= datapath.MaxPodsPerNode {
		return nil, fmt.Errorf("pod index %d exceeds %d pods per node", p.Index, datapath.MaxPodsPerNode)
	}
	node, err := netns.Handle(n.Netns)
	if err != nil {
		return nil, err
	}
	pod, err := netns.Handle(p.Netns)
	if err != nil {
		node.Close()
		return nil, err
	}
	host, err := VethIntoPod(node, pod, HostVethName(prefix, p.HostKey()), datapath.PodEth, mtu)
	if err != nil {
		pod.Close()
		node.Close()
		return nil, err
	}
	return &PodVeth{Node: node, Pod: pod, Host: host}, nil
}

// Close releases the namespace handles.
func (v *PodVeth) Close() {
	v.Pod.Close()
	v.Node.Close()
}

// Up sets a link and lo up in the namespace of h.
// Equivalent to: ip link set lo up; ip link set DEV up
func Up(h *netns.NetlinkHandle, dev string) (netlink.Link, error) {
	if lo, err := h.LinkByName("lo"); err == nil {
		if err := h.LinkSetUp(lo); err != nil {
			return nil, fmt.Errorf("ip link set lo up: %w", err)
		}
	}
	l, err := h.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", dev, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return nil, fmt.Errorf("ip link set %s up: %w", dev, err)
	}
	return l, nil
}

// AddrAdd assigns an address. Equivalent to: ip addr add CIDR dev DEV
func AddrAdd(h *netns.NetlinkHandle, l netlink.Link, ip net.IP, prefixLen int) error {
	bits := 32
	if ip.To4() == nil {
		bits = 128
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(prefixLen, bits)}}
	if err := h.AddrAdd(l, a); err != nil {
		return fmt.Errorf("ip addr add %s dev %s: %w", a.IPNet, l.Attrs().Name, err)
	}
	return nil
}

// RouteLink adds a scope-link route to dst through dev.
// Equivalent to: ip route add DST dev DEV scope link
func RouteLink(h *netns.NetlinkHandle, l netlink.Link, dst *net.IPNet) error {
	r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: dst, Scope: netlink.SCOPE_LINK}
	if err := h.RouteAdd(r); err != nil {
		return fmt.Errorf("ip route add %s dev %s scope link: %w", dst, l.Attrs().Name, err)
	}
	return nil
}

// PodRoute points a node's route to one pod at the pod's host-side
// device, replacing a route to the same address: the previous pod at
// that address may have left its route behind for a moment (the kernel
// destroys a deleted namespace's devices, and with them their routes,
// later), and the new pod's device is the one that counts. Felix, which
// programs these routes for Calico, writes them the same way (its route
// table syncs with replace).
// Equivalent to: ip route replace DST dev DEV scope link
func PodRoute(h *netns.NetlinkHandle, l netlink.Link, dst *net.IPNet) error {
	r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: dst, Scope: netlink.SCOPE_LINK}
	if err := h.RouteReplace(r); err != nil {
		return fmt.Errorf("ip route replace %s dev %s scope link: %w", dst, l.Attrs().Name, err)
	}
	return nil
}

// RouteVia adds a route to dst via gw on dev; onlink lets the gateway sit
// outside the device's subnets, as overlay routes need.
// Equivalent to: ip route add DST via GW dev DEV [onlink]
func RouteVia(h *netns.NetlinkHandle, l netlink.Link, dst *net.IPNet, gw net.IP, onlink bool) error {
	r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: dst, Gw: gw}
	if onlink {
		r.Flags = int(netlink.FLAG_ONLINK)
	}
	if err := h.RouteAdd(r); err != nil {
		return fmt.Errorf("ip route add %v via %s dev %s: %w", dst, gw, l.Attrs().Name, err)
	}
	return nil
}

// NeighPermanent adds a permanent neighbour entry.
// Equivalent to: ip neigh add IP lladdr MAC dev DEV nud permanent
func NeighPermanent(h *netns.NetlinkHandle, l netlink.Link, ip net.IP, mac net.HardwareAddr) error {
	n := &netlink.Neigh{LinkIndex: l.Attrs().Index, State: netlink.NUD_PERMANENT, IP: ip, HardwareAddr: mac, Family: unix.AF_INET}
	if err := h.NeighSet(n); err != nil {
		return fmt.Errorf("ip neigh add %s lladdr %s dev %s: %w", ip, mac, l.Attrs().Name, err)
	}
	return nil
}

// FDBAppend points a VTEP MAC at a remote underlay address.
// Equivalent to: bridge fdb append MAC dev DEV dst IP self permanent
func FDBAppend(h *netns.NetlinkHandle, l netlink.Link, mac net.HardwareAddr, dst net.IP) error {
	n := &netlink.Neigh{
		LinkIndex: l.Attrs().Index, Family: unix.AF_BRIDGE, State: netlink.NUD_PERMANENT,
		Flags: netlink.NTF_SELF, IP: dst, HardwareAddr: mac,
	}
	if err := h.NeighAppend(n); err != nil {
		return fmt.Errorf("bridge fdb append %s dev %s dst %s: %w", mac, l.Attrs().Name, dst, err)
	}
	return nil
}

// Sysctl writes a /proc/sys value inside a namespace. /proc/sys/net is
// per network namespace, resolved for the thread that opens the file.
// Equivalent to: ip netns exec NS sysctl -w KEY=VALUE
func Sysctl(ns, key, value string) error {
	path := filepath.Join("/proc/sys", filepath.FromSlash(key))
	return netns.Do(ns, func() error {
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			return fmt.Errorf("sysctl %s=%s in %s: %w", key, value, ns, err)
		}
		return nil
	})
}

// IgnoreExist treats EEXIST as success, for idempotent setup.
func IgnoreExist(err error) error {
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

// PodAddr returns base with its last octet replaced by host (IPv4).
func PodAddr(base net.IP, host int) net.IP {
	ip := make(net.IP, 4)
	copy(ip, base.To4())
	ip[3] = byte(host)
	return ip
}

// Subnet24 returns a.b.idx.0/24 for a base a.b.0.0.
func Subnet24(base net.IP, idx int) *net.IPNet {
	ip := make(net.IP, 4)
	copy(ip, base.To4())
	ip[2] = byte(idx)
	ip[3] = 0
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(24, 32)}
}

// Attrs returns link attributes with the kernel's defaults (notably a
// non-zero txqueuelen: a literal netlink.LinkAttrs{} asks for 0, which
// breaks qdiscs such as tbf and netem added later) plus name and MTU.
func Attrs(name string, mtu int) netlink.LinkAttrs {
	a := netlink.NewLinkAttrs()
	a.Name, a.MTU = name, mtu
	return a
}

// RoutePeers gives every node a route to each other node's pod subnet via
// that node's underlay address, the "native routing" of host-gw,
// Kube-router and IPVLAN L3: the nodes must share one L2 segment.
// Equivalent to, on every node: ip route add PEER_SUBNET via PEER_UNDERLAY_IP dev eth1
func RoutePeers(nodes []datapath.Node, subnet func(datapath.Node) *net.IPNet) error {
	return RoutePeersProto(nodes, subnet, 0)
}

// RoutePeersProto is RoutePeers with the routes' protocol set as the
// CNI's routing daemon sets it (0: the kernel's default, boot).
// Equivalent to, on every node: ip route add PEER_SUBNET via PEER_UNDERLAY_IP dev eth1 proto PROTO
func RoutePeersProto(nodes []datapath.Node, subnet func(datapath.Node) *net.IPNet, proto netlink.RouteProtocol) error {
	for i, n := range nodes {
		h, err := netns.Handle(n.Netns)
		if err != nil {
			return err
		}
		err = func() error {
			l, err := h.LinkByName(n.Underlay)
			if err != nil {
				return fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
			}
			for j, r := range nodes {
				if i == j {
					continue
				}
				rt := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: subnet(r), Gw: r.UnderlayIP, Protocol: proto}
				if err := h.RouteAdd(rt); err != nil {
					return fmt.Errorf("ip route add %s via %s dev %s: %w", rt.Dst, r.UnderlayIP, n.Underlay, err)
				}
			}
			return nil
		}()
		h.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
