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
	// ID is the pod's name within its node, the same in every run
	// ("srv0"; "" where the engine gives none): what its host-side
	// device is named from (HostKey).
	ID string
	// Steps, when set, times the steps of the wiring (StepLink, ...) for
	// the pod start-up breakdown; AttachPod marks each with Steps.Done.
	Steps *Steps
}

// HostKey is what the pod's host-side device name is derived from
// (wire.HostVethName): its ID, else its name. Not the name, which
// carries the run's ID: Calico's dispatch chains follow the host
// devices' hex prefixes (internal/policy), so with names that changed
// every run a measured pod shared its prefix with another pod in some
// runs and not in others, and Table III's chain and rule counts moved by
// one to four between runs of one study.
func (p Pod) HostKey() string {
	if p.ID != "" {
		return p.ID
	}
	return p.Name
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
	// PodBridge names the Linux bridge the pods' host-side devices are
	// ports of, "" when they are ports of none: routed veths (Calico,
	// Cilium), an Open vSwitch datapath (no Linux bridge: br_netfilter
	// does not show its packets to iptables), pods without a host-side
	// device (host network, macvlan, ipvlan). Like Tunnel it is fixed by
	// the datapath's type and implementation, so a study's netfilter
	// state can be checked against it before anything is built (rules
	// that match pods' traffic on their bridge, netfilter.Generator).
	PodBridge() string
	// Devices names the devices SetupNode, ConnectNodes and AttachPod
	// leave in the node's namespace, as an iptables rule names an
	// interface: each by its name, and the pods' host-side devices, one
	// per pod, by their prefix and "+" (veth+, cali+, lxc+). The bridge
	// and the tunnel are among them; the engine's underlay and lo are
	// not. It is what a CNI's rules that match a device of the CNI's own
	// are checked against (Cilium's cilium_host), before anything is
	// built; a built node has at least these.
	Devices() []string
	// MTU is the pod interface MTU for a given underlay MTU.
	MTU(underlayMTU int) int
}

// PodEth is the name of the pod's interface.
const PodEth = "eth0"

// PodDevices is how Devices names the pods' host-side devices, one per
// pod, whose names start with prefix: prefix+"+", as an iptables rule
// matches every device of that prefix (-i cali+).
func PodDevices(prefix string) string { return prefix + "+" }

// MaxPodsPerNode bounds pods per node: subnets are /24 per node.
const MaxPodsPerNode = 250

// HostNetwork is implemented by datapaths whose pods share their node's
// network namespace (Kubernetes hostNetwork, seed 001's "native host").
// For them the engine creates no pod namespace and calls no AttachPod: a
// pod runs in the node's namespace with the node's underlay address, and
// several pods on one node are told apart by port.
type HostNetwork interface {
	HostNetwork() bool
}

// IsHostNetwork reports whether d's pods share the node's namespace.
func IsHostNetwork(d Datapath) bool {
	h, ok := d.(HostNetwork)
	return ok && h.HostNetwork()
}

// PodPeerless is implemented by datapaths whose pods' eth0 has no peer
// on the node: a macvlan or ipvlan child of the node's underlay sends
// through the underlay's driver, not through a veth (AttachPod gives no
// HostVeth). It says what the pod's eth0 is instead, for a refusal of
// what goes on each pod's host-side device (impairAt client-pods).
type PodPeerless interface {
	PodPeerless() string
}

// WhyNoPodPeers says why d's pods have no host-side devices ("" when
// they have them): host-network pods, or a PodPeerless datapath's.
func WhyNoPodPeers(d Datapath) string {
	if IsHostNetwork(d) {
		return "its pods use the node's network"
	}
	if p, ok := d.(PodPeerless); ok {
		return p.PodPeerless()
	}
	return ""
}

// Detacher is implemented by datapaths that keep state per pod beyond the
// pod's own devices (OVS's flows toward every other port): the engine
// calls DetachPod before it deletes a pod wired by AttachPod, so that
// state goes with the pod. Deleting the pod's namespace removes its
// devices; datapaths without such state need nothing more.
type Detacher interface {
	DetachPod(n Node, p Pod) error
}

// Closer is implemented by datapaths that hold something for the run
// beyond the kernel objects inside the namespaces: daemons started per
// node (flanneld, etcd), BPF objects kept open to update their maps. The
// engine calls Close once when the cluster is torn down, before it deletes
// the namespaces (daemons get to exit cleanly first). Close must be
// idempotent and must also work after a failed or partial setup.
type Closer interface {
	Close() error
}

