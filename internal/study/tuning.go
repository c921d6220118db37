package study

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Tuning is a named set of receive-steering knobs and network sysctls
// applied on the server node (or the client's: Side). It is written either as the name of a
// built-in tuning ("rfs+") or as a mapping that defines one:
//
//   - name: rps-0-2
//     rps: {cpus: "0-2"}
//     pods: true
//   - name: busy
//     sysctls: {net.core.busy_read: 50, net.core.busy_poll: 50}
type Tuning struct {
	Name string `yaml:"name"`
	RPS  *RPS   `yaml:"rps,omitempty"`
	RFS  *RFS   `yaml:"rfs,omitempty"`
	// Pods applies the same knobs inside every server pod's namespace on
	// the pod's eth0 (the paper's "+" variants).
	Pods bool `yaml:"pods,omitempty"`
	// Devices is which of the server node's devices get the knobs:
	// DevicesNode ("" too) the underlay NIC, the tunnel device and the
	// measured pods' host-side veths, as the paper tuned them;
	// DevicesUnderlay the underlay NIC only, as `cnibench advise` advises
	// (its A/B must measure what it advises).
	Devices string `yaml:"devices,omitempty"`
	// Side is which end of each measured pair gets the tuning: the
	// server's (SideServer, "" too: the receiver, as the paper tuned),
	// the client's (SideClient: its node and, with Pods, its pods: where
	// a sender's sysctls such as net.ipv4.tcp_congestion_control act) or
	// both (SideBoth).
	Side string `yaml:"side,omitempty"`
	// Sysctls are network sysctls ("net.core.busy_read": "50") set for
	// the tuning's trials where the kernel keeps them: a global one (the
	// host's, which a new network namespace does not show or shows
	// read-only: net.netfilter.nf_conntrack_max) on the host;
	// one of each namespace in the server node's, and with Pods also in
	// every measured server pod's (tune.Plan).
	Sysctls map[string]string `yaml:"sysctls,omitempty"`
	// CPUIdle keeps the tuned end's CPUs out of slow idle states for the
	// tuning's trials (tune.Plan sets each CPU's PM QoS latency limit).
	CPUIdle *CPUIdle `yaml:"cpuIdle,omitempty"`
}

// CPUIdle bounds how deeply the tuned end's CPUs may idle: no cpuidle
// state whose exit latency exceeds MaxExitLatency is entered, so a core
// that waits for the next packet wakes within it. 0 leaves only polling,
// what booting with idle=poll does, for the trial alone. A round trip
// waits for the receiving core to wake (Documentation/admin-guide/pm/
// cpuidle.rst). The bound is each CPU's PM QoS resume latency limit
// (cpuidle.LimitPath), which every governor honours; tuned's
// latency-performance profile sets the global one, /dev/cpu_dma_latency,
// which lasts only while a process holds it open, where a sysfs value
// is journaled and put back after a crash.
type CPUIdle struct {
	MaxExitLatency Duration `yaml:"maxExitLatency"`
}

// MaxExitLatencyUS is the bound in whole microseconds, the unit of the
// states' latency files.
func (c CPUIdle) MaxExitLatencyUS() int { return int(c.MaxExitLatency.Microseconds()) }

// MaxIdleExitLatency bounds cpuIdle.maxExitLatency: the deepest package
// C-states exit in a few milliseconds.
const MaxIdleExitLatency = 100 * time.Millisecond

// Tuning.Side values.
const (
	SideServer = "server"
	SideClient = "client"
	SideBoth   = "both"
)

// Sides lists the ends the tuning goes on, server first.
func (t Tuning) Sides() []string {
	switch t.Side {
	case SideClient:
		return []string{SideClient}
	case SideBoth:
		return []string{SideServer, SideClient}
	}
	return []string{SideServer}
}

// Tuning.Devices values.
const (
	DevicesNode     = "node"
	DevicesUnderlay = "underlay"
)

// RPS selects the CPUs receive packet steering may use.
type RPS struct {
	// CPUs is "all" (every CPU of the machine, the paper's f on 4 cores),
	// "all-but-softirq-core" (every CPU but the one that takes NET_RX
	// softirqs by default, the repository's RPS-7), or a CPU list "0-2".
	CPUs string `yaml:"cpus"`
}

