package local

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/proc"
)

// Node is an emulated node; it implements engine.Node.
type Node struct {
	cluster *Cluster
	name    string
	index   int
	ns      string
	ip      net.IP
	cpus    cpuset.Set
	pods    []*Pod
	cni     cniRuntime // WiringCNI: the node's CNI runtime side (*cniexec.Node)
}

func (n *Node) info() datapath.Node {
	return datapath.Node{
		Name: n.name, Netns: n.ns, Index: n.index,
		Underlay: UnderlayDev, UnderlayIP: n.ip, UnderlayMTU: n.cluster.cfg.UnderlayMTU,
	}
}

// Name implements engine.Node.
func (n *Node) Name() string { return n.name }

// Netns implements engine.Node.
func (n *Node) Netns() string { return n.ns }

// CPUs implements engine.Node.
func (n *Node) CPUs() cpuset.Set { return n.cpus }

// UnderlayIP is the node's underlay address.
func (n *Node) UnderlayIP() net.IP { return n.ip }

// Underlay implements engine.Node.
func (n *Node) Underlay() netns.Iface { return netns.Iface{Netns: n.ns, Name: UnderlayDev} }

// Tunnel implements engine.Node.
func (n *Node) Tunnel() (netns.Iface, bool) {
	t := n.cluster.cfg.Datapath.Tunnel()
	return netns.Iface{Netns: n.ns, Name: t}, t != ""
}

// Pods returns the node's pods.
func (n *Node) Pods() []*Pod { return append([]*Pod(nil), n.pods...) }

// HostVeths implements engine.Node. Pods without a host-side device
// (host network, macvlan and ipvlan children of eth1) contribute none.
func (n *Node) HostVeths(pods []engine.Pod) ([]netns.Iface, error) {
	var out []netns.Iface
	for _, p := range pods {
		lp, ok := p.(*Pod)
		if !ok || lp.node != n {
			return nil, fmt.Errorf("pod %s is not on node %s", p.Name(), n.name)
		}
		if lp.hostVeth == "" {
			continue
		}
		out = append(out, netns.Iface{Netns: n.ns, Name: lp.hostVeth})
	}
	return out, nil
}

// PodIface implements engine.Node.
func (n *Node) PodIface(p engine.Pod) netns.Iface {
	lp := p.(*Pod)
	if lp.hostNet {
		return netns.Iface{Netns: lp.ns, Name: UnderlayDev}
	}
	return netns.Iface{Netns: lp.ns, Name: datapath.PodEth}
}

// Start implements engine.Node.
func (n *Node) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, n.ns, n.cpus, argv)
}

// StartInput implements engine.InputStarter: Start with stdin as the
// program's standard input.
func (n *Node) StartInput(ctx context.Context, argv []string, stdin []byte) (engine.Process, error) {
	return proc.StartInput(ctx, n.ns, n.cpus, argv, stdin)
}

// Trace implements engine.Tracer: nft in the node's namespace. A run
// killed before Stop leaves the table in the namespace, which cleanup
// deletes with it.
func (n *Node) Trace(_ context.Context, addrs []netip.Addr) (engine.Trace, error) {
	tr, err := nftrace.Start(addrs, func(c *exec.Cmd) error { return netns.Start(n.ns, nil, c) })
	if err != nil {
		return nil, err
	}
	return localTrace{tr}, nil
}

type localTrace struct{ t *nftrace.Trace }

func (l localTrace) Stop() (map[string]float64, error) {
	p, err := l.t.Stop()
	return p.Metrics(), err
}

// Pod is an emulated pod; it implements engine.Pod.
type Pod struct {
	node     *Node
	name     string
	index    int
	ns       string
	ip       net.IP
	hostVeth string
	hostNet  bool // the pod shares its node's namespace (datapath.HostNetwork)
	setup    time.Duration
	phases   []engine.Phase // setup's breakdown
	teardown time.Duration
	cniConf  []byte // WiringCNI: the configuration ADD used, for DEL
}

// Name implements engine.Pod.
func (p *Pod) Name() string { return p.name }

// Node implements engine.Pod.
func (p *Pod) Node() string { return p.node.name }

// IP implements engine.Pod.
func (p *Pod) IP() net.IP { return p.ip }

// Netns is the pod's namespace.
func (p *Pod) Netns() string { return p.ns }

// SetupLatency is how long creating and wiring the pod's network took.
func (p *Pod) SetupLatency() time.Duration { return p.setup }

// greetPort is the discard port (RFC 863): nothing listens there, so a
// greeting costs the receiver one ICMP port unreachable at most.
const greetPort = 9

// Greet implements engine.Greeter: one UDP datagram from the pod's
// namespace to the address. Sending it resolves the neighbour (and
// fills the bridges' forwarding tables) on the way; it does not wait
// for the resolution, which the caller's settle time covers.
func (p *Pod) Greet(to net.IP) error {
	err := netns.Do(p.ns, func() error {
		conn, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: to, Port: greetPort})
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = conn.Write([]byte{0})
		return err
	})
	if err != nil {
		return fmt.Errorf("greet %s from pod %s: %w", to, p.name, err)
	}
	return nil
}

// TeardownLatency is how long unwiring the pod and deleting its namespace
// took; 0 until the pod is deleted (scaled down or Close).
func (p *Pod) TeardownLatency() time.Duration { return p.teardown }

// CPUs are the CPUs the pod's processes are pinned to: its node's (nil:
// every CPU). Work a pod does outside its processes (the kernel's packet
// generator sending for it) goes there too.
func (p *Pod) CPUs() cpuset.Set { return p.node.cpus }

// Start implements engine.Pod; the process is pinned to the node's CPUs.
func (p *Pod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, p.ns, p.node.cpus, argv)
}

// StartWatched implements engine.Watcher.
func (p *Pod) StartWatched(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	return proc.StartWatched(ctx, p.ns, p.node.cpus, argv, line)
}
