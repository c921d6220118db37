// Package probe finds out, at run time, which kernel features, tools and
// privileges this machine has, by trying them: `cnibench doctor` prints
// the table, and datapaths call Require to refuse, with a reason, to run
// on a kernel that lacks what they need.
//
// Design notes: kernel features are probed by doing the real thing in a
// scratch network namespace (ScratchName: "cnbprobe-PID-START-TAG") that is always deleted
// afterwards, so nothing a probe makes outlives it: a device of each kind
// is created and deleted, each qdisc added and removed, BPF programs
// loaded and a trivial one attached, rule sets checked. Config files and
// module lists lie (built-in modules, missing /lib/modules, containers);
// trying does not. Trying does change the host in one way: creating a
// device, qdisc, rule or set lets the kernel auto-load the module it
// needs, as `ip link add` would, and the module stays loaded; a few add
// devices to the host's namespace until unloaded (hostEffects: tunl0;
// gre0, gretap0, erspan0; ifb0, ifb1; dummy0), and the Open vSwitch
// probe runs modprobe openvswitch (tryOVS). HostChanges says what a
// dry run's probes loaded; docs/safety.md lists the effects. A sysctl
// value's probe loads the value's module as the tuning's write would
// (sch_KIND when it adds the qdisc, tcp_ALGO when it writes the
// congestion control). Where a module must not be loaded by a probe
// (ip_vs before Linux 5.16, pktgen, and a congestion control before
// 4.15, whose sysctl is global), modprobe -n is asked instead.
package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kernel features.
const (
	Veth      = "veth"
	Bridge    = "bridge"
	Vxlan     = "vxlan"
	Macvlan   = "macvlan"
	IPVlan    = "ipvlan"
	IPIP      = "ipip"
	GRE       = "gre"
	Geneve    = "geneve"
	WireGuard = "wireguard"
	Tun       = "tun"
	Netem     = "netem"
	IFB       = "ifb" // an ifb device and redirection to it (ingress qdisc, u32, mirred): ingress impairments
	TBF       = "tbf"
	HTB       = "htb"
	ClsBPF    = "cls_bpf"
	// CiliumBPF is what the cilium datapath's tc BPF object needs beyond
	// ClsBPF: its helpers (bpf_redirect_peer, Linux 5.10), map types and
	// read-only global variables (ciliumbpf.go).
	CiliumBPF   = "cilium-bpf"
	OpenvSwitch = "openvswitch"
	// IPVS is the kernel's layer-4 load balancer (ip_vs), the Service
	// proxy of kube-router and of kube-proxy's ipvs mode.
	IPVS = "ipvs"
	// Iptables, NFTables, Dummy and IPSet are what a datapath's netfilter
	// state writes (netfilter.go): iptables rules of the matches every
	// CNI uses, kube-proxy's nftables table, and an IPVS proxy's dummy
	// device (kube-ipvs0, kube-dummy-if) and ipsets.
	Iptables = "iptables"
	NFTables = "nftables"
	Dummy    = "dummy"
	IPSet    = "ipset"
	// SocketLB is socket-level Service translation (cgroup connect4 BPF
	// programs as bpf_links, netns cookies): Cilium's kube-proxy
	// replacement, kubeProxy: cilium.
	SocketLB = "socket-lb"
	RPS      = "rps"
	RFS      = "rfs"
	// CPUIdle is the per-state cpuidle files a cpuIdle tuning writes.
	CPUIdle = "cpuidle"
	// PacketGen is the kernel's packet generator, a UDP workload's
	// sender: pktgen (probed by Pktgen, without loading it).
	PacketGen = "pktgen"
	// BrNetfilter is bridge netfilter in a node's namespace
	// (BrNetfilterSysctl): flanneld will not start without it, and
	// kube-router and weave-kube load it and turn it on.
	BrNetfilter = "br_netfilter"
)