// RFS sets receive flow steering table sizes.
type RFS struct {
	// SockFlowEntries is the global net.core.rps_sock_flow_entries.
	SockFlowEntries int `yaml:"sockFlowEntries"`
	// FlowCnt is each receive queue's rps_flow_cnt.
	FlowCnt int `yaml:"flowCnt"`
}

// RPS CPU selectors.
const (
	CPUsAll           = "all"
	CPUsAllButSoftIRQ = "all-but-softirq-core"
	paperRFSEntries   = 32768
)

// builtinTunings are the configurations of the rps-rfs study (seed 000)
// and its repository's RPS-7 variant (seed 002).
var builtinTunings = map[string]Tuning{
	"baseline": {Name: "baseline"},
	"rps":      {Name: "rps", RPS: &RPS{CPUs: CPUsAll}},
	"rps+":     {Name: "rps+", RPS: &RPS{CPUs: CPUsAll}, Pods: true},
	"rfs":      {Name: "rfs", RPS: &RPS{CPUs: CPUsAll}, RFS: &RFS{SockFlowEntries: paperRFSEntries, FlowCnt: paperRFSEntries}},
	"rfs+":     {Name: "rfs+", RPS: &RPS{CPUs: CPUsAll}, RFS: &RFS{SockFlowEntries: paperRFSEntries, FlowCnt: paperRFSEntries}, Pods: true},
	"rps-7":    {Name: "rps-7", RPS: &RPS{CPUs: CPUsAllButSoftIRQ}},
}

// BuiltinTuningNames lists the built-in tuning names, sorted.
func BuiltinTuningNames() []string {
	names := make([]string, 0, len(builtinTunings))
	for n := range builtinTunings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// BuiltinTuning returns a built-in tuning by name.
func BuiltinTuning(name string) (Tuning, bool) {
	t, ok := builtinTunings[name]
	return t, ok
}

// IsBaseline reports whether the tuning changes nothing.
func (t Tuning) IsBaseline() bool {
	return t.RPS == nil && t.RFS == nil && len(t.Sysctls) == 0 && t.CPUIdle == nil
}

// UnmarshalYAML accepts a built-in name or a full definition.
func (t *Tuning) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		b, ok := builtinTunings[n.Value]
		if !ok {
			return atNode(n, "unknown tuning %q (%sbuilt-in: %s; or define one with name/rps/rfs/sysctls/pods)",
				n.Value, suggest.Hint(n.Value, BuiltinTuningNames()), strings.Join(BuiltinTuningNames(), ", "))
		}
		*t = b
		return nil
	}
	// The decoder's KnownFields does not reach into a custom unmarshaler:
	// without this a typo ("pod: true", "rsf:") would run the tuning
	// without what was asked.
	if err := checkKeys(n, "tuning", "Tuning", tuningKeys); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if known, ok := tuningSubKeys[n.Content[i].Value]; ok {
			if err := checkKeys(n.Content[i+1], n.Content[i].Value, tuningSubTypes[n.Content[i].Value], known); err != nil {
				return err
			}
		}
	}
	type plain Tuning
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*t = Tuning(p)
	return nil
}

// tuningKeys and tuningSubKeys are the keys a tuning definition and its
// rps and rfs mappings may have (the yaml tags above).
var (
	tuningKeys    = []string{"name", "rps", "rfs", "pods", "devices", "side", "sysctls", "cpuIdle"}
	tuningSubKeys = map[string][]string{"rps": {"cpus"}, "rfs": {"sockFlowEntries", "flowCnt"}, "cpuIdle": {"maxExitLatency"}}
	// tuningSubTypes are their Go types, for an unknown key's hint of
	// where it belongs (placeHint).
	tuningSubTypes = map[string]string{"rps": "RPS", "rfs": "RFS", "cpuIdle": "CPUIdle"}
)

// MarshalYAML writes built-in tunings by name and others in full.
func (t Tuning) MarshalYAML() (any, error) {
	if b, ok := builtinTunings[t.Name]; ok && equalTuning(b, t) {
		return t.Name, nil
	}
	type plain Tuning
	return plain(t), nil
}

