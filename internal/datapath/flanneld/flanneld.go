// Package flanneld runs the real Flannel: flanneld (built by
// scripts/build-flanneld.sh) on every emulated node with Debian's etcd as
// its subnet store, as seed 003 did. Its default backend is UDP, the
// flannel-udp datapath; the same machinery with the vxlan and host-gw
// backends is the flanneld implementation of flannel-vxlan and of bridge
// (flannel-hostgw): NewWithBackend("vxlan"), NewWithBackend("host-gw").
//
// Design notes:
//   - One etcd per run, in the first node's namespace, listening only on
//     that node's underlay address (clients) and its loopback (peers); its
//     data dir is in the run's temporary directory. Before any flanneld
//     starts, the network config {"Network":"10.244.0.0/16","Backend":
//     {"Type":"udp","Port":8285}} goes to /coreos.com/network/config.
//   - flanneld runs inside each node namespace with --iface=eth1
//     --ip-masq=false --iptables-forward-rules=false (no netfilter rule:
//     the knob netfilter writes Flannel's) and its own subnet.env. It
//     leases a /24 (chosen by flanneld, so it differs between runs),
//     creates the TUN device flannel0 and the route 10.244.0.0/16 dev
//     flannel0, and moves every packet to and from the other nodes
//     through user space, UDP 8285.
//   - Pods are wired as Flannel's CNI plugin delegating to the bridge
//     plugin does (cnibridge.AttachFlannel): bridge cni0 with the lease's
//     .1/24, a veth per pod, the pod's eth0 with a /24 address, a default
//     route and a route to 10.244.0.0/16 via .1.
//   - MTU: FLANNEL_MTU from subnet.env (underlay - 28 for UDP: 1472),
//     unless PodMTU sets it (seed 003 used 1450 for both backends).
//   - The daemons stop with the run (Close); Daemons lists their PIDs so
//     the runner can record their CPU time and memory.
package flanneld

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/datapath/internal/daemon"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

const (
	// Bridge is the bridge the CNI plugin attaches pods to.
	Bridge = "cni0"
	// Network is the cluster network written to etcd.
	Network = "10.244.0.0/16"
	// EtcdPrefix is flanneld's default etcd prefix.
	EtcdPrefix = "/coreos.com/network"
	udpPort    = 8285
	etcdPort   = 2379
	// overheads per backend: outer IPv4 + UDP for udp; + VXLAN + inner
	// Ethernet for vxlan.
	udpOverhead   = 28
	vxlanOverhead = 50
	startTimeout  = 30 * time.Second
	// stopGrace is how long a daemon gets after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
)

var clusterNet = func() *net.IPNet { _, n, _ := net.ParseCIDR(Network); return n }()

// Datapath is flannel-udp (or flannel-vxlan run by flanneld).
type Datapath struct {
	// PodMTU, when non-zero, is the MTU of cni0 and the pods; otherwise
	// flanneld's FLANNEL_MTU is used.
	PodMTU int
	// Flanneld and Etcd are the programs to run; empty means look them up
	// (probe.FlanneldPath, then PATH).
	Flanneld, Etcd string

	backend string // "udp" or "vxlan"

	mu        sync.Mutex
	dir       string
	etcd      *daemon.Daemon
	etcdURL   string
	flannelds []*daemon.Daemon
	leases    map[string]lease // by node namespace
}

// New returns flannel-udp.
func New() *Datapath { return NewWithBackend("udp") }

// NewWithBackend returns flanneld with the given backend: "udp",
// "vxlan" (the flanneld implementation of flannel-vxlan) or "host-gw"
// (of bridge, a.k.a. flannel-hostgw).
func NewWithBackend(backend string) *Datapath {
	return &Datapath{backend: backend, leases: map[string]lease{}}
}

// Name implements datapath.Datapath.
func (d *Datapath) Name() string { return "flannel-" + d.backend }

// Features implements datapath.Datapath. Every backend needs
// br_netfilter: flanneld (v0.28.4, main.go:285-291) stats
// /proc/sys/net/bridge/bridge-nf-call-iptables in its node's namespace at
// start and exits 1 ("Failed to check br_netfilter") when it is missing
// (its README: "Flannel requires the br_netfilter module to start").
func (d *Datapath) Features() []string {
	f := []string{probe.Veth, probe.Bridge, probe.BrNetfilter}
	switch d.backend {
	case "udp":
		f = append(f, probe.Tun)
	case "vxlan":
		f = append(f, probe.Vxlan)
	}
	return append(f, probe.ToolFlanneld, probe.ToolEtcd)
}

// Tunnel implements datapath.Datapath.
func (d *Datapath) Tunnel() string {
	switch d.backend {
	case "vxlan":
		return "flannel.1"
	case "udp":
		return "flannel0"
	}
	return ""
}

