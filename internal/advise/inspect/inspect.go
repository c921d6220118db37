// Package inspect reads, and only reads, what decides how fast a node's
// pod network can be: CPUs and NUMA nodes, the NICs with their queues,
// RSS, IRQ affinity, RPS/RFS and offloads, the tunnel, bridge and pod
// devices with their MTUs, the CNI, netfilter and conntrack sizes, root
// qdiscs, busy polling, how the CPUs idle and the kernel. `cnibench advise` turns the
// result into candidate knobs.
//
// Design notes:
//   - The machine is reached through an Env: a root directory holding
//     proc/ and sys/ (and etc/cni/net.d), a Runner for ethtool,
//     iptables-save and nft (argv, never a shell), and qdisc and link
//     kind listers. A
//     test points the root at a fixture and fakes the runner; the kube
//     engine can later give an agent-backed Env for a remote node.
//   - Nothing is fatal. A fact that cannot be read is left at its zero
//     value and its key is recorded in Inspection.Unknown with the reason,
//     so a rule that needs it says "unknown" instead of guessing.
//   - Every reader opens files read-only and runs only listing commands
//     (ethtool -k/-x, iptables-save, nft list); the e2e test checks the
//     host is unchanged after a run.
package inspect

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// Version is the Inspection JSON layout's version.
const Version = 1

// Runner runs a listing command and returns its standard output.
type Runner interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// Env is where an inspection reads from.
type Env struct {
	// Root holds proc/, sys/ and etc/cni/net.d ("/" on a real machine).
	Root string
	// Run runs ethtool, iptables-save and nft; nil records them unknown.
	Run Runner
	// Qdiscs returns each device's root qdisc kind; nil records qdiscs
	// unknown.
	Qdiscs func() (map[string]string, error)
	// CNIConfDir, when set, is where the node's CNI configuration is
	// (the agent sees it mounted elsewhere); default Root/etc/cni/net.d.
	CNIConfDir string
	// Sysctl, when set, reads a sysctl by its /proc path
	// ("/proc/sys/net/core/busy_poll"); nil reads Root/proc/sys. The
	// agent reads the host-global ones (InInitNamespace:
	// rps_sock_flow_entries, busy_poll, busy_read) through the init
	// namespace, where alone they exist when it runs in a node's own
	// namespace, and the rest in the node's.
	Sysctl func(path string) (string, error)
	// LinkKinds, when set, returns each device's link kind (`ip -d link`:
	// vti, ipip, ...), which tells devices apart that sysfs shows alike
	// (an IPsec VTI and IP-in-IP are both ARPHRD_TUNNEL); nil leaves it
	// to their names.
	LinkKinds func() (map[string]string, error)
}

// Host is the Env of this machine: its /proc and /sys, commands run with
// exec (no shell), root qdiscs and link kinds from netlink.
func Host() Env {
	return Env{Root: "/", Run: ExecRunner{}, Qdiscs: netlinkQdiscs, LinkKinds: netlinkKinds}
}

// ExecRunner runs commands on this machine, without a shell.
type ExecRunner struct{}

// Run runs argv and returns its stdout; a failure carries stderr's first
// line.
func (ExecRunner) Run(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return out, errors.New(strings.Join(argv, " ") + ": " + msg)
		}
		return out, errors.New(strings.Join(argv, " ") + ": " + err.Error())
	}
	return out, nil
}

// Inspection is what was found. Fields that could not be read keep their
// zero value and are named in Unknown.
type Inspection struct {
	Version int `json:"version"`
	// Source says what machine this is ("this machine" or a fixture's
	// description).
	Source string `json:"source,omitempty"`
	// Record is set where no machine was read, only a run's env.json
	// (FromEnv); nil for an inspection of a machine.
	Record *Record `json:"record,omitempty"`
	Kernel string  `json:"kernel"`
	CPUs   int     `json:"cpus"`
	// OnlineCPUs lists the online CPUs ("0,2-3"): with a CPU offline or
	// hot-removed they are not 0..CPUs-1, and a steering mask must name
	// the ones there are.
	OnlineCPUs string `json:"online_cpus,omitempty"`
	NUMANodes  int    `json:"numa_nodes"`
	// NodeCPUs lists each NUMA node's online CPUs ("8-15"), by node:
	// where a queue's RPS CPUs should come from (scaling.rst). Empty in
	// inspections from before it was read.
	NodeCPUs map[int]string `json:"node_cpus,omitempty"`
	// CoreCPUs lists one online CPU per physical core, the lowest of its
	// SMT siblings: where queue interrupts go (scaling.rst: hyperthreads
	// gain RSS nothing).
	CoreCPUs string `json:"core_cpus,omitempty"`
	// IsolatedCPUs lists the CPUs isolated from the scheduler or run
	// nohz_full (/sys/devices/system/cpu/isolated and nohz_full), the ones
	// irqbalance bans: irq-spread leaves them out.
	IsolatedCPUs string `json:"isolated_cpus,omitempty"`
	// Underlay is the device of the default route.
	Underlay string `json:"underlay,omitempty"`
	// UnderlayLower are the devices at the bottom of the underlay's stack
	// when it is a stacked device: a VLAN's or macvlan's parent, a bond's
	// ports (sysfs lower_* links, followed down). Receive steering,
	// interrupts, GRO and NIC offloads live on those, not on the stacked
	// device: the kernel steers a packet (RPS) on the device it arrived
	// at, before the VLAN tag is taken off. Empty for a plain device.
	UnderlayLower []string `json:"underlay_lower,omitempty"`
	NICs          []NIC    `json:"nics"`
	// Tunnels are overlay devices (vxlan.calico, flannel.1, tunl0...).
	Tunnels []Device `json:"tunnels,omitempty"`
	// Bridges are pod bridges (cni0, kube-bridge, docker0...).
	Bridges []Device `json:"bridges,omitempty"`
	// PodLinks are the host sides of pods' veths, grouped by prefix.
	PodLinks []LinkGroup `json:"pod_links,omitempty"`
	CNI      CNI         `json:"cni"`
	// Sysctls are the integer sysctls read, by dotted name.
	Sysctls   map[string]int64 `json:"sysctls"`
	Netfilter Netfilter        `json:"netfilter"`
	// Qdiscs maps a device to its root qdisc kind.
	Qdiscs map[string]string `json:"qdiscs,omitempty"`
	// CPUIdle is how the CPUs idle (driver, governor, CPU 0's states);
	// nil without a cpuidle driver. IdleQoS is what bounds the states a
	// governor may pick (set with CPUIdle).
	CPUIdle *results.CPUIdle `json:"cpuidle,omitempty"`
	IdleQoS *IdleQoS         `json:"idle_qos,omitempty"`
	// Unknown maps what could not be read to why.
	Unknown map[string]string `json:"unknown,omitempty"`
}

