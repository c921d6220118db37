package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/tune"
)

// What a session reads on its node: devices the controller names, their
// counters, perf windows, host-side veths, CNI config and node facts, and
// nodeFS, which enters pods' namespaces by reference.

// resolveIfaces maps devices named by the controller ("pod:NS/NAME")
// to namespaces this agent can enter.
func (s *Server) resolveIfaces(ifs []netns.Iface) ([]netns.Iface, error) {
	out := make([]netns.Iface, len(ifs))
	for i, ifc := range ifs {
		name, err := s.fs.resolve(ifc.Netns, tune.FSSysfs)
		if err != nil {
			// err names the pod (or the foreign netns) already.
			return nil, fmt.Errorf("device %s: %w", ifc.Name, err)
		}
		out[i] = netns.Iface{Netns: name, Name: ifc.Name}
	}
	return out, nil
}

func (s *Server) ifStats(ifs []netns.Iface) ([]ifstats.Counters, error) {
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return nil, err
	}
	out := make([]ifstats.Counters, len(res))
	for i, ifc := range res {
		if out[i], err = s.cfg.IfStats(ifc); err != nil {
			return nil, fmt.Errorf("counters of %s of %s: %w", ifs[i].Name, where(ifs[i].Netns), err)
		}
	}
	return out, nil
}

// where names a namespace as the controller did: the node, or the pod
// (not the /proc/PID/ns/net path the agent resolved it to, which the
// controller never saw).
func where(ns string) string {
	if ns == "" {
		return "the node"
	}
	if pod, ok := strings.CutPrefix(ns, PodNetnsPrefix); ok {
		return "pod " + pod
	}
	return fmt.Sprintf("netns %q", ns)
}

// cppStart starts perf on this node for one window; packets are counted
// on ifs (the measured server pods' eth0), and the samples of procs (the
// datapath's per-packet processes) with the workload's.
func (s *Server) cppStart(ifs []netns.Iface, procs []string) error {
	if s.cpp != nil && !s.cppStopped {
		return errors.New("cpu cost per packet: a window is already open")
	}
	if s.cpp != nil {
		// The last window was stopped and never reported (its report
		// call failed): it is no use now.
		s.cpp.Close()
		s.cpp, s.cppStopped = nil, false
	}
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return err
	}
	rec, err := s.cfg.CPP(res, procs)
	if err != nil {
		return err
	}
	if err := rec.Start(context.Background()); err != nil {
		return err
	}
	s.cpp = rec
	return nil
}

// ErrNoHostPeer is a pod device with no host-side peer on the node: a
// macvlan or ipvlan child (its iflink is the node's uplink, or a VLAN
// on it), a device moved into the pod whole (an SR-IOV VF; its iflink
// is its own ifindex), a veth whose peer is in another namespace. The
// kube engine leaves such pods out of HostVeths, as the local engine
// does.
var ErrNoHostPeer = errors.New("no host-side peer on the node")

// hostVeth finds the host-side peer of a pod's device: the node device
// whose ifindex is the pod device's iflink and whose iflink is the pod
// device's ifindex, and that is stacked on no other device. Ifindexes
// are per namespace, so one number alone matched whatever node device
// held it (a VF's own number, a macvlan's uplink), and a tuning or
// netem went on that device; the two ends of a veth (or netkit) pair
// name each other. So do, by coincidence, a macvlan child of a VLAN
// made in the pod (ifindex 2 there, lo being 1; iflink the VLAN's) and
// the VLAN, whose iflink is its lower device's ifindex, the uplink's 2
// (net/8021q/vlan_dev.c:754 vlan_dev_get_iflink in Linux 6.12). Hence
// the stacking check (stackedOn), which uses sysfs as the rest of this
// file does: the agent reads the node through its FS, which the tests
// model, not netlink, where a link's kind would be the check.
func (s *Server) hostVeth(ns, iface string) (string, error) {
	if iface == "" {
		iface = "eth0"
	}
	idx, peer, err := s.ifLink(ns, iface)
	if err != nil {
		return "", err
	}
	if idx == peer {
		return "", fmt.Errorf("%s of %s links to no other device (its iflink is its own ifindex %d: a device moved into the pod whole): %w",
			iface, where(ns), idx, ErrNoHostPeer)
	}
	devs, err := s.fs.List("", tune.FSSysfs, "class/net")
	if err != nil {
		return "", err
	}
	for _, d := range devs {
		di, dl, err := s.ifLink("", d)
		if err != nil || di != peer || dl != idx {
			continue
		}
		lower, err := s.stackedOn(d)
		if err != nil {
			return "", err
		}
		if lower != "" {
			return "", fmt.Errorf("%s of %s and the node's %s link to each other's ifindex, but %s is stacked on %s "+
				"(a VLAN, macvlan or ipvlan, whose iflink is its lower device's; %s of %s is likely a macvlan or ipvlan child of it, not a veth's end): %w",
				iface, where(ns), d, d, lower, iface, where(ns), ErrNoHostPeer)
		}
		return d, nil
	}
	return "", fmt.Errorf("%s of %s links to ifindex %d, and no device of the node with that ifindex links back to its ifindex %d "+
		"(a macvlan or ipvlan child, or a peer in another namespace): %w", iface, where(ns), peer, idx, ErrNoHostPeer)
}

