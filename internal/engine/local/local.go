// Package local is the embedded engine: every node is a network namespace,
// joined to the other node by an underlay veth pair (the paper's eth1 on
// each node), and every pod is a network namespace wired into its node by
// the study's datapath. Nothing is created in the host's own namespace.
//
// Names: every namespace is "cnb-<run id>-<what>", so leftovers are
// recognisable and two runs never collide (cleanup relies on the prefix).
//
// Wiring (Config.Wiring): pods are wired in process by the datapath
// (netlink, the default) or, for datapaths whose real CNI delegates to a
// reference CNI plugin, by running that plugin as a container runtime
// does (cni; wiring.go). Either way each pod's setup time (namespace and
// wiring) and teardown time (CNI DEL and namespace deletion) are
// recorded: Pod.SetupLatency, Pod.TeardownLatency, Cluster.PodTimes.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"sync"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// Prefix starts the name of every namespace the local engine creates.
const Prefix = "cnb-"

// UnderlayDev is the node NIC name, as in the paper (eth1).
const UnderlayDev = "eth1"

// underlayBase is RFC 2544's benchmarking range, so the emulated underlay
// can never be confused with a real network.
var underlayBase = net.IPv4(198, 18, 0, 0)

// underlayGateway is the (absent) router of the underlay subnet.
var underlayGateway = net.IPv4(198, 18, 0, 254)

// Recorder journals objects before they are created, so a crashed run can
// be cleaned up (internal/journal implements it).
type Recorder interface {
	RecordNetns(name string) error
	RemovedNetns(name string) error
}

// Config describes the cluster to build.
type Config struct {
	RunID       string
	Datapath    datapath.Datapath
	UnderlayMTU int
	ServerCPUs  cpuset.Set
	ClientCPUs  cpuset.Set
	Recorder    Recorder
	// Kill ends every process inside a namespace before it is deleted, so
	// a straggler cannot keep a deleted namespace alive.
	Kill func(netns string) error
	// Wiring is how pods are wired: WiringNetlink ("" means it) or
	// WiringCNI. Up refuses a wiring the datapath or the machine cannot
	// do (CheckWiring) before it creates anything.
	Wiring string
	// CNIPath lists the directories holding the reference CNI plugins
	// (CNI_PATH) for WiringCNI; empty means probe.CNIPath().
	CNIPath []string
	// StateDir is the run's state directory for WiringCNI: each node's CNI
	// state (host-local's leases, libcni's cache) goes in StateDir/<node>.
	// Empty means journal.StateDir(journal.DefaultDir, RunID). Up creates
	// it (journaled first when the Recorder is a DirRecorder), Close
	// removes it.
	StateDir string
}

// Cluster is a running emulated cluster: two nodes and their pods.
type Cluster struct {
	cfg      Config
	server   *Node
	client   *Node
	created  []string // namespaces, in creation order
	stateDir string   // WiringCNI: the run's state directory, once created
	// mu guards created and pods: a pod start-up burst (StartPods) sets
	// up and deletes pods from several goroutines.
	mu   sync.Mutex
	pods []*Pod // every measured pod with its own namespace that was set up, in order (PodTimes)
}

// Roles of the two nodes.
const (
	ServerNode = "server"
	ClientNode = "client"
)

// Up builds the nodes, the underlay and the datapath's node-level wiring.
// On error everything created so far is removed.
func Up(ctx context.Context, cfg Config) (c *Cluster, err error) {
	if cfg.UnderlayMTU == 0 {
		cfg.UnderlayMTU = 1500
	}
	if cfg.Wiring == "" {
		cfg.Wiring = WiringNetlink
	}
	if err := CheckWiring(cfg.Datapath, cfg.Wiring, cfg.CNIPath); err != nil {
		return nil, err
	}
	c = &Cluster{cfg: cfg}
	// "return nil, err" has set c to nil by the time this runs. The
	// teardown's own error is kept: a process still alive after SIGKILL
	// or a namespace left must reach the run, which keeps its journal
	// and stops rather than build another cluster (engine.ErrLeftBehind).
	built := c
	defer func() {
		if err != nil {
			err = errors.Join(err, engine.LeftBehind(built.Close()))
			c = nil
		}
	}()
	c.server = &Node{cluster: c, name: ServerNode, index: 0, cpus: cfg.ServerCPUs}
	c.client = &Node{cluster: c, name: ClientNode, index: 1, cpus: cfg.ClientCPUs}
	nodes := []*Node{c.server, c.client}
	for _, n := range nodes {
		n.ns = c.nsName("node-" + n.name)
		if err := c.addNetns(n.ns); err != nil {
			return nil, err
		}
		n.ip = wire.PodAddr(underlayBase, n.index+1)
	}
	if err := c.underlay(); err != nil {
		return nil, err
	}
	if cfg.Wiring == WiringCNI {
		if err := c.setupCNI(); err != nil {
			return nil, err
		}
	}
	var dn []datapath.Node
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := cfg.Datapath.SetupNode(n.info()); err != nil {
			return nil, fmt.Errorf("datapath %s on node %s: %w", cfg.Datapath.Name(), n.name, err)
		}
		dn = append(dn, n.info())
	}
	if err := cfg.Datapath.ConnectNodes(dn); err != nil {
		return nil, fmt.Errorf("datapath %s: connect nodes: %w", cfg.Datapath.Name(), err)
	}
	return c, nil
}