// NIC is a physical network device of the host namespace, or the
// underlay when that is a virtual one (Virtual).
type NIC struct {
	Name string `json:"name"`
	// Virtual marks an underlay without a device behind it (a veth): it
	// has queues, but no interrupts, RSS or NUMA node, and its offloads
	// are software.
	Virtual  bool   `json:"virtual,omitempty"`
	Driver   string `json:"driver,omitempty"`
	MTU      int    `json:"mtu"`
	NUMANode int    `json:"numa_node"` // -1: none reported
	RxQueues int    `json:"rx_queues"`
	TxQueues int    `json:"tx_queues"`
	// Queues holds each rx queue's RPS mask and RFS flow count.
	Queues []RxQueue `json:"queues,omitempty"`
	RSS    *RSS      `json:"rss,omitempty"`
	// Channels are ethtool -l's channel counts; nil where unread.
	Channels *Channels          `json:"channels,omitempty"`
	IRQs     []IRQ              `json:"irqs,omitempty"`
	Offloads map[string]Offload `json:"offloads,omitempty"`
}

// RxQueue is one receive queue's steering state.
type RxQueue struct {
	Name    string `json:"name"`
	RPSCPUs string `json:"rps_cpus"` // hex mask as the kernel prints it
	FlowCnt int    `json:"rps_flow_cnt"`
}

// IRQ is one interrupt of a NIC with the CPUs it may run on.
type IRQ struct {
	IRQ  int    `json:"irq"`
	Name string `json:"name"`
	CPUs string `json:"cpus"` // smp_affinity_list
}

// Device is a virtual device that carries pod traffic.
type Device struct {
	Name string `json:"name"`
	// Kind is vxlan, geneve, ipip, gre, wireguard, udp (a user-space
	// tunnel), vti (IPsec), bridge.
	Kind string `json:"kind"`
	// IPv6 marks a tunnel whose own packets go over IPv6 (a dual-stack
	// node's second device: Calico's vxlan-v6.calico and wg-v6.cali,
	// Flannel's flannel-v6.<VNI> and flannel-wg-v6); their outer header
	// is 20 bytes longer than IPv4's.
	IPv6     bool               `json:"ipv6,omitempty"`
	MTU      int                `json:"mtu"`
	Offloads map[string]Offload `json:"offloads,omitempty"`
}

// LinkGroup summarises pod veths with one name prefix.
type LinkGroup struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
	MinMTU int    `json:"min_mtu"`
	MaxMTU int    `json:"max_mtu"`
}