// CNIDelegate is implemented by datapaths whose real CNI wires a pod by
// handing a network configuration to one of the reference CNI plugins
// (containernetworking-plugins): Flannel's plugin delegates to bridge
// (bridge alias flannel host-gw, flannel-vxlan, flannel-udp, wireguard),
// and the macvlan and ipvlan plugins are the CNI of those datapaths. With
// the local engine's wiring cni, pods are wired by running those plugins
// as a container runtime does instead of by AttachPod; both must give the
// pod the same network. Datapaths whose CNI has its own plugin (Calico,
// Cilium, Weave, the OVS ones) do not implement it: their plugins need
// their daemons and datastores, which are not emulated.
type CNIDelegate interface {
	// CNIPlugins names the plugins the configuration runs (the main
	// plugin and its IPAM), so an engine can refuse a machine that lacks
	// them before it builds anything.
	CNIPlugins() []string
	// CNIConfig is the network configuration list (JSON, as in
	// /etc/cni/net.d/*.conflist) for pods on node n, valid once
	// SetupNode(n) has run (a lease may come from a daemon). It names no
	// IPAM data directory: IPAM state belongs to the node, and the engine
	// places it.
	CNIConfig(n Node) ([]byte, error)
}

// Daemon is a process a datapath runs for the cluster.
type Daemon struct {
	Name string // program, e.g. "flanneld", "etcd"
	Node string // node name it runs on
	PID  int
}

// Daemons is implemented by datapaths that run processes (a CNI's agent,
// its store), so the runner can record their CPU time and memory
// (/proc/PID/stat, /proc/PID/status) like the paper's "memory of the CNI
// daemons". The list is valid between ConnectNodes and Close.
type Daemons interface {
	Daemons() []Daemon
}

// PacketProcesses is implemented by datapaths whose own processes do
// work for every packet: flannel-udp's flanneld reads each packet from
// its TUN device and sends it on in a UDP datagram (and the reverse),
// seed 004's user-space encapsulation. The CPU cost per packet counts
// their samples beside the workload's (internal/metrics/cpp), where it
// would otherwise leave them out as another process's. A daemon that
// only programs the kernel (BIRD, etcd, flanneld's vxlan and host-gw
// backends) is not one.
type PacketProcesses interface {
	// PacketProcesses names them as the kernel does (the command perf
	// reports, at most 15 characters).
	PacketProcesses() []string
}

// PacketProcessesOf names d's per-packet processes; nil for a datapath
// without any.
func PacketProcessesOf(d Datapath) []string {
	if p, ok := d.(PacketProcesses); ok {
		return p.PacketProcesses()
	}
	return nil
}

// MTUOverride is embedded by datapaths whose MTU a study may set (the
// study's `mtu`): SetMTU records it and Or returns it in place of the
// CNI's own default. Every device a datapath sizes goes through its MTU
// method, so the override reaches pods, bridges and tunnels alike.
type MTUOverride struct{ mtu int }

// SetMTU sets the MTU the datapath uses instead of its default.
func (o *MTUOverride) SetMTU(mtu int) { o.mtu = mtu }

// Or returns the override, or def when there is none.
func (o *MTUOverride) Or(def int) int {
	if o.mtu > 0 {
		return o.mtu
	}
	return def
}

// MTUSetter is implemented by datapaths whose MTU a study may override.
type MTUSetter interface{ SetMTU(mtu int) }

// MaxMTUer is implemented by datapaths whose default MTU is below the
// largest the underlay allows (Weave's fixed 1376).
type MaxMTUer interface{ MaxMTU(underlayMTU int) int }

// MaxMTU is the largest pod MTU d can carry over an underlay of that MTU
// without fragmenting its encapsulation.
func MaxMTU(d Datapath, underlayMTU int) int {
	if m, ok := d.(MaxMTUer); ok {
		return m.MaxMTU(underlayMTU)
	}
	return d.MTU(underlayMTU)
}

// Moded is implemented by datapaths that build one of several forms of
// their CNI's datapath, picked by what the machine has: weave builds Open
// vSwitch's kernel datapath where the kernel has the openvswitch module,
// and a Linux bridge in its place where not; calico-vxlan and
// calico-ipip turn their tunnel's tx checksumming (and so TSO) off on a
// kernel up to 5.7.0, as Felix does. The forms carry the same packets at
// different costs, so the run records which one its numbers are of
// (env.json's datapaths.*.mode) and what a stand-in changes.
type Moded interface {
	// BuiltMode names the form the nodes were built with ("ovs",
	// "bridge") and, when that form stands in for the CNI's own
	// datapath, what it changes in what a packet meets; standIn is ""
	// when the form is the CNI's own.
	BuiltMode() (mode, standIn string)
}
