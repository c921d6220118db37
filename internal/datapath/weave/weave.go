// Package weave wires pods the way Weave Net does with its fast datapath.
//
// Design notes (what the weave router and its CNI plugin program):
//   - One flat, cluster-wide L2 network: pods of every node share
//     10.32.0.0/12 (Weave's default IPALLOC_RANGE); node N's pods here get
//     10.32.N.M. A pod has eth0 (Weave calls it ethwe) with a /12 address
//     and a default route via its node's bridge address.
//   - Each node has the Linux bridge "weave" (pods' host-side veths
//     vethwepl<hash> are ports), and the extra veth pair that Weave puts
//     between the bridge and its tunnel: vethwe-bridge (a port of weave)
//     and vethwe-datapath (a port of the fast datapath).
//   - The fast datapath is an Open vSwitch kernel datapath named
//     "datapath" with a VXLAN vport on UDP 6784. Where the openvswitch
//     module exists that is what is built (see ovs.go: ovs-dpctl, flows
//     port to port, tunnel key per remote node). Elsewhere a Linux bridge
//     named "datapath" joins vethwe-datapath and a VXLAN device
//     "vxlan-6784" (learning, one all-zero FDB entry per remote node for
//     broadcast): the same devices and encapsulation, with a Linux bridge
//     in place of the OVS datapath. BuiltMode says which, and the run
//     records it (env.json's datapaths.*.mode, with what the stand-in
//     changes), since the two modes' numbers differ.
//   - MTU 1376 (Weave's default) on pods, bridges, the veth pair and the
//     tunnel.
//   - Bridge netfilter: weave-kube's init.sh (prog/weave-kube) runs
//     modprobe br_netfilter and writes 1 to
//     /proc/sys/net/bridge/bridge-nf-call-iptables ("kube-proxy requires
//     that bridged traffic passes through netfilter"), so pod-to-pod
//     packets on the weave bridge pass the node's iptables: without it
//     Table III's rule counts sit beside a netfilter cost of about 0.
//     weave-kube only warns where the file is missing, and so does
//     cnibench, which loads no module: SetupNode sets the sysctl in the
//     node's namespace (per namespace from Linux 5.3; it goes with it)
//     where br_netfilter is there, and the run notes its absence
//     (WithoutBrNetfilter, brnetfilter.go). Where the entry's netfilter
//     state is measured (netfilter:) the local engine requires it, since
//     without it that is not Weave's path; Features does not ask for it
//     (as kube-router's does), so other entries still run. In bridge mode the
//     sysctl covers the stand-in "datapath" bridge too (it is per
//     namespace, and a bridge's own nf_call_iptables cannot turn it off
//     there), which the OVS datapath is not: its packets pass the
//     FORWARD hooks a second time (BridgeStandIn; the report's Table
//     III and cost-per-packet rows of a bridge-mode run say so).
package weave

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Bridge is Weave's bridge; pods attach to it.
	Bridge = "weave"
	// BridgeVeth and DatapathVeth are the extra veth pair.
	BridgeVeth   = "vethwe-bridge"
	DatapathVeth = "vethwe-datapath"
	// Datapath is the name of the fast datapath (OVS datapath or, without
	// the openvswitch module, a Linux bridge of the same name).
	DatapathDev = "datapath"
	// Device is the VXLAN tunnel.
	Device = "vxlan-6784"
	port   = 6784
	vni    = 0x5eaf
	// podVethPrefix starts the name of each pod's host-side veth
	// (vethwepl<hash>).
	podVethPrefix = "vethwepl"
	// DefaultMTU is Weave's default MTU.
	DefaultMTU = 1376
	prefixLen  = 12
)

var netBase = net.IPv4(10, 32, 0, 0)

// Modes of the fast datapath.
const (
	ModeOVS    = "ovs"    // OVS kernel datapath (Weave's fastdp)
	ModeBridge = "bridge" // Linux bridge stand-in, no openvswitch module
)

// Datapath is the weave datapath.
type Datapath struct {
	datapath.MTUOverride
	// Mode is ModeOVS, ModeBridge, or "" to pick by probing when a run
	// first needs it (OVS when the kernel has the openvswitch module and
	// ovs-dpctl is installed): Features, which a run's preflight asks,
	// and SetupNode, ConnectNodes and BuiltMode pick it. Study validation
	// never does: what it reads (Name, Tunnel, MTU, MaxMTU) is the
	// type's, and the probe runs modprobe openvswitch.
	Mode string
}

// New returns the datapath; its mode is picked when a run first needs it.
func New() *Datapath { return &Datapath{} }

// pickMode is DefaultMode; a test counts through it that validation
// never probes.
var pickMode = DefaultMode

func (d *Datapath) mode() string {
	if d.Mode == "" {
		d.Mode = pickMode()
	}
	return d.Mode
}