// PodBridge implements datapath.Datapath: cni0, whatever the backend.
func (*Datapath) PodBridge() string { return Bridge }

// Devices implements datapath.Datapath: cni0, the pods' veths and the
// backend's tunnel, flanneld's own (none for host-gw).
func (d *Datapath) Devices() []string {
	if t := d.Tunnel(); t != "" {
		return cnibridge.Devices(t)
	}
	return cnibridge.Devices()
}

// SetMTU implements datapath.MTUSetter (the study's mtu: cni0, the pods
// and flanneld's lease).
func (d *Datapath) SetMTU(mtu int) { d.PodMTU = mtu }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int {
	if d.PodMTU > 0 {
		return d.PodMTU
	}
	switch d.backend {
	case "vxlan":
		return underlay - vxlanOverhead
	case "udp":
		return underlay - udpOverhead
	}
	return underlay
}

// Daemons implements datapath.Daemons.
func (d *Datapath) Daemons() []datapath.Daemon {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []datapath.Daemon
	if d.etcd != nil {
		out = append(out, datapath.Daemon{Name: "etcd", Node: d.etcd.Node(), PID: d.etcd.PID()})
	}
	for _, f := range d.flannelds {
		out = append(out, datapath.Daemon{Name: "flanneld", Node: f.Node(), PID: f.PID()})
	}
	return out
}

// PacketProcesses implements datapath.PacketProcesses: the UDP backend's
// flanneld moves every packet between flannel0 and its UDP socket in user
// space; the vxlan and host-gw backends leave packets to the kernel.
func (d *Datapath) PacketProcesses() []string {
	if d.backend == "udp" {
		return []string{"flanneld"}
	}
	return nil
}

// FindFlanneld returns the flanneld binary cnibench would run.
func FindFlanneld() (string, error) {
	if p := os.Getenv("CNIBENCH_FLANNELD"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(probe.FlanneldPath); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("flanneld"); err == nil {
		return p, nil
	}
	return "", errors.New("flanneld not found in " + probe.FlanneldPath + " or PATH; build it with scripts/build-flanneld.sh")
}

func (d *Datapath) binaries() (flanneld, etcd string, err error) {
	flanneld, etcd = d.Flanneld, d.Etcd
	if flanneld == "" {
		if flanneld, err = FindFlanneld(); err != nil {
			return "", "", err
		}
	}
	if etcd == "" {
		if etcd, err = exec.LookPath("etcd"); err != nil {
			return "", "", errors.New("etcd not found in PATH; apt-get install etcd-server")
		}
	}
	return flanneld, etcd, nil
}

// SetupNode starts etcd (first node) and flanneld, waits for flanneld's
// lease, and creates cni0 for it.
// Equivalent to (first node only):
//
//	ip netns exec NODE etcd --data-dir TMP/etcd --listen-client-urls http://UNDERLAY_IP:2379 ...
//	etcdctl put /coreos.com/network/config '{"Network":"10.244.0.0/16","Backend":{"Type":"udp","Port":8285}}'
//
// then on every node:
//
//	ip netns exec NODE flanneld --etcd-endpoints http://ETCD:2379 --iface eth1 --ip-masq=false --iptables-forward-rules=false --subnet-file TMP/subnet-NODE.env
//	ip link add cni0 mtu MTU type bridge; ip addr add FLANNEL_SUBNET dev cni0; ip link set cni0 up
//	sysctl net.ipv4.ip_forward=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	flanneld, etcd, err := d.binaries()
	if err != nil {
		return err
	}
	if n.Index == 0 {
		// A new cluster: if the engine reuses this value without closing
		// it, stop the previous cluster's daemons first.
		if err := d.Close(); err != nil {
			return err
		}
	}
	d.mu.Lock()
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "cnibench-flannel-")
		if err != nil {
			d.mu.Unlock()
			return err
		}
		d.dir = dir
	}
	dir, needEtcd := d.dir, d.etcd == nil
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if needEtcd {
		if err := d.startEtcd(ctx, etcd, n); err != nil {
			return err
		}
	}
	subnetFile := filepath.Join(dir, "subnet-"+n.Name+".env")
	f, err := daemon.Start(n.Netns, n.Name, dir, flanneldArgv(flanneld, d.etcdURL, n.Underlay, subnetFile))
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.flannelds = append(d.flannelds, f)
	d.mu.Unlock()
	l, err := waitLease(ctx, f, subnetFile)
	if err != nil {
		return err
	}
	if d.PodMTU > 0 {
		l.mtu = d.PodMTU
	}
	d.mu.Lock()
	d.leases[n.Netns] = l
	d.mu.Unlock()

	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: wire.Attrs(Bridge, l.mtu)}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("ip link add %s type bridge on %s: %w", Bridge, n.Name, err)
	}
	bl, err := wire.Up(h, Bridge)
	if err != nil {
		return err
	}
	ones, _ := l.subnet.Mask.Size()
	if err := wire.AddrAdd(h, bl, l.gw, ones); err != nil {
		return err
	}
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// flanneldArgv is the command line of one node's flanneld. It writes no
// netfilter rule: --ip-masq=false leaves out FLANNEL-POSTRTG, and
// --iptables-forward-rules=false the FORWARD jump to FLANNEL-FWD and its
// two accepts, which flanneld otherwise installs by default (v0.28.4
// main.go:135, flag default true; main.go:435-440 calls
// trafficmngr/iptables/iptables.go SetupAndEnsureForwardRules, which
// re-adds them every --iptables-resync seconds). A node's netfilter
// state is the knob netfilter's alone, as with the in-process
// datapaths: with {cni: flannel} it writes Flannel's rules once, below
// kube-proxy's hooks, instead of a second FLANNEL-FWD jump above them.
func flanneldArgv(flanneld, etcdURL, underlay, subnetFile string) []string {
	return []string{flanneld,
		"--etcd-endpoints=" + etcdURL, "--etcd-prefix=" + EtcdPrefix,
		"--iface=" + underlay, "--ip-masq=false", "--iptables-forward-rules=false",
		"--subnet-file=" + subnetFile}
}

