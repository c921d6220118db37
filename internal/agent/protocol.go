// Package agent is the node agent of the kube engine: the same cnibench
// binary, run as a privileged, host-network, host-PID DaemonSet on the
// nodes under test. It is the kube engine's per-node handle: it reads,
// writes and lists sysfs/procfs knobs of the node and of pods on it, keeps
// a node-local journal of every value it changed, samples per-core CPU
// and softirq counters, and reports what a run's environment needs (CNI
// config files, network devices, iptables rule counts).
//
// Design notes:
//
//   - No port is opened. The controller execs `cnibench agent serve` in
//     the agent pod through the Kubernetes API and speaks newline-delimited
//     JSON over the exec stream's stdin/stdout: one Request per line, one
//     Response per line, in order. A session lives as long as the exec.
//   - Every write is journaled on the node (journal package, in
//     /run/cnibench/agent) before it is made, with the first old value of
//     each knob. A write that puts the old value back closes the entry.
//     When the session ends (the controller closed stdin, or its
//     connection died because it was killed) the session reverts whatever
//     is still changed. A session killed outright leaves a journal whose
//     owner is dead; the agent daemon replays such journals at start and
//     every few seconds, and `cnibench cleanup --kube` asks it to at once.
//   - One run at a time uses a node: a run's session claims it when it
//     opens (OpClaim, which Cluster.Up sends), and a session that never
//     claimed takes it at its first change; either takes the node's lock
//     (nodelock.go), held until the session has reverted. Any other
//     session's claim or first change is refused meanwhile (ErrNodeBusy,
//     KindBusy), whatever namespace its run is in. Reads never take it,
//     so preflight's and advise's read-only sessions never claim.
//   - A pod's network namespace is named "pod:NAMESPACE/NAME". The agent
//     finds it from a process of the pod whose environment carries
//     CNIBENCH_POD=NAMESPACE/NAME (the kube engine sets it in every
//     workload pod) and reaches it as /proc/PID/ns/net: no container
//     runtime client is needed. Any process can set the variable, so
//     marked processes in different namespaces are refused, and a knob
//     is read or written through a descriptor of the namespace checked
//     against the process (ProcPods).
package agent

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// Ops of a Request.
const (
	OpPing        = "ping"
	OpHello       = "hello" // version handshake: Value is the controller's version, the answer the agent's
	OpClaim       = "claim" // hold the node for this run until the session ends, measuring or changing (nodelock.go)
	OpRead        = "read"
	OpWrite       = "write"
	OpList        = "list"
	OpHostVeth    = "host-veth"    // host-side peer of Iface in Netns
	OpAddrDev     = "addr-dev"     // device holding address Value; List: the devices it is stacked on
	OpLowerDev    = "lower-dev"    // device tunnel Value sends through ("" for none); List: the devices it is stacked on
	OpLinks       = "links"        // network devices of Netns
	OpSampleStart = "sample-start" // start the CPU sampler of this session
	OpSampleStop  = "sample-stop"  // stop it and return the window
	OpCNIConf     = "cni-conf"     // files of the node's CNI config dir
	OpIptables    = "iptables"     // chain and rule counts
	OpRevert      = "revert"       // revert this session's changes now
	OpReplay      = "replay"       // revert journals of dead sessions
	OpInfo        = "info"         // kernel, CPUs, CPU model, NUMA nodes
	OpMissing     = "missing"      // which of Args are not on the image's PATH
	OpIfStats     = "if-stats"     // device counters of Ifaces
	OpMemory      = "memory"       // the node's memory in use, percent
	OpCPPStart    = "cpp-start"    // start perf on the node, counting packets on Ifaces
	OpCPPStop     = "cpp-stop"     // stop it: the window's end (cheap)
	OpCPPReport   = "cpp-report"   // perf report on the stopped window: the CPU cost per packet (seconds of a core)
	OpInspect     = "inspect"      // advise's read-only inspection of the node (JSON in Value)
	OpImpair      = "impair"       // netem on Ifaces[0] (Impair), journaled; Value: the device it sits on
	OpUnimpair    = "unimpair"     // put back the qdisc of Ifaces[0]
	OpQdiscStats  = "qdisc-stats"  // counters of the netem on Ifaces
	OpFeatures    = "features"     // which of Args (kernel features) the node lacks: Files name -> why
	OpDaemons     = "daemons"      // processes named in Args in the node's network namespace: CPU time, memory
	OpTraceStart  = "trace-start"  // trace the netfilter path of packets between Args (addresses)
	OpTraceStop   = "trace-stop"   // stop it: Counts chains, rules, packets
)

// PodNetnsPrefix starts the Netns of a pod: "pod:NAMESPACE/NAME".
const PodNetnsPrefix = "pod:"

// PodEnv is the environment variable that marks a workload pod's
// processes with "NAMESPACE/NAME".
const PodEnv = "CNIBENCH_POD"

// NodeEnv holds the agent's node name (downward API); journals are kept
// under DefaultJournalDir/NODE.
const NodeEnv = "CNIBENCH_NODE"

// PodNetns names a pod's network namespace for the agent.
func PodNetns(namespace, name string) string {
	return PodNetnsPrefix + namespace + "/" + name
}

