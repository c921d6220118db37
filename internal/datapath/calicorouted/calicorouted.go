// Package calicorouted wires pods the way Calico does with native routing
// (no encapsulation; the "xsub" configuration of seed 004, and Calico on a
// flat L2 network with BGP).
//
// Design notes (what Calico programs):
//   - Pods: routed veth, /32 addresses, 169.254.1.1 proxy-ARP gateway
//     (package calicopod).
//   - Each node owns a block of 192.168.0.0/16 (one /24 per node here) and
//     BIRD announces it to its BGP peers. Every node then has, per remote
//     block, BLOCK via REMOTE_UNDERLAY_IP dev eth1 proto bird, and for its
//     own block a blackhole route (so traffic to unallocated addresses of
//     the block is dropped instead of leaving by the default route).
//     By default the routes are static (New): the kernel path is the
//     same whichever daemon installed them; a BGP session only changes
//     who writes them. NewBIRD runs the real thing instead: one BIRD 2
//     per node in an iBGP full mesh (AS 64512), configured as calico/node's
//     confd configures it (bird.go, birdconf.go), and the routes are the
//     ones BIRD programs.
//   - MTU: no encapsulation, so the underlay MTU (1500).
package calicorouted

import (
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/birdmesh"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// Datapath is the calico-routed datapath.
type Datapath struct{ datapath.MTUOverride }

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "calico-routed" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: none, pods are routed.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: the pods' cali veths.
func (*Datapath) Devices() []string { return calicopod.Devices("") }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay) }

// SetupNode turns on forwarding and adds the blackhole route of the
// node's own block.
// Equivalent to:
//
//	sysctl net.ipv4.ip_forward=1
//	ip route add blackhole BLOCK proto bird
func (d *Datapath) SetupNode(n datapath.Node) error {
	if err := d.forwarding(n); err != nil {
		return err
	}
	return calicopod.Blackhole(n, rtprotBird)
}

// forwarding makes the node a router.
// Equivalent to: sysctl net.ipv4.ip_forward=1
func (*Datapath) forwarding(n datapath.Node) error {
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// ConnectNodes adds, on every node, a route to each remote node's block
// via that node's underlay address, as BIRD does from BGP.
// Equivalent to: ip route add REMOTE_BLOCK via REMOTE_UNDERLAY_IP dev eth1 proto bird
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	return wire.RoutePeersProto(nodes, calicopod.Block, rtprotBird)
}

// AttachPod wires one pod the Calico way (package calicopod).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return calicopod.Attach(n, p, d.MTU(n.UnderlayMTU))
}

// rtprotBird is RTPROT_BIRD (12), the protocol Calico's routes carry.
const rtprotBird = birdmesh.RTProtBird