// DefaultMode probes for the OVS datapath (cached by probe).
func DefaultMode() string {
	if ok, _ := probe.Has(probe.OpenvSwitch); ok && haveDpctl() {
		return ModeOVS
	}
	return ModeBridge
}

// BridgeStandIn is what bridge mode changes against Weave's own fast
// datapath (BuiltMode): the reason its Table III counts and netfilter
// cost per packet run above the OVS datapath's.
const BridgeStandIn = "a Linux bridge stands in for Weave's Open vSwitch fast datapath: " +
	"the bridge's cost in place of OVS's, and with bridge-nf-call-iptables=1 every packet " +
	"crossing it passes the node's netfilter hooks (PREROUTING, FORWARD, POSTROUTING, conntrack) " +
	"a second time, which the OVS datapath does not"

// BuiltMode implements datapath.Moded: the mode SetupNode builds (picked
// on first use, so a run reports the one its nodes got).
func (d *Datapath) BuiltMode() (mode, standIn string) {
	if d.mode() == ModeBridge {
		return ModeBridge, BridgeStandIn
	}
	return d.mode(), ""
}

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "weave" }

// Features implements datapath.Datapath. In OVS mode it needs the
// openvswitch module; in bridge mode a plain bridge and VXLAN.
// br_netfilter only with netfilter: (the package's notes).
func (d *Datapath) Features() []string {
	if d.mode() == ModeOVS {
		return []string{probe.Veth, probe.Bridge, probe.Vxlan, probe.OpenvSwitch, probe.ToolOvsDpctl}
	}
	return []string{probe.Veth, probe.Bridge, probe.Vxlan}
}

// Tunnel implements datapath.Datapath: the VXLAN device. Both modes have
// one, so it is never "" and picks no mode: study validation reads it of
// a datapath built as an object (a netfilter CNI whose rules need a
// tunnel, offloadDevices: tunnel, the report's overlays), and picking
// the mode probes, which runs modprobe openvswitch, a host change no
// validation may make (docs/safety.md). Once the mode is picked (a run's
// preflight asks Features first) the name is that mode's: in OVS mode
// the one ovs-dpctl creates for the vport, vxlan_sys_6784; before, and
// in bridge mode, Weave's own vxlan-6784.
func (d *Datapath) Tunnel() string {
	if d.Mode == ModeOVS {
		return OVSTunnelPrefix + "6784"
	}
	return Device
}

// PodBridge implements datapath.Datapath: the weave bridge, in either
// mode (the mode decides what is behind vethwe-datapath, not what the
// pods are ports of).
func (*Datapath) PodBridge() string { return Bridge }

// Devices implements datapath.Datapath: the weave bridge, the pods'
// vethwepl veths, the veth pair, the fast datapath's device and, once
// the mode is picked, the tunnel, whose name is the mode's (Tunnel):
// before, naming one would be a guess, and validation, which reads
// Devices of an object no preflight has probed, needs only Cilium's and
// Calico's devices, which weave has in neither mode.
func (d *Datapath) Devices() []string {
	out := []string{Bridge, datapath.PodDevices(podVethPrefix), BridgeVeth, DatapathVeth, DatapathDev}
	if d.Mode != "" {
		out = append(out, d.Tunnel())
	}
	return out
}

// MTU implements datapath.Datapath: Weave's 1376, whatever the underlay.
// Weave sizes it for the smallest underlay it expects, GCE's 1460, less
// VXLAN's 50 and 34 bytes of ESP for its encrypted fast datapath (weave
// net/bridge.go:382-388).
func (d *Datapath) MTU(int) int { return d.Or(DefaultMTU) }

// MaxMTU implements datapath.MaxMTUer: Weave's 1376 is sized for a 1460-
// byte underlay with encryption; unencrypted VXLAN, which this datapath
// builds, allows 50 bytes less than the underlay's own.
func (*Datapath) MaxMTU(underlay int) int { return underlay - 50 }

func bridgeIP(n datapath.Node) net.IP { return wire.PodAddr(wire.Subnet24(netBase, n.Index).IP, 1) }
func podIP(n datapath.Node, i int) net.IP {
	return wire.PodAddr(wire.Subnet24(netBase, n.Index).IP, i+2)
}

