package study

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

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