// ConnectNodes waits until every node's lease is in etcd: flanneld learns
// the others' leases by watching etcd (the UDP backend keeps its routes
// in user space), so nothing is programmed here.
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	if len(nodes) == 0 {
		return nil
	}
	d.mu.Lock()
	ns, url := d.etcdNetns(nodes), d.etcdURL
	d.mu.Unlock()
	c := newEtcdClient(ns, url)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		n, err := c.countPrefix(ctx, EtcdPrefix+"/subnets/")
		if err == nil && n >= len(nodes) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d flannel leases in etcd after %s (last error: %v)", n, len(nodes), startTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if d.backend != "udp" {
		// flanneld programs a route per remote lease (on flannel.1 for
		// vxlan, on the underlay for host-gw): wait for them, so the first
		// packet finds its way.
		for _, n := range nodes {
			dev := d.Tunnel()
			if dev == "" {
				dev = n.Underlay
			}
			if err := waitRoutes(ctx, n, dev, len(nodes)-1); err != nil {
				return err
			}
		}
	} else {
		// The UDP backend keeps its routes in user space, out of sight;
		// its watchers see the last lease within milliseconds.
		time.Sleep(300 * time.Millisecond)
	}
	for _, f := range d.flannelds {
		if ok, _ := f.Exited(); ok {
			return f.ErrExited()
		}
	}
	return nil
}

// AttachPod wires one pod to cni0 as Flannel's CNI plugin has the bridge
// plugin do it, with the node's lease and FLANNEL_MTU
// (cnibridge.AttachFlannel).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	l, err := d.lease(n)
	if err != nil {
		return datapath.Attachment{}, err
	}
	return cnibridge.AttachFlannel(n, p, l.subnet, l.mtu)
}

// CNIPlugins implements datapath.CNIDelegate.
func (*Datapath) CNIPlugins() []string { return cnibridge.FlannelCNIPlugins() }

// CNIConfig implements datapath.CNIDelegate: what Flannel's CNI plugin,
// reading flanneld's subnet.env, hands the bridge plugin on node n
// (cnibridge.FlannelCNIConfig with the lease and FLANNEL_MTU, or PodMTU).
func (d *Datapath) CNIConfig(n datapath.Node) ([]byte, error) {
	l, err := d.lease(n)
	if err != nil {
		return nil, err
	}
	return cnibridge.FlannelCNIConfig(l.subnet, l.mtu)
}

// Close stops every flanneld, then etcd, and removes the temporary
// directory (etcd's data, subnet files, logs). Idempotent.
func (d *Datapath) Close() error {
	d.mu.Lock()
	fs, e, dir := d.flannelds, d.etcd, d.dir
	d.flannelds, d.etcd, d.dir = nil, nil, ""
	d.leases = map[string]lease{}
	d.mu.Unlock()
	var errs []error
	for _, f := range fs {
		if err := f.Stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if e != nil {
		if err := e.Stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if dir != "" && os.Getenv("CNIBENCH_KEEP_FLANNEL_DIR") == "" {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitRoutes waits until dev on node n has at least want routes into
// the cluster network via a gateway.
func waitRoutes(ctx context.Context, n datapath.Node, dev string, want int) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	got := 0
	for {
		if l, err := h.LinkByName(dev); err == nil {
			if rs, err := h.RouteList(l, netlink.FAMILY_V4); err == nil {
				got = 0
				for _, r := range rs {
					if r.Gw != nil && r.Dst != nil && clusterNet.Contains(r.Dst.IP) {
						got++
					}
				}
				if got >= want {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("flanneld on %s programmed %d of %d routes on %s in %s", n.Name, got, want, dev, startTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