// Tools.
const (
	// The workload tools' programs are not here: the drivers describe
	// them (workload/spec) and doctor probes them with Programs.
	ToolEthtool  = "ethtool"
	ToolChromium = "chromium" // optional: report screenshots
	// ToolFlanneld and ToolEtcd are the real Flannel daemon and its subnet
	// store, for the flannel-udp datapath (optional).
	ToolFlanneld = "flanneld"
	ToolEtcd     = "etcd"
	// ToolOvsDpctl programs the Open vSwitch kernel datapath, for the ovs
	// datapath and weave's OVS mode (optional).
	ToolOvsDpctl = "ovs-dpctl"
	// ToolIptablesRestore installs network-policy rule sets and a
	// datapath's netfilter state (optional).
	ToolIptablesRestore = "iptables-restore"
	// ToolIptablesSave reads a node's rules back: the netfilter state's
	// snapshot, which puts each node's tables back after a replica
	// count (optional).
	ToolIptablesSave = "iptables-save"
	// ToolNft loads kube-proxy's nftables mode (optional).
	ToolNft = "nft"
	// ToolBird is the BIRD 2 routing daemon that distributes calico-routed's
	// and kube-router's routes by BGP with `implementation: bird` (optional).
	ToolBird = "bird"
)

// FlanneldPath is where scripts/build-flanneld.sh installs flanneld; it
// is looked for there when it is not in PATH.
const FlanneldPath = "/usr/local/lib/cnibench/flanneld"

// Privileges.
const (
	Root        = "root"
	CapNetAdmin = "CAP_NET_ADMIN"
	CapSysAdmin = "CAP_SYS_ADMIN"
)

// Result kinds.
const (
	KindKernel    = "kernel"
	KindTool      = "tool"
	KindPrivilege = "privilege"
	// KindCNIPlugin marks the reference CNI plugins (containernetworking-
	// plugins), which wiring cni runs as a container runtime does.
	KindCNIPlugin = "cni-plugin"
)

// Result is the outcome of one probe.
type Result struct {
	Name string
	Kind string // KindKernel, KindTool or KindPrivilege
	OK   bool
	// Detail says why not when !OK ("creating an ipip device failed:
	// operation not supported (kernel lacks the ipip module)"), and notes
	// such as a tool's version and path when OK.
	Detail string
	// Optional marks what only some features of cnibench use.
	Optional bool
}

// KernelFeatures lists the kernel features in the order Run reports them.
func KernelFeatures() []string {
	return []string{Veth, Bridge, Vxlan, Macvlan, IPVlan, IPIP, GRE, Geneve, WireGuard, Tun,
		Netem, IFB, TBF, HTB, ClsBPF, CiliumBPF, OpenvSwitch, IPVS, Iptables, NFTables, Dummy, IPSet, SocketLB, RPS, RFS, CPUIdle, PacketGen, BrNetfilter}
}

// cache holds what this process has probed: features do not change
// while cnibench runs, and probing takes a second or two. A run probes
// only what its study needs (Require, Has); doctor probes everything (Run).
var cache struct {
	sync.Mutex
	byName map[string]Result
	all    []Result // the first complete Run, nil before
	// kernelTried lists the kernel features probed, in order: probing
	// some (ipip, gre) loads modules whose fallback devices appear in
	// every namespace, so a test checks that a run tried only its own.
	kernelTried []string
}

// Run probes everything once per process and returns the results:
// privileges, then kernel features, then tools, then the reference CNI
// plugins. A cancelled run is not
// cached. The caller may modify the returned slice.
func Run(ctx context.Context) []Result {
	cache.Lock()
	defer cache.Unlock()
	if cache.all == nil {
		r := probeAll(ctx)
		if ctx.Err() != nil {
			return r
		}
		cache.all = r
		remember(r)
	}
	return slices.Clone(cache.all)
}

func probeAll(ctx context.Context) []Result {
	priv := privileges()
	out := slices.Clone(priv)
	out = append(out, kernel(ctx, priv, nil)...)
	out = append(out, tools(ctx)...)
	return append(out, cniProbes(ctx)...)
}

// remember caches results; cache is locked.
func remember(res []Result) {
	if cache.byName == nil {
		cache.byName = map[string]Result{}
	}
	for _, r := range res {
		cache.byName[r.Name] = r
	}
}

// probeNames returns the results for names, probing only those not
// probed yet; names cnibench does not probe are left out.
func probeNames(ctx context.Context, names []string) []Result {
	cache.Lock()
	defer cache.Unlock()
	var missing []string
	for _, n := range names {
		if _, ok := cache.byName[n]; !ok && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		r := probeSome(ctx, missing)
		if ctx.Err() != nil {
			return r
		}
		remember(r)
	}
	out := make([]Result, 0, len(names))
	for _, n := range names {
		if r, ok := cache.byName[n]; ok {
			out = append(out, r)
		}
	}
	return out
}

