// Package macvlan wires pods with MACVLAN in bridge mode on the node's
// underlay NIC, seed 001's MACVLAN mode (and the macvlan CNI plugin).
//
// Design notes:
//   - Each pod's eth0 is a macvlan child of the node's eth1 with its own
//     MAC, in bridge mode: children of one parent switch frames between
//     themselves inside the driver, and frames for other MACs leave
//     through eth1. Pods take underlay addresses (package underlaypod).
//   - There is no routing or bridging in the node: pod-to-pod across
//     nodes is eth0 -> eth1 -> wire -> eth1 -> eth0.
//   - A MACVLAN parent cannot talk to its own children: the node (and a
//     host-network pod) cannot reach the macvlan pods on it, which is the
//     known limit of this mode (a real deployment adds a macvlan device
//     for the host). Pod-to-pod traffic, which is what is measured, is
//     unaffected; the node's pods are never health-checked from the node.
//   - MTU: the underlay's.
package macvlan

import (
	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/underlaypod"
	"github.com/cnibench/cnibench/internal/probe"
)

// Datapath is the macvlan datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "macvlan" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Macvlan} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: none, each pod's eth0 is a
// macvlan child of the node's underlay, with no peer on the node.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: none, the children are made
// in the pods' namespaces.
func (*Datapath) Devices() []string { return nil }

// PodPeerless implements datapath.PodPeerless.
func (*Datapath) PodPeerless() string {
	return "its pods' eth0 is a macvlan child of the node's underlay, with no peer on the node"
}

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

// SetupNode implements datapath.Datapath; the underlay NIC is all it needs.
func (*Datapath) SetupNode(datapath.Node) error { return nil }

// ConnectNodes implements datapath.Datapath; pods share the underlay L2.
func (*Datapath) ConnectNodes([]datapath.Node) error { return nil }

// AttachPod gives the pod a macvlan child of eth1 in bridge mode.
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return underlaypod.Attach(n, p, d.MTU(n.UnderlayMTU), func(a netlink.LinkAttrs) netlink.Link {
		return &netlink.Macvlan{LinkAttrs: a, Mode: netlink.MACVLAN_MODE_BRIDGE}
	})
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string {
	return []string{cniconf.TypeMacvlan, cniconf.TypeHostLocal}
}

// CNIConfig implements datapath.CNIDelegate: the macvlan plugin's
// configuration giving node n's pods a macvlan child of eth1 in bridge mode, with the
// addresses and route AttachPod gives them (underlaypod.CNIConfig).
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	return underlaypod.CNIConfig(cniconf.TypeMacvlan, "bridge", n, d.MTU(n.UnderlayMTU))
}