func (c *Cluster) nsName(what string) string { return Prefix + c.cfg.RunID + "-" + what }

// netnsAdd is netns.Add (tests fail it).
var netnsAdd = netns.Add

func (c *Cluster) addNetns(name string) error {
	if c.cfg.Recorder != nil {
		if err := c.cfg.Recorder.RecordNetns(name); err != nil {
			return fmt.Errorf("journal netns %s: %w", name, err)
		}
	}
	if err := netnsAdd(name); err != nil {
		// A creation that failed and left nothing (netns.Add removes its
		// file again) made nothing of the run's: its entry is closed, as
		// useTempDir's and setupCNI's are, or the name, never in
		// c.created, would stay pending after Close, and a run that
		// left nothing would keep its journal (exit 3) and refuse the
		// next run. A file still there stays journaled for cleanup.
		if c.cfg.Recorder != nil && !netns.Exists(name) && !netns.HalfMade(name) {
			if rerr := c.cfg.Recorder.RemovedNetns(name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("journal removal of %s: %w", name, rerr))
			}
		}
		return err
	}
	c.mu.Lock()
	c.created = append(c.created, name)
	c.mu.Unlock()
	// No router advertises on the emulated networks, yet every new
	// interface would solicit one for as long as it lives (the kernel's
	// router_solicitations -1: again and again, backing off to an hour),
	// and overlays flood those multicasts to every node, where they cross
	// netfilter at random moments and add their rules to a counted path
	// (Weave's intra-host path: 10 / 14, or 12 / 21 or 14 / 28 when a
	// solicitation fell in the window). The namespace's default keeps its
	// new interfaces (pods' eth0, bridges, tunnels) from soliciting. A
	// kernel without IPv6 has no such file and nothing to quiet.
	err := wire.Sysctl(name, "net/ipv6/conf/default/router_solicitations", "0")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// underlay joins the two nodes with a veth pair named eth1 on both sides.
// Equivalent to:
//
//	ip -n SERVER link add eth1 mtu M type veth peer name eth1 netns CLIENT
//	ip -n X addr add 198.18.0.N/24 dev eth1; ip -n X link set eth1 up
func (c *Cluster) underlay() error {
	hs, err := netns.Handle(c.server.ns)
	if err != nil {
		return err
	}
	defer hs.Close()
	hc, err := netns.Handle(c.client.ns)
	if err != nil {
		return err
	}
	defer hc.Close()
	v := &netlink.Veth{
		LinkAttrs:     wire.Attrs(UnderlayDev, c.cfg.UnderlayMTU),
		PeerName:      UnderlayDev,
		PeerNamespace: netlink.NsFd(hc.NsFd()),
	}
	if err := hs.LinkAdd(v); err != nil {
		return fmt.Errorf("underlay: ip link add %s type veth: %w", UnderlayDev, err)
	}
	for _, x := range []struct {
		h *netns.NetlinkHandle
		n *Node
	}{{hs, c.server}, {hc, c.client}} {
		l, err := wire.Up(x.h, UnderlayDev)
		if err != nil {
			return fmt.Errorf("underlay on %s: %w", x.n.name, err)
		}
		if err := x.h.LinkSetMTU(l, c.cfg.UnderlayMTU); err != nil {
			return fmt.Errorf("underlay mtu on %s: %w", x.n.name, err)
		}
		if err := wire.AddrAdd(x.h, l, x.n.ip, 24); err != nil {
			return fmt.Errorf("underlay on %s: %w", x.n.name, err)
		}
		// A real node has a default route. Datapaths depend on it:
		// proxy ARP (Calico's pod gateway 169.254.1.1) only answers for
		// targets the node can route out of another device. The gateway
		// does not exist, so nothing ever leaves the emulated underlay.
		if err := wire.RouteVia(x.h, l, nil, underlayGateway, false); err != nil {
			return fmt.Errorf("underlay default route on %s: %w", x.n.name, err)
		}
	}
	return nil
}