// probeSome probes the named privileges, kernel features, tools and CNI
// plugins, and nothing else: a kernel feature is tried only when asked
// for.
func probeSome(ctx context.Context, names []string) []Result {
	priv := privileges()
	var out []Result
	var kern []string
	for _, n := range names {
		if i := slices.IndexFunc(priv, func(r Result) bool { return r.Name == n }); i >= 0 {
			out = append(out, priv[i])
			continue
		}
		if _, ok := sysctlValueProbe(n); ok || slices.Contains(KernelFeatures(), n) {
			kern = append(kern, n)
			continue
		}
		if i := slices.IndexFunc(toolSpecs, func(t toolSpec) bool { return t.name == n }); i >= 0 {
			out = append(out, probeTool(ctx, toolSpecs[i]))
			continue
		}
		if p, ok := strings.CutPrefix(n, "cni-"); ok && slices.Contains(cniPlugins, p) {
			out = append(out, probeCNIPlugin(ctx, p, CNIPath()))
		}
		if strings.HasPrefix(n, sysctlPrefix) {
			out = append(out, probeSysctl(n))
		}
	}
	if len(kern) > 0 {
		out = append(out, kernel(ctx, priv, kern)...)
	}
	return out
}

// KernelTried returns the kernel features this process has probed, in
// order.
func KernelTried() []string {
	cache.Lock()
	defer cache.Unlock()
	return slices.Clone(cache.kernelTried)
}

// Has reports whether the named feature, tool or privilege is available,
// and the detail of its probe.
func Has(name string) (bool, string) {
	for _, r := range probeNames(context.Background(), []string{name}) {
		if r.Name == name {
			return r.OK, r.Detail
		}
	}
	return false, fmt.Sprintf("%q is not something cnibench probes", name)
}

// ErrUnsupported is wrapped by every *UnsupportedError, for errors.Is.
var ErrUnsupported = errors.New("not supported on this machine")

// UnsupportedError names a missing feature and why it is missing.
type UnsupportedError struct {
	Name   string
	Kind   string
	Reason string
}

func (e *UnsupportedError) Error() string {
	switch e.Kind {
	case KindTool:
		return fmt.Sprintf("tool %s is not available: %s", e.Name, e.Reason)
	case KindPrivilege:
		return fmt.Sprintf("cnibench lacks %s: %s", e.Name, e.Reason)
	case KindCNIPlugin:
		return fmt.Sprintf("CNI plugin %s is not available: %s", strings.TrimPrefix(e.Name, "cni-"), e.Reason)
	}
	return fmt.Sprintf("kernel feature %s is not available: %s", e.Name, e.Reason)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Require returns an *UnsupportedError for the feature of features that
// is missing (several joined in one error, one sentence each on one
// line: a refusal that named only the first would refuse again once that
// one was loaded), or nil when all are there. It probes only features
// (and what this process probed before), never the rest: a plain run
// must not load tunnel modules its study does not use.
func Require(features ...string) error {
	return require(probeNames(context.Background(), features), features)
}

func require(results []Result, features []string) error {
	var missing []error
	for _, f := range features {
		i := slices.IndexFunc(results, func(r Result) bool { return r.Name == f })
		if i < 0 {
			return fmt.Errorf("probe: unknown feature %q", f)
		}
		if r := results[i]; !r.OK {
			missing = append(missing, &UnsupportedError{Name: r.Name, Kind: r.Kind, Reason: r.Detail})
		}
	}
	return Missing(missing)
}

// Missing is the refusal of these missing features: nil for none, the
// one itself, or several as one error (missingFeatures).
func Missing(missing []error) error {
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return missing[0]
	}
	return missingFeatures(missing)
}

// missingFeatures are several *UnsupportedError of one Require: errors.As
// finds the first, errors.Is ErrUnsupported, and the message keeps each
// one's sentence, "; "-joined on one line (errors.Join's newlines would
// break the one-line refusals the runner prints).
type missingFeatures []error

func (m missingFeatures) Error() string {
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (m missingFeatures) Unwrap() []error { return m }
