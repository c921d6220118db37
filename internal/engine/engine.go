// Package engine defines what a run needs from the place nodes and pods
// come from: the local engine (network namespaces on this machine) and the
// kube engine (a real cluster) implement the same small interfaces, so
// workloads, metrics and tunings are written once.
package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/netns"
)

// Process is a program started in a pod or on a node.
type Process interface {
	// Wait waits for the program to exit and returns what it printed. A
	// non-zero exit is an error that keeps the output (see ExitError).
	Wait() (stdout, stderr []byte, err error)
	// Stop ends the program early (SIGTERM, then SIGKILL after a grace
	// period). It is safe to call after the program has exited.
	Stop()
}

// Pod is a workload endpoint: a network namespace with one address.
type Pod interface {
	Name() string
	// Node is the name of the node the pod runs on.
	Node() string
	// IP is the pod's own address: servers bind to it. Clients connect
	// to Addr(pod), which is the same unless the pod is Fronted.
	IP() net.IP
	// Start runs argv inside the pod. The argument vector is passed to
	// the program as is: no shell ever sees it.
	Start(ctx context.Context, argv []string) (Process, error)
}

// Greeter is implemented by pods that can send one datagram from their
// network to an address (the local engine's pods). Before a window that
// counts packets, the runner greets each measured pair in both directions
// so that the first trial does not also count the first contact: the ARP
// broadcast, which overlays such as Weave flood to every node.
type Greeter interface {
	Greet(to net.IP) error
}

// Fronted is implemented by pods that clients reach through a front
// rather than at their own address: a Kubernetes Service, as the papers
// addressed their servers. Addr is what clients are given (the Service's
// DNS name, or its ClusterIP where cluster DNS does not work); FrontIP is
// the address it resolves to, for tools that take addresses only.
type Fronted interface {
	Addr() string
	FrontIP() net.IP
}

// Addr is the host name or address clients connect to p at.
func Addr(p Pod) string {
	if f, ok := p.(Fronted); ok {
		return f.Addr()
	}
	return p.IP().String()
}

// AddrIP is the address clients connect to p at, for tools that cannot
// resolve names (sockperf): a Fronted pod's FrontIP, else its own IP.
func AddrIP(p Pod) net.IP {
	if f, ok := p.(Fronted); ok {
		return f.FrontIP()
	}
	return p.IP()
}

// Helper is implemented by pods whose image carries cnibench itself (the
// kube engine's): HelperArgv returns the argv that runs `cnibench agent
// ARGS...` in the pod. Drivers use it for steps that must happen where
// the tool runs, in the pod's own filesystem (nginx's site), which the
// local engine's pods share with this machine and kube pods do not.
type Helper interface {
	HelperArgv(args ...string) []string
}

// Node is the per-node handle: every host-level operation on a node goes
// through it, so the kube engine can implement it with a node agent.
type Node interface {
	Name() string
	// Netns is the node's network namespace ("" when the node is the host).
	Netns() string
	// CPUs are the CPUs the node's processes are pinned to; empty means
	// the node shares every CPU of the machine.
	CPUs() cpuset.Set
	// Underlay is the node's NIC toward other nodes (the paper's eth1).
	Underlay() netns.Iface
	// Tunnel is the datapath's tunnel device on the node, if it has one.
	Tunnel() (netns.Iface, bool)
	// HostVeths are the host-side devices of the given pods on this node
	// (cali*, veth*), in pod order. A pod without one (host network, a
	// macvlan or ipvlan child, an SR-IOV VF) contributes none, so the
	// list may be shorter than pods: a caller that needs one per pod
	// checks (OnePerPod).
	HostVeths(pods []Pod) ([]netns.Iface, error)
	// PodIface is the pod's own interface (eth0 inside the pod).
	PodIface(p Pod) netns.Iface
	// Start runs argv on the node (in the node's namespace, pinned to its
	// CPUs).
	Start(ctx context.Context, argv []string) (Process, error)
}

// InputStarter is a node that can hand a program its standard input (the
// local engine's): netfilter's rule sets reach iptables-restore and nft
// that way, leaving no file behind that a kill -9 would strand.
type InputStarter interface {
	// StartInput is Start with stdin as the program's standard input.
	StartInput(ctx context.Context, argv []string, stdin []byte) (Process, error)
}

// ReceiveDevicer is a node whose underlay is stacked on other devices: a
// bond's ports, a VLAN's parent, an Open vSwitch bridge's NICs (a
// cluster node's bond0, eth0.100, OpenShift's br-ex).
type ReceiveDevicer interface {
	ReceiveDevices() []netns.Iface
}

// ReceiveDevices are the devices where RPS is decided for what node n
// receives from other nodes: the ones its underlay is stacked on
// (ReceiveDevicer), else the underlay. get_rps_cpu runs as a NIC's driver
// hands a packet up, before a bond, VLAN or bridge takes it, so a mask on
// a bond's own queues steers nothing.
func ReceiveDevices(n Node) []netns.Iface {
	if r, ok := n.(ReceiveDevicer); ok {
		if d := r.ReceiveDevices(); len(d) > 0 {
			return d
		}
	}
	return []netns.Iface{n.Underlay()}
}

// Tracer is implemented by nodes that can trace the netfilter path of
// the packets between addresses (package nftrace): the local engine's
// nodes in their namespaces, the kube engine's through the node agent.
type Tracer interface {
	Trace(ctx context.Context, addrs []netip.Addr) (Trace, error)
}

// Trace is a running trace; Stop removes what it installed and returns
// what the marked packets traversed, as metrics (nftrace.Path.Metrics).
type Trace interface {
	Stop() (map[string]float64, error)
}

// ExitError is returned by Process.Wait when the program failed; it keeps
// the output so callers can report what the tool said.
type ExitError struct {
	Argv   []string
	Err    error
	Stderr []byte
	Stdout []byte
}

func (e *ExitError) Error() string {
	msg := string(e.Stderr)
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	if msg == "" {
		return e.Argv[0] + ": " + e.Err.Error()
	}
	return e.Argv[0] + ": " + e.Err.Error() + ": " + msg
}

func (e *ExitError) Unwrap() error { return e.Err }

// Cluster is what a run needs from an engine: two nodes (servers on one,
// clients on the other, as the papers place them) and pods on them.
type Cluster interface {
	Server() Node
	Client() Node
	// Scale makes each node run exactly r workload pods and returns the
	// server node's and the client node's pods, index-aligned into pairs.
	Scale(ctx context.Context, r int) (servers, clients []Pod, err error)
	// Close removes everything the engine created for this cluster.
	Close() error
}

// OnePerPod refuses host-side devices (HostVeths) that are not one per
// pod, for what needs each pod's own (rules matching a pod by its device,
// netem on each pod's): what is for says which.
func OnePerPod(n Node, pods []Pod, devs []netns.Iface, what string) error {
	if len(devs) == len(pods) {
		return nil
	}
	return fmt.Errorf("%s needs each pod's host-side device, and %d of the %d pods on node %s have none "+
		"(host network, a macvlan or ipvlan child, an SR-IOV VF)", what, len(pods)-len(devs), len(pods), n.Name())
}
