package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
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
// on ifs (the measured server pods' eth0).
func (s *Server) cppStart(ifs []netns.Iface) error {
	if s.cpp != nil {
		return errors.New("cpu cost per packet: a window is already open")
	}
	res, err := s.resolveIfaces(ifs)
	if err != nil {
		return err
	}
	rec, err := s.cfg.CPP(res)
	if err != nil {
		return err
	}
	if err := rec.Start(context.Background()); err != nil {
		return err
	}
	s.cpp = rec
	return nil
}

// hostVeth finds the host-side peer of a veth: the device of the node
// whose ifindex is the pod device's iflink.
func (s *Server) hostVeth(ns, iface string) (string, error) {
	if iface == "" {
		iface = "eth0"
	}
	peer, err := s.fs.Read(ns, tune.FSSysfs, path.Join("class/net", iface, "iflink"))
	if err != nil {
		return "", err
	}
	devs, err := s.fs.List("", tune.FSSysfs, "class/net")
	if err != nil {
		return "", err
	}
	for _, d := range devs {
		idx, err := s.fs.Read("", tune.FSSysfs, path.Join("class/net", d, "ifindex"))
		if err == nil && strings.TrimSpace(idx) == strings.TrimSpace(peer) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no device of the node has ifindex %s (peer of %s of %s)", strings.TrimSpace(peer), iface, where(ns))
}

// nodeFS resolves pod namespace references before using the base FS.
type nodeFS struct {
	base tune.FS
	pods PodResolver
	host *hostProc // nil: /proc/sys as this process sees it
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
