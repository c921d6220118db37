// Package calicoipip wires pods the way Calico does in IP-in-IP mode
// (the "ipip" configurations of seed 004).
//
// Design notes (what Calico's Felix and BIRD program):
//   - Pods: routed veth, /32 addresses, 169.254.1.1 proxy-ARP gateway
//     (package calicopod).
//   - The tunnel is tunl0, the ipip module's fallback device (no local or
//     remote address: one device serves every peer, the outer destination
//     comes from the route's gateway). Felix sets it up with the block's
//     .1 as /32 and the IP-in-IP MTU.
//   - For every remote node: BLOCK via REMOTE_UNDERLAY_IP dev tunl0 onlink
//     proto bird; for the node's own block a blackhole route.
//   - MTU: IP-in-IP costs 20 bytes, so 1480 on a 1500-byte underlay, which
//     is what current Calico configures by auto-detection. Older Calico
//     (and seed 004's setup) used a fixed 1440, which leaves room for
//     WireGuard or an extra header; a study can set mtu: 1440 for that.
//   - On a kernel up to 5.7.0 Felix turns tunl0's tx checksum offload
//     off, and with it TSO (calicopod.FelixTxOff); so does SetupNode,
//     and the run records it as the datapath's mode.
package calicoipip

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/birdmesh"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Device is the ipip fallback device Calico uses.
	Device   = "tunl0"
	overhead = 20
)

// Datapath is the calico-ipip datapath.
type Datapath struct {
	datapath.MTUOverride
	// TxOff turns tunl0's tx checksumming off where Felix would
	// (SetupNode) and says whether it did (BuiltMode).
	TxOff calicopod.FelixTxOff
}

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "calico-ipip" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.IPIP} }

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// PodBridge implements datapath.Datapath: none, pods are routed.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: the pods' cali veths and tunl0.
func (*Datapath) Devices() []string { return calicopod.Devices(Device) }

// BuiltMode implements datapath.Moded: whether SetupNode turned
// tunl0's tx checksumming off, as Felix does on this kernel.
func (d *Datapath) BuiltMode() (mode, standIn string) { return d.TxOff.BuiltMode() }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - overhead) }

// SetupNode brings up tunl0 with the node's tunnel address.
// Equivalent to:
//
//	ip link add tunl0 type ipip   (exists already once the ipip module is loaded)
//	ip link set tunl0 mtu 1480
//	ethtool -K tunl0 tx off   (kernel <= 5.7.0 only, as Felix)
//	ip link set tunl0 up; ip addr add TUNNEL_IP/32 dev tunl0
//	ip route add blackhole BLOCK proto bird
//	sysctl net.ipv4.ip_forward=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := d.MTU(n.UnderlayMTU)
	l, err := h.LinkByName(Device)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		// The module creates tunl0 in every namespace when it loads; a
		// namespace made before that, or a kernel with
		// fb_tunnels_only_for_init_net, needs it created.
		err = wire.IgnoreExist(h.LinkAdd(&netlink.Iptun{LinkAttrs: wire.Attrs(Device, mtu)}))
		if err != nil {
			return fmt.Errorf("ip link add %s type ipip on %s: %w", Device, n.Name, err)
		}
		l, err = h.LinkByName(Device)
	}
	if err != nil {
		return fmt.Errorf("find %s on %s: %w", Device, n.Name, err)
	}
	if err := h.LinkSetMTU(l, mtu); err != nil {
		return fmt.Errorf("ip link set %s mtu %d: %w", Device, mtu, err)
	}
	if err := d.TxOff.Setup(n, Device); err != nil {
		return err
	}
	if l, err = wire.Up(h, Device); err != nil {
		return err
	}
	if err := wire.AddrAdd(h, l, calicopod.TunnelIP(n), 32); err != nil {
		return err
	}
	if err := wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	return calicopod.Blackhole(n, birdmesh.RTProtBird)
}

// ConnectNodes routes every remote block through tunl0 with the remote
// node's underlay address as the (onlink) gateway, which tunl0 uses as
// the outer destination.
// Equivalent to: ip route add REMOTE_BLOCK via REMOTE_UNDERLAY_IP dev tunl0 onlink proto bird
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	for i, n := range nodes {
		h, err := netns.Handle(n.Netns)
		if err != nil {
			return err
		}
		err = func() error {
			l, err := h.LinkByName(Device)
			if err != nil {
				return fmt.Errorf("find %s on %s: %w", Device, n.Name, err)
			}
			for j, r := range nodes {
				if i == j {
					continue
				}
				rt := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: calicopod.Block(r), Gw: r.UnderlayIP,
					Flags: int(netlink.FLAG_ONLINK), Protocol: netlink.RouteProtocol(12)}
				if err := h.RouteAdd(rt); err != nil {
					return fmt.Errorf("ip route add %s via %s dev %s onlink: %w", rt.Dst, r.UnderlayIP, Device, err)
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

// AttachPod wires one pod the Calico way (package calicopod).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return calicopod.Attach(n, p, d.MTU(n.UnderlayMTU))
}
