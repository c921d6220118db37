// Package hostnet is the "host" datapath: no container networking at all.
// It stands for seed 001's "native host" baseline and for Kubernetes pods
// with hostNetwork: true.
//
// Design notes: a pod is its node's network namespace and has the node's
// underlay address (198.18.0.N on eth1); the engine sees HostNetwork() and
// creates no pod namespace. Several pods on one node share the address and
// are told apart by port, as hostNetwork pods are. Traffic between nodes
// crosses only the underlay; between pods on one node it is loopback
// through the node's own stack (lo), as for two host processes.
package hostnet

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/probe"
)

// Datapath is the host datapath.
type Datapath struct{}

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "host" }

// HostNetwork implements datapath.HostNetwork.
func (*Datapath) HostNetwork() bool { return true }

// Features implements datapath.Datapath: only the engine's underlay veth.
func (*Datapath) Features() []string { return []string{probe.Veth} }

// Tunnel implements datapath.Datapath: there is none.
func (*Datapath) Tunnel() string { return "" }

// PodBridge implements datapath.Datapath: none, pods use the node's
// network.
func (*Datapath) PodBridge() string { return "" }

// Devices implements datapath.Datapath: none, the node has only the
// engine's underlay.
func (*Datapath) Devices() []string { return nil }

// MTU implements datapath.Datapath: the pod uses the node's NIC.
func (*Datapath) MTU(underlay int) int { return underlay }

// SetupNode implements datapath.Datapath; nothing to do.
func (*Datapath) SetupNode(datapath.Node) error { return nil }

// ConnectNodes implements datapath.Datapath; the underlay connects them.
func (*Datapath) ConnectNodes([]datapath.Node) error { return nil }

// AttachPod is never called for a host-network datapath; it returns the
// node's address for callers that do not check HostNetwork.
func (*Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	if n.UnderlayIP == nil {
		return datapath.Attachment{}, fmt.Errorf("node %s has no underlay address", n.Name)
	}
	return datapath.Attachment{IP: n.UnderlayIP}, nil
}