// Server is the node where servers run and tunings apply.
func (c *Cluster) Server() engine.Node { return c.server }

// Client is the node where clients run.
func (c *Cluster) Client() engine.Node { return c.client }

// Nodes returns both nodes, server first.
func (c *Cluster) Nodes() []*Node { return []*Node{c.server, c.client} }

// deleteNetns stops the processes in a namespace and deletes it.
func (c *Cluster) deleteNetns(name string) error {
	if err := c.kill(name); err != nil {
		return err
	}
	return c.removeNetns(name)
}

func (c *Cluster) kill(name string) error {
	if c.cfg.Kill != nil {
		if err := c.cfg.Kill(name); err != nil {
			return fmt.Errorf("stop processes in %s: %w", name, err)
		}
	}
	return nil
}

// removeNetns deletes a namespace and journals that it is gone.
// netnsDelete is netns.Delete (tests fail it).
var netnsDelete = netns.Delete

func (c *Cluster) removeNetns(name string) error {
	if err := netnsDelete(name); err != nil {
		return err
	}
	if c.cfg.Recorder != nil {
		if err := c.cfg.Recorder.RemovedNetns(name); err != nil {
			return fmt.Errorf("journal removal of %s: %w", name, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range c.created {
		if n == name {
			c.created = append(c.created[:i], c.created[i+1:]...)
			break
		}
	}
	return nil
}

// Close deletes every namespace the cluster created, pods first, and the
// run's state directory. It is idempotent and keeps going past errors,
// returning them joined.
func (c *Cluster) Close() error {
	var errs []error
	// Pods first, newest first, as kubelet tears pods down before their
	// node goes: each is unwired (CNI DEL with WiringCNI, while its node
	// and the datapath's daemons still run) and its teardown timed.
	for _, n := range []*Node{c.client, c.server} {
		if n == nil {
			continue
		}
		for i := len(n.pods) - 1; i >= 0; i-- {
			if err := c.deletePod(n.pods[i]); err != nil {
				errs = append(errs, err)
			}
		}
		n.pods = nil
	}
	// Datapath daemons (flanneld, etcd) and BPF objects go next, while
	// the node namespaces they use still exist, so they exit cleanly.
	if cl, ok := c.cfg.Datapath.(datapath.Closer); ok {
		if err := cl.Close(); err != nil {
			errs = append(errs, fmt.Errorf("datapath %s: %w", c.cfg.Datapath.Name(), err))
		}
	}
	// What is left: the nodes, and pods whose wiring or teardown failed.
	for i := len(c.created) - 1; i >= 0; i-- {
		if err := c.deleteNetns(c.created[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.removeStateDir(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Wiring is how the cluster wires pods (WiringNetlink or WiringCNI).
func (c *Cluster) Wiring() string { return c.cfg.Wiring }

// PodTime is how long one pod's network took to set up and to tear down:
// Setup is creating the namespace and wiring it (AttachPod, or CNI ADD of
// loopback and the network), Teardown unwiring (CNI DEL) and deleting the
// namespace.
type PodTime = engine.PodTime

// PodTimes lists every pod the cluster has set up, in creation order,
// including pods already deleted by scaling down or by Close, so after
// Close it holds the teardown of every pod. Host-network pods have no
// network of their own and are not listed.
func (c *Cluster) PodTimes() []PodTime {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PodTime, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p.time())
	}
	return out
}

func (p *Pod) time() PodTime {
	return PodTime{Pod: p.name, Node: p.node.name, Setup: p.setup, Teardown: p.teardown, Phases: p.phases}
}

// Namespaces lists the namespaces the cluster currently owns.
func (c *Cluster) Namespaces() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.created...)
}

var _ engine.Node = (*Node)(nil)
var _ engine.Pod = (*Pod)(nil)

// Scale implements engine.Cluster.
func (c *Cluster) Scale(ctx context.Context, r int) ([]engine.Pod, []engine.Pod, error) {
	s, cl, err := c.ScalePods(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	return podList(s), podList(cl), nil
}

func podList(ps []*Pod) []engine.Pod {
	out := make([]engine.Pod, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

var _ engine.Cluster = (*Cluster)(nil)

// Datapath is the datapath the cluster was built with: knobs reach a
// datapath's own tables through it (the cilium datapath's Services).
func (c *Cluster) Datapath() datapath.Datapath { return c.cfg.Datapath }

// Daemons lists the processes the datapath runs (flanneld, etcd), if any.
func (c *Cluster) Daemons() []datapath.Daemon {
	if d, ok := c.cfg.Datapath.(datapath.Daemons); ok {
		return d.Daemons()
	}
	return nil
}