// SetupNode creates the weave bridge, the veth pair and the fast
// datapath with its tunnel, and turns on bridge netfilter where the
// node has it.
// Equivalent to:
//
//	ip link add weave mtu 1376 type bridge; ip addr add 10.32.N.1/12 dev weave
//	ip link add vethwe-bridge mtu 1376 type veth peer name vethwe-datapath mtu 1376
//	ip link set vethwe-bridge master weave up
//	bridge mode:  ip link add datapath mtu 1376 type bridge
//	              ip link add vxlan-6784 mtu 1376 type vxlan id 24239 local UNDERLAY_IP dev eth1 dstport 6784
//	              ip link set vethwe-datapath master datapath; ip link set vxlan-6784 master datapath
//	OVS mode:     ovs-dpctl add-dp datapath vethwe-datapath vxlan-6784,type=vxlan,dst_port=6784,remote_ip=flow,key=flow
//	sysctl net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	mtu := d.MTU(n.UnderlayMTU)
	if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: wire.Attrs(Bridge, mtu)}); err != nil {
		return fmt.Errorf("ip link add %s type bridge on %s: %w", Bridge, n.Name, err)
	}
	br, err := wire.Up(h, Bridge)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, br, bridgeIP(n), prefixLen); err != nil {
		return err
	}
	pair := &netlink.Veth{LinkAttrs: wire.Attrs(BridgeVeth, mtu), PeerName: DatapathVeth}
	if err := h.LinkAdd(pair); err != nil {
		return fmt.Errorf("ip link add %s type veth peer %s on %s: %w", BridgeVeth, DatapathVeth, n.Name, err)
	}
	bv, err := h.LinkByName(BridgeVeth)
	if err != nil {
		return err
	}
	if err := h.LinkSetMaster(bv, br); err != nil {
		return fmt.Errorf("ip link set %s master %s: %w", BridgeVeth, Bridge, err)
	}
	if _, err := wire.Up(h, BridgeVeth); err != nil {
		return err
	}
	dv, err := h.LinkByName(DatapathVeth)
	if err != nil {
		return err
	}
	if err := h.LinkSetMTU(dv, mtu); err != nil {
		return fmt.Errorf("ip link set %s mtu %d: %w", DatapathVeth, mtu, err)
	}
	if _, err := wire.Up(h, DatapathVeth); err != nil {
		return err
	}
	if d.mode() == ModeOVS {
		if err := setupOVS(n, mtu); err != nil {
			return err
		}
	} else if err := d.setupBridgeDatapath(h, n, dv, mtu); err != nil {
		return err
	}
	if err := wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	return wire.BridgeNetfilterOn(n.Netns)
}

func (d *Datapath) setupBridgeDatapath(h *netns.NetlinkHandle, n datapath.Node, dv netlink.Link, mtu int) error {
	if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: wire.Attrs(DatapathDev, mtu)}); err != nil {
		return fmt.Errorf("ip link add %s type bridge on %s: %w", DatapathDev, n.Name, err)
	}
	dp, err := wire.Up(h, DatapathDev)
	if err != nil {
		return err
	}
	if err := wire.AddVxlan(h, n, Device, vni, port, mtu, true); err != nil {
		return err
	}
	vl, err := h.LinkByName(Device)
	if err != nil {
		return err
	}
	for _, l := range []netlink.Link{dv, vl} {
		if err := h.LinkSetMaster(l, dp); err != nil {
			return fmt.Errorf("ip link set %s master %s: %w", l.Attrs().Name, DatapathDev, err)
		}
	}
	_, err = wire.Up(h, Device)
	return err
}

// ConnectNodes points the tunnel at every other node: in bridge mode an
// all-zero FDB entry per remote node (broadcast and unknown unicast are
// sent to each, as Weave's router floods), in OVS mode the flows.
// Equivalent to: bridge fdb append 00:00:00:00:00:00 dev vxlan-6784 dst REMOTE_IP
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	if d.mode() == ModeOVS {
		return connectOVS(nodes)
	}
	zero := net.HardwareAddr{0, 0, 0, 0, 0, 0}
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
				if i != j {
					if err := wire.FDBAppend(h, l, zero, r.UnderlayIP); err != nil {
						return err
					}
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

// AttachPod wires one pod to the weave bridge, as Weave's CNI plugin does,
// hairpin on: the plugin's configuration defaults to hairpinMode true
// (weave plugin/net/cni.go:38) and AttachContainer sets it on the
// bridge-side veth (net/veth.go:151), so a pod can reach itself through
// a Service.
// Equivalent to:
//
//	ip -n NODE link add vethweplX mtu 1376 type veth peer eth0 netns POD; ip -n NODE link set vethweplX master weave up
//	bridge -n NODE link set dev vethweplX hairpin on
//	ip -n POD addr add 10.32.N.M/12 dev eth0; ip -n POD route add default via 10.32.N.1
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return cnibridge.AttachPort(n, p, cnibridge.Port{
		Bridge: Bridge, VethPrefix: podVethPrefix, MTU: d.MTU(n.UnderlayMTU),
		IP: podIP(n, p.Index), PrefixLen: prefixLen, Gateway: bridgeIP(n),
		Hairpin: true,
	})
}
