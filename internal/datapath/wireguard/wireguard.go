// Package wireguard wires pods the way Flannel's WireGuard backend does
// (the encrypted overlay; Calico's WireGuard mode encrypts the same way
// between routed veths).
//
// Design notes (what flanneld's wireguard backend programs):
//   - Pods hang off cni0 with a /24 of 10.244.0.0/16 per node (package
//     cnibridge), as with Flannel's other backends.
//   - flannel-wg is a WireGuard device listening on UDP 51820 with a
//     private key generated on the node (here in Go with wgctrl, as
//     flanneld does); it holds the subnet's .0 as /32, and one route
//     covers the whole cluster network: 10.244.0.0/16 dev flannel-wg.
//   - Per remote node one peer: its public key, endpoint
//     REMOTE_UNDERLAY_IP:51820, allowed IPs = its pod subnet, so
//     WireGuard's cryptokey routing picks the peer by inner destination.
//   - MTU: flanneld reserves 80 bytes (outer IPv6 40 + UDP 8 +
//     WireGuard 32), so 1420 on a 1500-byte underlay, on flannel-wg, cni0
//     and the pods.
package wireguard

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.zx2c4.com/wireguard/wgctrl"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Device is flanneld's WireGuard device.
	Device = "flannel-wg"
	// Port is flanneld's default WireGuard listen port.
	Port         = 51820
	overhead     = 80
	overheadIPv4 = 60
)

// network is the cluster network, routed into flannel-wg as a whole.
var network = cnibridge.FlannelNetwork

// Datapath is the wireguard datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "wireguard" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Bridge, probe.WireGuard} }

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// PodBridge implements datapath.Datapath: cni0.
func (*Datapath) PodBridge() string { return cnibridge.Bridge }

// Devices implements datapath.Datapath: cni0, the pods' veths and
// flannel-wg.
func (*Datapath) Devices() []string { return cnibridge.Devices(Device) }

// MTU implements datapath.Datapath: flanneld's default, which leaves
// room for an IPv6 outer header (80 bytes: IPv6 40, UDP 8, WireGuard 32).
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - overhead) }

// MaxMTU implements datapath.MaxMTUer: the underlay here is IPv4, whose
// outer header is 20 bytes shorter, so a pod MTU up to underlay - 60
// (Calico's IPv4 WireGuard MTU, 1440 on 1500) still does not fragment.
func (*Datapath) MaxMTU(underlay int) int { return underlay - overheadIPv4 }

func subnet(n datapath.Node) *net.IPNet { return cnibridge.Subnet(network.IP, n) }

// SetupNode creates cni0 and flannel-wg with a fresh key.
// Equivalent to:
//
//	ip link add flannel-wg mtu 1420 type wireguard
//	wg set flannel-wg private-key KEY listen-port 51820
//	ip addr add 10.244.N.0/32 dev flannel-wg; ip link set flannel-wg up
//	ip route add 10.244.0.0/16 dev flannel-wg scope link
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := d.MTU(n.UnderlayMTU)
	if err := cnibridge.SetupBridge(h, n, subnet(n), mtu); err != nil {
		return err
	}
	if err := h.LinkAdd(&netlink.Wireguard{LinkAttrs: wire.Attrs(Device, mtu)}); err != nil {
		return fmt.Errorf("ip link add %s type wireguard on %s: %w", Device, n.Name, err)
	}
	key, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		return fmt.Errorf("wireguard key for %s: %w", n.Name, err)
	}
	port := Port
	if err := configure(n, wgtypes.Config{PrivateKey: &key, ListenPort: &port, ReplacePeers: true}); err != nil {
		return err
	}
	l, err := wire.Up(h, Device)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, l, wire.PodAddr(subnet(n).IP, 0), 32); err != nil {
		return err
	}
	return wire.RouteLink(h, l, network)
}

// ConnectNodes adds every remote node as a peer.
// Equivalent to: wg set flannel-wg peer REMOTE_PUBKEY endpoint REMOTE_UNDERLAY_IP:51820 allowed-ips REMOTE_SUBNET
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	keys := make([]wgtypes.Key, len(nodes))
	for i, n := range nodes {
		err := netns.Do(n.Netns, func() error {
			c, err := wgctrl.New()
			if err != nil {
				return fmt.Errorf("wgctrl: %w", err)
			}
			defer c.Close()
			dev, err := c.Device(Device)
			if err != nil {
				return fmt.Errorf("wg show %s on %s: %w", Device, n.Name, err)
			}
			keys[i] = dev.PublicKey
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i, n := range nodes {
		var peers []wgtypes.PeerConfig
		for j, r := range nodes {
			if i == j {
				continue
			}
			peers = append(peers, wgtypes.PeerConfig{
				PublicKey:         keys[j],
				Endpoint:          &net.UDPAddr{IP: r.UnderlayIP, Port: Port},
				ReplaceAllowedIPs: true,
				AllowedIPs:        []net.IPNet{*subnet(r)},
			})
		}
		if err := configure(n, wgtypes.Config{Peers: peers}); err != nil {
			return err
		}
	}
	return nil
}

// configure applies a WireGuard configuration to the node's device. The
// generic netlink socket belongs to the namespace it is opened in.
func configure(n datapath.Node, cfg wgtypes.Config) error {
	return netns.Do(n.Netns, func() error {
		c, err := wgctrl.New()
		if err != nil {
			return fmt.Errorf("wgctrl: %w", err)
		}
		defer c.Close()
		if err := c.ConfigureDevice(Device, cfg); err != nil {
			return fmt.Errorf("wg set %s on %s: %w", Device, n.Name, err)
		}
		return nil
	})
}

// AttachPod wires one pod to cni0 as Flannel's CNI plugin has the bridge
// plugin do it (cnibridge.AttachFlannel).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return cnibridge.AttachFlannel(n, p, subnet(n), d.MTU(n.UnderlayMTU))
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string { return cnibridge.FlannelCNIPlugins() }

// CNIConfig implements datapath.CNIDelegate: what Flannel's CNI plugin
// hands the bridge plugin on node n (cnibridge.FlannelCNIConfig).
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	return cnibridge.FlannelCNIConfig(subnet(n), d.MTU(n.UnderlayMTU))
}