// CNI is the detected plugin and its mode.
type CNI struct {
	Name     string   `json:"name"`
	Mode     string   `json:"mode,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// Netfilter counts the host namespace's rules. The nft view includes the
// tables iptables-nft manages, so the two views overlap.
type Netfilter struct {
	IptablesChains int `json:"iptables_chains"`
	IptablesRules  int `json:"iptables_rules"`
	NftChains      int `json:"nft_chains"`
	NftRules       int `json:"nft_rules"`
	// KubeProxy is the mode kube-proxy's own tables say it runs in
	// (kubeProxyMode): iptables, ipvs or nftables; empty where none of
	// its tables was seen.
	KubeProxy string `json:"kube_proxy,omitempty"`
}

// Sysctl names read.
const (
	SysRPSSockFlowEntries = "net.core.rps_sock_flow_entries"
	SysBusyPoll           = "net.core.busy_poll"
	SysBusyRead           = "net.core.busy_read"
	SysConntrackMax       = "net.netfilter.nf_conntrack_max"
	SysConntrackCount     = "net.netfilter.nf_conntrack_count"
	SysConntrackBuckets   = "net.netfilter.nf_conntrack_buckets"
)

var sysctls = []string{SysRPSSockFlowEntries, SysBusyPoll, SysBusyRead, SysConntrackMax, SysConntrackCount, SysConntrackBuckets}

// initNamespaceSysctls are those of the sysctls read that exist in the
// init network namespace alone (net_core_table, registered for init_net
// only: net/core/sysctl_net_core.c), which an agent in a node's own
// namespace reads there. The conntrack ones are not: each namespace has
// its own count, which the kernel holds to the max it shows there
// (nf_conntrack_standalone.c), so the node's are read in its namespace.
var initNamespaceSysctls = []string{SysRPSSockFlowEntries, SysBusyPoll, SysBusyRead}

// InInitNamespace reports whether the sysctl at /proc path p
// ("/proc/sys/net/core/busy_poll") is one to read in the init network
// namespace (initNamespaceSysctls).
func InInitNamespace(p string) bool {
	name := strings.ReplaceAll(strings.TrimPrefix(p, "/proc/sys/"), "/", ".")
	return slices.Contains(initNamespaceSysctls, name)
}

// Inspect reads everything it can from env.
func Inspect(ctx context.Context, env Env) *Inspection {
	in := &Inspection{Version: Version, Sysctls: map[string]int64{}, Unknown: map[string]string{}}
	r := reader{env: env, in: in}
	r.kernel()
	r.cpus()
	in.CPUIdle = cpuidle.Machine(sysfs.Dir(r.path("sys")))
	if in.CPUIdle != nil {
		r.idleQoS()
	}
	for _, s := range sysctls {
		r.sysctl(s)
	}
	links := r.links()
	r.kinds = r.linkKinds()
	r.underlay()
	irqs, irqErr := r.interrupts()
	for _, l := range links {
		r.classify(ctx, l, irqs, irqErr)
	}
	r.cni(links)
	r.netfilter(ctx, links)
	r.qdiscs()
	if len(in.Unknown) == 0 {
		in.Unknown = nil
	}
	return in
}

// reader carries an inspection in progress.
type reader struct {
	env Env
	in  *Inspection
	// kinds are the devices' link kinds; nil when not known.
	kinds map[string]string
}

func (r reader) path(p string) string { return filepath.Join(r.env.Root, p) }

func (r reader) unknown(key string, err error) {
	r.in.Unknown[key] = err.Error()
}

func (r reader) read(p string) (string, error) {
	b, err := os.ReadFile(r.path(p))
	return strings.TrimSpace(string(b)), err
}

func (r reader) readInt(p string) (int64, error) {
	s, err := r.read(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func (r reader) kernel() {
	s, err := r.read("proc/sys/kernel/osrelease")
	if err != nil {
		r.unknown("kernel", err)
		return
	}
	r.in.Kernel = s
}

// NoConntrack is the reason a conntrack sysctl is unknown when the
// kernel has no such file: nf_conntrack is not loaded, so there is no
// table (advise's conntrack-size does not apply).
const NoConntrack = "no such sysctl (nf_conntrack not loaded)"

func (r reader) sysctl(name string) {
	p := "proc/sys/" + strings.ReplaceAll(name, ".", "/")
	read := r.readInt
	if r.env.Sysctl != nil {
		read = func(p string) (int64, error) {
			s, err := r.env.Sysctl("/" + p)
			if err != nil {
				return 0, err
			}
			return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		}
	}
	v, err := read(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && strings.HasPrefix(name, "net.netfilter.") {
			err = errors.New(NoConntrack)
		}
		r.unknown("sysctl "+name, err)
		return
	}
	r.in.Sysctls[name] = v
}

// links lists the host namespace's devices, sorted.
func (r reader) links() []string {
	ents, err := os.ReadDir(r.path("sys/class/net"))
	if err != nil {
		r.unknown("devices", err)
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func (r reader) cni(links []string) {
	conf := map[string]string{}
	dir := r.path("etc/cni/net.d")
	if r.env.CNIConfDir != "" {
		dir = r.env.CNIConfDir
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.unknown("cni config", err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				conf[e.Name()] = string(b)
			}
		}
	}
	res := detectCNI(conf, links)
	r.in.CNI = CNI{Name: res.Name, Mode: res.Mode, Evidence: res.Evidence}
}

func (r reader) linkKinds() map[string]string {
	if r.env.LinkKinds == nil {
		return nil
	}
	k, err := r.env.LinkKinds()
	if err != nil {
		r.unknown("link kinds", err)
		return nil
	}
	return k
}

func (r reader) qdiscs() {
	if r.env.Qdiscs == nil {
		r.unknown("qdiscs", errors.New("no qdisc reader"))
		return
	}
	q, err := r.env.Qdiscs()
	if err != nil {
		r.unknown("qdiscs", err)
		return
	}
	r.in.Qdiscs = q
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