// stackedOn names a device the node's dev is stacked on ("" for none):
// the kernel links each lower device of dev as lower_NAME in dev's sysfs
// directory when both are in one namespace (net/core/dev.c:7898
// netdev_adjacent_sysfs_add, :7920 netdev_adjacent_is_neigh_list, Linux
// 6.12). A VLAN (net/8021q/vlan.c:184), macvlan
// (drivers/net/macvlan.c:1550) or ipvlan
// (drivers/net/ipvlan/ipvlan_main.c:624) has one; a veth or netkit has
// none, as veth_newlink and netkit_new_link make no adjacency between
// the peers (drivers/net/veth.c:1822, drivers/net/netkit.c:344: no
// netdev_upper_dev_link in either file). A bridge's or bond's port has
// upper_*, which does not refuse it. Left through: an IP tunnel bound to
// a device (gretap ... dev X) links to it by iflink
// (net/ipv4/ip_tunnel.c:1113) without an adjacency.
func (s *Server) stackedOn(dev string) (string, error) {
	ents, err := s.fs.List("", tune.FSSysfs, path.Join("class/net", dev))
	if err != nil {
		return "", fmt.Errorf("the sysfs directory of the node's %s (its lower devices): %w", dev, err)
	}
	for _, e := range ents {
		if lower, ok := strings.CutPrefix(e, "lower_"); ok {
			return lower, nil
		}
	}
	return "", nil
}

// ifLink reads a device's ifindex and iflink (the ifindex of the device
// it links to; its own where it links to none).
func (s *Server) ifLink(ns, dev string) (index, link int, err error) {
	var v [2]int
	for i, f := range []string{"ifindex", "iflink"} {
		raw, err := s.fs.Read(ns, tune.FSSysfs, path.Join("class/net", dev, f))
		if err != nil {
			return 0, 0, err
		}
		if v[i], err = strconv.Atoi(strings.TrimSpace(raw)); err != nil {
			return 0, 0, fmt.Errorf("%s of %s of %s: %w", f, dev, where(ns), err)
		}
	}
	return v[0], v[1], nil
}

// nodeFS resolves pod namespace references before using the base FS.
type nodeFS struct {
	base tune.FS
	pods PodResolver
	host *hostProc // nil: /proc/sys as this process sees it
	// applyNetem and revertNetem are impair's Apply (ApplyIngress for
	// ingress) and Revert when nil; tests in this package record the
	// calls instead of changing a kernel.
	applyNetem  func(ns, dev string, s impair.Spec, ingress bool, record func(impair.Prev) error) (impair.Prev, error)
	revertNetem func(impair.Prev) error
}

func (f *nodeFS) resolve(ns, fsKind string) (string, error) {
	if ns == "" {
		return "", nil
	}
	pod, ok := strings.CutPrefix(ns, PodNetnsPrefix)
	if !ok {
		return "", fmt.Errorf("netns %q: the agent knows the node (\"\") and pods (%sNS/NAME): %w", ns, PodNetnsPrefix, tune.ErrBadPath)
	}
	name, err := f.pods.Netns(pod)
	if err != nil {
		return "", err
	}
	return name, nil
}

// podOpener pins a pod's namespace for one access (ProcPods.Open).
type podOpener interface {
	Open(pod string) (ref string, release func(), err error)
}