func equalTuning(a, b Tuning) bool {
	eqRPS := (a.RPS == nil) == (b.RPS == nil) && (a.RPS == nil || *a.RPS == *b.RPS)
	eqRFS := (a.RFS == nil) == (b.RFS == nil) && (a.RFS == nil || *a.RFS == *b.RFS)
	eqIdle := (a.CPUIdle == nil) == (b.CPUIdle == nil) && (a.CPUIdle == nil || *a.CPUIdle == *b.CPUIdle)
	return a.Name == b.Name && a.Pods == b.Pods && a.Devices == b.Devices && a.Side == b.Side && eqRPS && eqRFS && eqIdle &&
		maps.Equal(a.Sysctls, b.Sysctls)
}

// Steers reports whether a tuning sets RPS or RFS at the given end of
// the pairs (SideServer or SideClient).
func (s *Study) Steers(side string) bool {
	return slices.ContainsFunc(s.Spec.Tunings, func(t Tuning) bool {
		return (t.RPS != nil || t.RFS != nil) && slices.Contains(t.Sides(), side)
	})
}

// TuningSysctls are the names of the sysctls the study's tunings set at
// one end of the measured pairs (SideServer or SideClient), sorted.
func (s *Study) TuningSysctls(side string) []string {
	var out []string
	for _, t := range s.Spec.Tunings {
		if !slices.Contains(t.Sides(), side) {
			continue
		}
		for name := range t.Sysctls {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SysctlOwned are the sysctls another tuning field sets: a tuning's
// sysctls may not set them too (two writers of one value would revert
// each other out of order).
var SysctlOwned = map[string]string{"net.core.rps_sock_flow_entries": "rfs.sockFlowEntries"}

// sysctlNameRE is a network sysctl by its dotted name: "net." and
// segments of letters, digits, '_' and '-', so that its /proc/sys path
// (dots as slashes) can name nothing else. A device's own settings
// (net.ipv4.conf.DEV.*) are left out: the run's devices are its own, and
// "all" and "default" reach them.
var sysctlNameRE = regexp.MustCompile(`^net(\.[A-Za-z0-9_-]+)+$`)

// IsSysctlName says whether name is a network sysctl's dotted name as a
// tuning may give it (the node agent checks its writes by it too).
func IsSysctlName(name string) bool { return sysctlNameRE.MatchString(name) }

// deviceSysctlRE is a sysctl of one device: net.ipv4.conf.DEV.*,
// net.ipv6.neigh.DEV.*, net.mpls.conf.DEV.*, net.decnet.conf.DEV.*
// (before Linux 6.1), net.ax25.DEV.* (DEV "all" and "default" are not
// devices). The name matches no file in a node's namespace that has no
// such device (AX.25's exist in the initial namespace only), so tune.Plan
// would take it for a global sysctl and write it on the host:
// net.ipv4.conf.eth0.rp_filter changed the host's own uplink. tune.Plan
// also refuses a "global" name with a segment naming a host device.
var deviceSysctlRE = regexp.MustCompile(`^net\.(?:(?:ipv4|ipv6|mpls|decnet)\.(?:conf|neigh)|ax25)\.([^.]+)\.`)

// DeviceSysctl says whether name is one device's own sysctl, and names
// the device.
func DeviceSysctl(name string) (dev string, ok bool) {
	m := deviceSysctlRE.FindStringSubmatch(name)
	if m == nil || m[1] == "all" || m[1] == "default" {
		return "", false
	}
	return m[1], true
}

// refusedSysctlRE are network sysctls that are not a network tuning's:
// the BPF JIT's hardening and limits (net.core.bpf_jit_*, the initial
// namespace's only) are the host's security settings, and a study
// lowering them for its trials would weaken the machine while it runs.
var refusedSysctlRE = regexp.MustCompile(`^net\.core\.bpf_jit_`)

// RefusedSysctl says why a network sysctl is not a tuning's to set (""
// when it may be): a device's own, or a security setting. The node agent
// refuses the same names (its last line of defence on a cluster node).
func RefusedSysctl(name string) string {
	if dev, ok := DeviceSysctl(name); ok {
		// The neighbour tables have a default and no "all"
		// (/proc/sys/net/ipv4/neigh/default); conf has both.
		instead := strings.Replace(name, "."+dev+".", ".all.", 1) + " (or .default.)"
		if strings.Contains(name, ".neigh."+dev+".") {
			instead = strings.Replace(name, "."+dev+".", ".default.", 1)
		}
		return fmt.Sprintf("%s is device %s's own setting; a run's devices are its own, and the host's are not a tuning's to change: "+
			"set %s to reach the run's devices", name, dev, instead)
	}
	if refusedSysctlRE.MatchString(name) {
		return fmt.Sprintf("%s is the BPF JIT's hardening or limit, a security setting of the host, not a network tuning", name)
	}
	return ""
}

// Bounds of a tuning's sysctls.
const (
	MaxSysctls     = 32
	maxSysctlName  = 128
	maxSysctlValue = 256
)

// Sysctls whose value is the name of a queueing discipline or a TCP
// congestion control (kernel objects, some in modules): such names are
// lower-case letters, digits and '_' (fq_codel, pfifo_fast, bbr, dctcp).
var (
	moduleValued     = map[string]bool{"net.core.default_qdisc": true, "net.ipv4.tcp_congestion_control": true}
	moduleValuedWhat = map[string]string{"net.core.default_qdisc": "queueing discipline", "net.ipv4.tcp_congestion_control": "TCP congestion control"}
	moduleValuedList = map[string]string{"net.core.default_qdisc": "tc qdisc help does", "net.ipv4.tcp_congestion_control": "net.ipv4.tcp_available_congestion_control does"}
	moduleNameRE     = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// SysctlPath is a network sysctl's file: its dotted name with slashes
// under /proc/sys (sysctlNameRE allows no other characters that would
// mean something in a path).
func SysctlPath(name string) string { return "/proc/sys/" + strings.ReplaceAll(name, ".", "/") }

// checkSysctl says what is wrong with a sysctl setting, "" when nothing.
func checkSysctl(name, value string) string {
	switch {
	case len(name) > maxSysctlName:
		return fmt.Sprintf("%q is %d bytes; at most %d", name[:32]+"...", len(name), maxSysctlName)
	case !sysctlNameRE.MatchString(name):
		return fmt.Sprintf("%q is not a network sysctl: want net.SECTION.NAME (letters, digits, '_', '-'; as sysctl -a prints it)", name)
	case RefusedSysctl(name) != "":
		return RefusedSysctl(name)
	case SysctlOwned[name] != "":
		return fmt.Sprintf("%s is set by %s; set it there", name, SysctlOwned[name])
	case value == "":
		return fmt.Sprintf("%s: the value is empty", name)
	case len(value) > maxSysctlValue:
		return fmt.Sprintf("%s: the value is %d bytes; at most %d", name, len(value), maxSysctlValue)
	case strings.IndexFunc(value, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) >= 0:
		return fmt.Sprintf("%s: the value %q has a control character; several values are separated by spaces", name, value)
	case moduleValued[name] && !moduleNameRE.MatchString(value):
		// The value names a module's qdisc or algorithm, which the
		// preflight probe looks up by that name (probe.SysctlValue).
		return fmt.Sprintf("%s: %q is not a %s name: want lower-case letters, digits and '_' (as %s lists them)",
			name, value, moduleValuedWhat[name], moduleValuedList[name])
	case yamlBools[strings.ToLower(value)] != "":
		return fmt.Sprintf("%s: %q is a YAML boolean, a word to the kernel, which wants a number (the first trial's write would fail, EINVAL): write %s",
			name, value, yamlBools[strings.ToLower(value)])
	}
	return sysctlRadix(name, value)
}

// MaskKnobs are the knobs whose value is a CPU mask, by file name (a
// sysctl's last part): the kernel reads a short one ("f", "0f") in hex
// and prints it zero-padded to its CPU count, in comma-separated 32-bit
// words ("00000000,0000000f"). Queues' rps_cpus, xps_cpus and xps_rxqs
// (sysfs); the sysctls net.core.rps_default_mask and
// net.core.flow_limit_cpu_bitmap; an IRQ's smp_affinity.
var MaskKnobs = map[string]bool{
	"rps_cpus": true, "xps_cpus": true, "xps_rxqs": true,
	"rps_default_mask": true, "flow_limit_cpu_bitmap": true, "smp_affinity": true,
}

// sysctlRadix refuses a sysctl number written in another base than ten:
// the kernel reads a sysctl's numbers as C does (proc_get_long's
// strtoul_lenient with base 0), so "050" is 40 and "0x10" 16, and reads
// them back in decimal, which the tuning's read-back then finds changed:
// every trial of the tuning failed.
func sysctlRadix(name, value string) string {
	if MaskKnobs[name[strings.LastIndexByte(name, '.')+1:]] {
		return "" // hex whatever its leading 0s: "0f", "00000000,0000000f"
	}
	for _, f := range strings.Fields(value) {
		digits := strings.TrimLeft(f, "+-")
		if len(digits) < 2 || digits[0] != '0' {
			continue
		}
		v, err := strconv.ParseInt(f, 0, 64)
		if err != nil {
			return fmt.Sprintf("%s: %q: the kernel reads a number with a leading 0 in another base than ten (%s is no octal number: it would refuse the write, EINVAL); write it in decimal without the leading 0",
				name, value, f)
		}
		return fmt.Sprintf("%s: %q: the kernel reads a number with a leading 0 in another base than ten (%s is %d) and gives it back in decimal; write %d",
			name, value, f, v, v)
	}
	return ""
}

// yamlBools are YAML's boolean words (YAML 1.1's, which authors write
// for on and off; any case) and the number a sysctl takes for each. A
// sysctl's value is text, kept as written (`tcp_timestamps: false` is
// "false"); the kernel reads a number and refuses the word, after the
// nodes are built and the baseline trials ran. No network sysctl takes
// these words.
var yamlBools = map[string]string{"true": "1", "yes": "1", "on": "1", "false": "0", "no": "0", "off": "0"}

// Describe says in words what the tuning sets and where, for a report's
// table of tunings and `run --dry-run`.
func (t Tuning) Describe() string {
	if t.IsBaseline() {
		return "nothing: the machine as found"
	}
	// end names the ends of the measured pairs the tuning goes on.
	end, ends := "server", "server node's"
	switch t.Side {
	case SideClient:
		end, ends = "client", "client node's"
	case SideBoth:
		end, ends = "server and client", "server and client nodes'"
	}
	var what []string
	if t.RPS != nil {
		what = append(what, "RPS to CPUs "+rpsCPUs(t.RPS.CPUs))
	}
	if t.RFS != nil {
		what = append(what, fmt.Sprintf("RFS with %d socket-flow entries (host) and %d flows per receive queue",
			t.RFS.SockFlowEntries, t.RFS.FlowCnt))
	}
	var out []string
	if len(what) > 0 {
		where := "on the " + ends + " underlay NIC, tunnel device and measured pods' host-side veths"
		if t.Devices == DevicesUnderlay {
			where = "on the " + ends + " underlay NIC only"
		}
		if t.Pods {
			where += ", and on eth0 inside each measured " + end + " pod"
		}
		out = append(out, strings.Join(what, "; ")+" "+where)
	}
	if len(t.Sysctls) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(t.Sysctls)) {
			kv = append(kv, k+" = "+t.Sysctls[k])
		}
		where := "in the " + ends + " namespace"
		if t.Side == SideBoth {
			where = "in the server and client nodes' namespaces"
		}
		if t.Pods {
			where += " and each measured " + end + " pod's"
		}
		out = append(out, "sysctls "+strings.Join(kv, ", ")+" (a global one on the host, one of each namespace "+where+")")
	}
	if t.CPUIdle != nil {
		out = append(out, fmt.Sprintf("no idle state that exits slower than %d µs on the %s CPUs (their PM QoS resume latency limit)",
			t.CPUIdle.MaxExitLatencyUS(), ends))
	}
	return strings.Join(out, "; ")
}

func rpsCPUs(sel string) string {
	switch sel {
	case CPUsAll:
		return "all (every CPU of the node)"
	case CPUsAllButSoftIRQ:
		return "all but the softirq core (every CPU of the node but the one that took most NET_RX softirqs at baseline)"
	}
	return sel
}
