// Package datapath defines how the local engine asks a datapath to wire
// emulated nodes and pods. Each datapath (the CNI family it stands for)
// lives in its own package behind this interface, and catalog lists them.
//
// A datapath sees namespaces by name and does all its kernel work through
// netlink handles bound to them (internal/netns), so nothing it creates is
// visible on the host.
package datapath

import (
	"net"
)

// Node is an emulated node as a datapath sees it.
type Node struct {
	Name  string
	Netns string
	Index int // 0-based, stable for the run; picks the node's pod subnet
	// Underlay is the node's NIC toward the other nodes (the paper's eth1)
	// and its address and MTU.
	Underlay    string
	UnderlayIP  net.IP
	UnderlayMTU int
}

// Pod is an emulated pod as a datapath sees it.
type Pod struct {
	Name  string
	Netns string
	Index int // 0-based per node; picks the pod's address
}

// Attachment is what wiring a pod produced.
type Attachment struct {
	IP net.IP
	// HostVeth is the host-side device in the node namespace (cali…,
	// veth…); the pod side is always eth0.
	HostVeth string
}

// Datapath wires pods on nodes and carries traffic between nodes.
type Datapath interface {
	// Name is the name studies use (calico-vxlan).
	Name() string
	// Features lists the kernel features (internal/probe names) the
	// datapath needs; the engine refuses to start without them.
	Features() []string
	// SetupNode creates node-level devices (bridge, tunnel) and enables
	// forwarding in the node's namespace.
	SetupNode(n Node) error
	// ConnectNodes programs routes, neighbours and FDB entries so every
	// node reaches every other node's pods. Called once all nodes are set up.
	ConnectNodes(nodes []Node) error
	// AttachPod wires a pod into its node.
	AttachPod(n Node, p Pod) (Attachment, error)
	// Tunnel names the node's tunnel device, "" if the datapath has none.
	Tunnel() string
	// MTU is the pod interface MTU for a given underlay MTU.
	MTU(underlayMTU int) int
}

// PodEth is the name of the pod's interface.
const PodEth = "eth0"

// MaxPodsPerNode bounds pods per node: subnets are /24 per node.
const MaxPodsPerNode = 250