// open is resolve for one knob access: a resolver that can pin the
// namespace does, so the knob is read or written in the namespace that
// was checked, not whatever holds the PID by the time it is entered.
func (f *nodeFS) open(ns, fsKind string) (string, func(), error) {
	o, ok := f.pods.(podOpener)
	pod, isPod := strings.CutPrefix(ns, PodNetnsPrefix)
	if !ok || !isPod {
		name, err := f.resolve(ns, fsKind)
		return name, func() {}, err
	}
	return o.Open(pod)
}

func (f *nodeFS) Read(ns, fsKind, p string) (string, error) {
	name, release, err := f.open(ns, fsKind)
	if err != nil {
		return "", err
	}
	defer release()
	var v string
	err = f.proc(ns, fsKind, func() (err error) { v, err = f.base.Read(name, fsKind, p); return err })
	return v, inPod(ns, err)
}

func (f *nodeFS) Write(ns, fsKind, p, v string) error {
	name, release, err := f.open(ns, fsKind)
	if err != nil {
		return err
	}
	defer release()
	return inPod(ns, f.proc(ns, fsKind, func() error { return f.base.Write(name, fsKind, p, v) }))
}

func (f *nodeFS) List(ns, fsKind, dir string) ([]string, error) {
	name, release, err := f.open(ns, fsKind)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []string
	err = f.proc(ns, fsKind, func() (err error) { out, err = f.base.List(name, fsKind, dir); return err })
	return out, inPod(ns, err)
}

// inPod prefixes an error of a pod's namespace with the pod: the base FS
// names only the path it was given. The node's errors say "host"
// already.
func inPod(ns string, err error) error {
	if err == nil || ns == "" {
		return err
	}
	return fmt.Errorf("%s: %w", where(ns), err)
}

func addrDev(ip string) (string, error) {
	want := net.ParseIP(ip)
	if want == nil {
		return "", fmt.Errorf("bad IP %q", ip)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(want) {
				return ifc.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no device of the node holds %s", ip)
}

// readConfDir returns the regular files of dir (at most 64 KiB each).
func readConfDir(dir string) (map[string]string, error) {
	if dir == "" {
		return nil, errors.New("no CNI config dir mounted in the agent")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if len(b) > 64<<10 {
			b = b[:64<<10]
		}
		out[e.Name()] = string(b)
	}
	return out, nil
}

// nodeInfo describes the node: nodeInfo's facts, with the CPU model from
// its /proc/cpuinfo and the NUMA nodes from the host's sysfs (the
// node's, where the agent's own /sys may be a namespace's), which
// env.json records for a kube run in place of the controller's.
func (s *Server) nodeInfo() (*NodeInfo, error) {
	info, err := nodeInfo()
	if err != nil {
		return nil, err
	}
	info.CPUModel = envinfo.CPUModel(path.Join(s.cfg.ProcRoot, "cpuinfo"))
	if t, err := topology.ReadFrom(tune.HostSysfs(s.fs)); err == nil {
		info.NUMANodes = t.Nodes()
	}
	return info, nil
}

func nodeInfo() (*NodeInfo, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	info := &NodeInfo{Hostname: host, Kernel: unix.ByteSliceToString(u.Release[:])}
	// The node's CPU count is its online CPUs, as env.json's cpus of a
	// local run counts the machine: the RPS masks of the node's ends span
	// them (NodeCPUs). The agent's affinity is its pod's share, fewer
	// where a static CPU manager keeps CPUs out of the shared pool.
	if set, err := hostcpus.Online(); err == nil {
		info.CPUs = len(set)
	} else if set, err := hostcpus.Affinity(); err == nil {
		info.CPUs = len(set)
	}
	// The workload pods' pins keep to the cpuset the agent's pod runs in
	// (the node's shared pool), which its own affinity may be narrower than.
	if set, _, err := hostcpus.Allowed(); err == nil {
		info.AllowedCPUs = set.String()
	}
	return info, nil
}

// daemons lists the processes named names (comm) that run in the node's
// network namespace, with their CPU time and memory: a host-network
// daemon of another node sharing this PID namespace is not this node's.
func (s *Server) daemons(names []string) ([]procs.Proc, error) {
	ino, err := procs.NetnsIno(s.cfg.NodeNetns)
	if err != nil {
		return nil, fmt.Errorf("the node's network namespace: %w", err)
	}
	return procs.Find(s.cfg.ProcRoot, names, ino)
}
