// Package ipvlan wires pods with IPVLAN in L2 mode on the node's underlay
// NIC, as the ipvlan CNI plugin does by default.
//
// Design notes:
//   - Each pod's eth0 is an ipvlan child of the node's eth1. Unlike
//     macvlan, all children share the parent's MAC; the driver
//     demultiplexes received packets by destination IP. In L2 mode the
//     children ARP on the underlay themselves, and traffic between
//     children of one parent is switched inside the driver. Pods take
//     underlay addresses (package underlaypod).
//   - L3 mode (the node routes for its children, no broadcast) is not
//     built: it needs routes to the pods on the other nodes and changes
//     nothing on the measured per-packet path beyond the ARP handling.
//   - As with macvlan, the parent cannot reach its own children in L2
//     mode; pod-to-pod traffic is unaffected.
//   - MTU: the underlay's.
package ipvlan

import (
	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/underlaypod"
	"github.com/cnibench/cnibench/internal/probe"
)

// Datapath is the ipvlan datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "ipvlan" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.IPVlan} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

// SetupNode implements datapath.Datapath; the underlay NIC is all it needs.
func (*Datapath) SetupNode(datapath.Node) error { return nil }

// ConnectNodes implements datapath.Datapath; pods share the underlay L2.
func (*Datapath) ConnectNodes([]datapath.Node) error { return nil }

// AttachPod gives the pod an ipvlan (L2 mode) child of eth1.
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return underlaypod.Attach(n, p, d.MTU(n.UnderlayMTU), func(a netlink.LinkAttrs) netlink.Link {
		return &netlink.IPVlan{LinkAttrs: a, Mode: netlink.IPVLAN_MODE_L2}
	})
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string {
	return []string{cniconf.TypeIPVlan, cniconf.TypeHostLocal}
}

// CNIConfig implements datapath.CNIDelegate: the ipvlan plugin's
// configuration giving node n's pods an ipvlan child of eth1 in L2 mode, with the
// addresses and route AttachPod gives them (underlaypod.CNIConfig).
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	return underlaypod.CNIConfig(cniconf.TypeIPVlan, "l2", n, d.MTU(n.UnderlayMTU))
}