// Request is one line the controller sends.
type Request struct {
	ID int    `json:"id"`
	Op string `json:"op"`
	// Run is the run the request belongs to; a session answers only
	// requests of the run it was started for (`agent serve --run`).
	Run   string `json:"run,omitempty"`
	Netns string `json:"netns,omitempty"`
	FS    string `json:"fs,omitempty"`
	Path  string `json:"path,omitempty"`
	Value string `json:"value,omitempty"`
	Iface string `json:"iface,omitempty"`
	// Args are the programs of OpMissing, and the processes whose samples
	// OpCPPStart counts beside the workload's (cpp.Recorder.Commands).
	Args []string `json:"args,omitempty"`
	// Ifaces are the devices of OpIfStats and OpCPPStart (Netns "" is
	// the node, "pod:NS/NAME" a pod).
	Ifaces []netns.Iface `json:"ifaces,omitempty"`
	// Impair is OpImpair's netem.
	Impair *ImpairArgs `json:"impair,omitempty"`
}

// Error kinds carried in Response.Kind, so sentinel errors survive the
// trip (tune.Revert treats ErrGone as done).
const (
	KindGone         = "gone"
	KindNotSupported = "not-supported"
	KindBadPath      = "bad-path"
	KindNoSysctl     = "no-sysctl"
	// KindNotExist is any other missing file: a node without cpuidle
	// states has no cpuN/cpuidle directory (cpuidle.ErrNone).
	KindNotExist = "not-exist"
	// KindBusy is a claim or change refused while another session
	// holds the node (ErrNodeBusy).
	KindBusy = "busy"
	// KindNoHostPeer is a pod device without a host-side peer
	// (ErrNoHostPeer).
	KindNoHostPeer = "no-host-peer"
	// KindUnclean is a change refused while a dead session's changes
	// could not be put back (tune.ErrNodeUnclean).
	KindUnclean = "unclean"
)

// Response answers the Request with the same ID.
type Response struct {
	ID    int    `json:"id"`
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// Node is the agent's node, sent with an error: a controller talks
	// to several agents, and an error that names only a pod's namespace
	// path or a node device does not say which node it came from.
	Node string `json:"node,omitempty"`

	Value    string             `json:"value,omitempty"`
	List     []string           `json:"list,omitempty"`
	Files    map[string]string  `json:"files,omitempty"`
	Counts   map[string]int     `json:"counts,omitempty"`
	Window   *metrics.Window    `json:"window,omitempty"`
	Info     *NodeInfo          `json:"info,omitempty"`
	Reverted int                `json:"reverted,omitempty"`
	IfStats  []ifstats.Counters `json:"if_stats,omitempty"`
	Number   float64            `json:"number,omitempty"`
	CPP      *cpp.Result        `json:"cpp,omitempty"`
	Qdiscs   []impair.Stats     `json:"qdiscs,omitempty"`
	// Netem is OpImpair's netem as installed (impair.Prev.Installed).
	Netem *impair.Spec `json:"netem,omitempty"`
	Procs []procs.Proc `json:"procs,omitempty"`
}

// NodeInfo describes the node the agent runs on.
type NodeInfo struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"`
	// CPUs is the node's count of online CPUs (its affinity's where
	// sysfs cannot be read).
	CPUs int `json:"cpus"`
	// CPUModel is the node's CPU as its /proc/cpuinfo names it (not
	// namespaced: the node's machine); "" when it cannot be read.
	CPUModel string `json:"cpu_model,omitempty"`
	// NUMANodes counts the node's NUMA nodes with online CPUs, from the
	// host's sysfs; 0 when its topology cannot be read.
	NUMANodes int `json:"numa_nodes,omitempty"`
	// AllowedCPUs are the CPUs of the agent's pod's cpuset (a CPU list;
	// its affinity where the cpuset cannot be read), which the workload
	// pods (no CPU requests, so in the node's shared pool) share.
	AllowedCPUs string `json:"allowed_cpus,omitempty"`
}

// errorKind maps an error to its wire kind.
func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrNodeBusy):
		// First: a refusal is joined with whatever retiring the
		// refused session's journal said.
		return KindBusy
	case errors.Is(err, tune.ErrNodeUnclean):
		return KindUnclean
	case errors.Is(err, tune.ErrGone):
		return KindGone
	case errors.Is(err, tune.ErrNotSupported):
		return KindNotSupported
	case errors.Is(err, tune.ErrBadPath):
		return KindBadPath
	case errors.Is(err, tune.ErrNoSysctl):
		return KindNoSysctl
	case errors.Is(err, ErrNoHostPeer):
		return KindNoHostPeer
	case errors.Is(err, fs.ErrNotExist):
		return KindNotExist
	}
	return ""
}

// RemoteError is an error the agent reported.
type RemoteError struct {
	Op, Msg, Kind string
	Node          string // the agent's node
}

func (e *RemoteError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("agent %s: %s", e.Op, e.Msg)
	}
	return fmt.Sprintf("agent on node %s: %s: %s", e.Node, e.Op, e.Msg)
}

// Is maps the wire kind back to its sentinel: tune's, fs.ErrNotExist,
// ErrNodeBusy or ErrNoHostPeer.
func (e *RemoteError) Is(target error) bool {
	switch e.Kind {
	case KindGone:
		return target == tune.ErrGone
	case KindNotSupported:
		return target == tune.ErrNotSupported
	case KindBadPath:
		return target == tune.ErrBadPath
	case KindNoSysctl:
		return target == tune.ErrNoSysctl
	case KindNotExist:
		return target == fs.ErrNotExist
	case KindBusy:
		return target == ErrNodeBusy
	case KindNoHostPeer:
		return target == ErrNoHostPeer
	case KindUnclean:
		return target == tune.ErrNodeUnclean
	}
	return false
}
