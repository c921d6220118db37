// Package bridge wires pods the way Flannel's host-gw backend does: a
// Linux bridge per node and native routes between nodes, no encapsulation
// (study name "bridge"; Flannel calls it host-gw). Kube-router's
// datapath is the same kernel path with its own names and BGP; it is
// package kuberouter.
//
// Design notes (what flanneld host-gw / kube-router program):
//   - Each node leases a /24 of 10.244.0.0/16; pods hang off cni0 (package
//     cnibridge: .1 gateway on cni0, veth<hash> ports with hairpin, /24
//     pod addresses, default and 10.244.0.0/16 routes via .1).
//   - For every remote node: SUBNET via REMOTE_UNDERLAY_IP dev eth1. This
//     needs the nodes on one L2 segment, as host-gw does. (Kube-router
//     learns the same routes over BGP; the kernel path is identical.)
//   - MTU: no encapsulation, so the underlay MTU (1500) everywhere.
package bridge

import (
	"net"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// Datapath is the bridge (Flannel host-gw) datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "bridge" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Bridge} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: cni0.
func (*Datapath) PodBridge() string { return cnibridge.Bridge }

// Devices implements datapath.Datapath: cni0 and the pods' veths.
func (*Datapath) Devices() []string { return cnibridge.Devices() }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

func subnet(n datapath.Node) *net.IPNet { return cnibridge.Subnet(cnibridge.FlannelNetwork.IP, n) }

// SetupNode creates cni0 (package cnibridge) and turns on forwarding.
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	return cnibridge.SetupBridge(h, n, subnet(n), d.MTU(n.UnderlayMTU))
}

// ConnectNodes adds host-gw's route per remote lease.
// Equivalent to: ip route add REMOTE_SUBNET via REMOTE_UNDERLAY_IP dev eth1
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.RoutePeers(nodes, subnet)
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
