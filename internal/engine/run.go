package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/tune"
)

// Engine is what the runner needs from the place nodes and pods come
// from, beyond Cluster: its own preflight, a cluster per datapath entry,
// the knob file system of its nodes, a reader of each node's kernel for
// the collectors, and its facts for env.json. The local engine
// (engine/localengine) and the kube engine (engine/kube) implement it;
// the runner holds one in its engine list and never asks which it is.
type Engine interface {
	// Name is the engine's name for env.json and --engine ("local").
	Name() string
	// Preflight checks what the engine needs for the study; it changes
	// nothing. When the study allows it (spec.skipUnavailable) it may
	// drop datapaths it cannot run from s.Spec.Datapaths. An error of
	// the nodes' passing state rather than the study, the flags or the
	// setup is marked Transient.
	Preflight(ctx context.Context, s *study.Study, n Needs) (Facts, error)
	// Up brings up (or, on a real cluster, prepares) the cluster for one
	// datapath entry and says how the datapath was built.
	Up(ctx context.Context, r Run, d Datapath) (Cluster, results.DatapathEnv, error)
	// FS reads and writes sysfs/procfs knobs on node n of the cluster
	// Up built last: this machine's for emulated nodes, through the
	// node's agent on a real cluster.
	FS(n Node) tune.FS
	// Kernel reads node n's kernel: this machine's for emulated nodes,
	// the node's agent on a real cluster.
	Kernel(n Node) Kernel
	// Describe adds the engine's facts (offloads, CPUs, notes) to env.json.
	Describe(r Run, c Cluster, e *results.Env)
}

// Datapath is one datapath entry of the study with the datapath the
// runner built from it, once per run (catalog.Build).
type Datapath struct {
	Spec  study.Datapath
	Built datapath.Datapath
	// Field is the entry's place in the study ("spec.datapaths[1]"), so
	// that a refusal is reported at its line (study.At).
	Field string
	// Features are the kernel features and tools (probe names) the
	// datapath and its knobs need on the nodes.
	Features []string
}

// Needs is what a study asks of the place it runs, gathered by the
// runner from the catalogue, the knob list and the workload registry, so
// engines depend on none of them.
type Needs struct {
	Datapaths []Datapath
	// Knobs are per-trial knobs' needs, each with a name for errors
	// ("tuning rps-7").
	Knobs []Need
	// CheckTools checks the workloads' programs on this machine; an engine
	// whose tools run elsewhere (in a cluster's image) does not call it.
	CheckTools func() error
	// Resumes are the run IDs of the parts of the interrupted run a
	// --resume continues (env.json's run_ids: the first run and each
	// resume since, each with its own ID; nil for a new run): an engine
	// whose runs leave objects where their nodes are when their runner
	// dies (the kube engine's pods, Services and Lease) refuses to go on
	// beside any dead run's, naming the cleanup, and names those of the
	// parts as the interrupted run's.
	Resumes []string
}

// Need is a set of kernel features (probe names) something needs.
type Need struct {
	What string
	// Field is the study field that asks for it ("spec.tunings[2]"), so
	// that a refusal is reported at its line (study.At); "" for none.
	Field    string
	Features []string
	// Of are the datapaths the need applies to, named after What in a
	// refusal; an engine that runs fewer of the study's datapaths than it
	// lists (the kube engine runs the one standing for the cluster's CNI)
	// names those it runs.
	Of []string
	// Without says how the study runs without this need ("--profile
	// quick-none, or --set impairments=[none]"), added to a refusal so that
	// the user is not left to find it in the docs.
	Without string
}

// Refusal wraps why a need is not met with what needed it and, when
// known, how to run without it.
func (n Need) Refusal(where string, err error) error {
	what := n.What
	if len(n.Of) > 0 {
		what += " of " + strings.Join(n.Of, ", ")
	}
	if n.Without != "" {
		err = fmt.Errorf("%s%s: %w (to run without: %s)", what, where, err, n.Without)
	} else {
		err = fmt.Errorf("%s%s: %w", what, where, err)
	}
	if n.Field != "" {
		return study.At(n.Field, err)
	}
	return err
}

// Facts are what an engine's preflight found.
type Facts struct {
	// Notes go to env.json and the terminal; Warnings too, marked so.
	Notes, Warnings []string
	// MachineCPUs are the CPUs RPS masks are computed from; nil means
	// this machine's.
	MachineCPUs cpuset.Set
	// ClientCPUs are the client node's CPUs, for RPS masks at the client
	// end (a tuning with side: client or both); nil means MachineCPUs.
	ClientCPUs cpuset.Set
	// Remote is true when the nodes are other machines (a cluster): this
	// machine's CPU topology, probes and datapath MTUs say nothing of
	// them, so options resolved from those are refused or left to the
	// nodes.
	Remote bool
	// SharedKernel is true when the client and server nodes run on one
	// kernel: the local engine's emulated nodes always, a cluster's when
	// they report one boot ID (kind-style nodes on one machine). What the
	// two nodes' kernels report of CPUs and memory is then one reading.
	SharedKernel bool
	// IdleStates are CPU 0's idle states of each cluster node, read
	// through its agent at preflight when a tuning bounds idle; the
	// runner refuses a bound that changes nothing on a node its tuning
	// goes on (the local engine's are this machine's, read by the
	// runner).
	IdleStates []NodeIdle
	// Topology is the CPU topology of the server's node, read through its
	// agent at preflight when a workload pins by placement name (kube);
	// nil means this machine's, which the runner reads.
	Topology *NodeTopology
}

// NodeTopology is a cluster node's CPU topology.
type NodeTopology struct {
	// Where names the node in notes and errors: "node NAME".
	Where string
	topology.Topology
	// Allowed are the CPUs the node lets its pods run on (nil: unknown),
	// which a workload's pins must keep to; AllowedWhy says so in
	// refusals.
	Allowed    cpuset.Set
	AllowedWhy string
}

// NodeIdle is CPU 0's idle states of a node and the ends of a trial it
// holds (study.SideServer, study.SideClient; both where the two nodes
// are one).
type NodeIdle struct {
	// Where names the node in errors: "node NAME's", "this machine's".
	Where  string
	Sides  []string
	States []cpuidle.State
}

// Run is what an engine needs to know of the run it serves.
type Run struct {
	ID      string
	Study   *study.Study
	Journal *journal.Journal
	// StateDir is the run's state directory (journal.StateDir).
	StateDir   string
	ServerCPUs cpuset.Set
	ClientCPUs cpuset.Set
	Log        *slog.Logger
}

// Counter is a program's own packet counters (BPF maps cnibench loaded),
// read at both ends of a trial's window by the bpf collector: they show
// which way a BPF datapath steered the packets and that a Service was
// translated in BPF, where no iptables counter moves. The cilium
// datapath and the socket load balancer are Counters.
type Counter interface {
	// Counts returns the counters by metric name (without the
	// collector's prefix), summed over CPUs and nodes, since the
	// program was loaded.
	Counts() (map[string]uint64, error)
}

// Kernel reads one node's kernel for the per-trial collectors
// (package collect).
type Kernel interface {
	// CPU samples the node's per-core CPU, softirqs and softnet.
	CPU() Sampler
	// Ifaces reads devices' counters (`ip -s link`), in one request.
	Ifaces(ifs []netns.Iface) ([]ifstats.Counters, error)
	// MemoryPercent is the node's memory in use.
	MemoryPercent() (float64, error)
	// CPP records the CPU cost per packet on the node, counting packets
	// on ifs; the samples of procs count beside the workload's (the
	// datapath's own per-packet processes, datapath.PacketProcesses).
	CPP(ifs []netns.Iface, procs []string) (MetricWindow, error)
	// Qdiscs reads the counters of cnibench's netem on each device.
	Qdiscs(ifs []netns.Iface) ([]impair.Stats, error)
}

// Impairer is implemented by kernels that change the node's qdiscs
// themselves: the kube engine's agent applies and journals the netem on
// the node, where the controller's journal would not reach after a
// crash. The local engine's kernel does not implement it: the impairment
// knob changes this kernel's qdiscs, journaled in the run's journal.
type Impairer interface {
	// Impair installs s on dev (egress, or ingress through an ifb) and
	// returns the device the netem sits on, the netem as installed
	// (impair.Prev.Installed: the queue limit set under a shaper) and
	// what puts dev's qdisc back.
	Impair(dev netns.Iface, s impair.Spec, ingress bool) (on netns.Iface, installed impair.Spec, undo func() error, err error)
}

// DaemonReader is implemented by kernels that find a node's daemons
// themselves (the kube engine's agent): the processes with one of names
// that run in the node's own network namespace, with their CPU time and
// memory.
type DaemonReader interface {
	Daemons(names []string) ([]procs.Proc, error)
}

// Impaired is where a trial's netem sits: devices of one node.
type Impaired struct {
	Node Node
	Devs []netns.Iface
	// Netem is what each of Devs got, as installed: the impairment's
	// Spec with the queue limit netem has (impair.Prev.Installed), for
	// env.json's record of what a run applied.
	Netem []impair.Spec
}

// Sampler is the metrics.Sampler contract.
type Sampler interface {
	Start() error
	Stop() (metrics.Window, error)
}

// MetricWindow brackets one window (Start, Stop) and then computes its
// metrics (Metrics). Stop only ends the recording; the analysis waits
// for Metrics, which the collectors call once every window has closed:
// CPU cost per packet's perf report takes seconds at 100% of a core on
// the node, which the CPU window would otherwise count. Metrics is
// called once after a successful Stop and frees what the window holds.
type MetricWindow interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Metrics(ctx context.Context) (map[string]float64, error)
}

// PodTimer is implemented by clusters that time each pod's network setup
// and teardown (the local engine's); the runner adds a summary to
// env.json.
type PodTimer interface{ PodTimes() []PodTime }

// ImageResolver is implemented by clusters whose workload pods run an
// image each node resolves for itself (the kube engine's): a tag
// (`kube install --allow-tag`) may name another image on each pull.
// ResolvedImages are the image IDs the ready workload pods' containers
// report, by node; the runner records them in env.json (image_ids)
// after each scale, since the pods exist only then.
type ImageResolver interface{ ResolvedImages() map[string][]string }

// PodTime is how long one pod's network took to set up and to tear down.
type PodTime struct {
	Pod, Node string
	// Setup is creating the namespace and wiring it; with WholePod, the
	// whole pod's start.
	Setup time.Duration
	// WholePod says Setup is the pod's start from its create call to
	// Ready (the kube engine: the sandbox, the CNI's ADD inside it, and
	// the containers), not its network's set-up alone, which the API does
	// not show apart.
	WholePod bool
	// Teardown is unwiring and deleting the namespace; 0 while the pod
	// exists.
	Teardown time.Duration
	// Phases break Setup down, in order: the namespace, then the
	// datapath's steps (datapath.StepLink, ...) or each CNI plugin call,
	// then PhaseOther for what no step covered. They sum to Setup.
	Phases []Phase
	// Ready is, for a pod of a start-up burst (PodStarter), how long after
	// the burst began the pod's network was ready: its Setup plus the
	// time it waited for a turn when fewer may start at once than the
	// burst has pods. 0 for other pods.
	Ready time.Duration
}

// Phase is one named part of a pod's network set-up.
type Phase struct {
	Name string
	Took time.Duration
}

// Phases every engine's breakdown may name besides the datapath's steps.
const (
	// PhaseNetns creates the pod's network namespace.
	PhaseNetns = "netns"
	// PhaseOther is the part of the set-up no named step covers.
	PhaseOther = "other"
)

// CheckBurst checks a PodStarter call's counts: at least one pod, and at
// least one but no more than the pods at once.
func CheckBurst(n, concurrency int) error {
	if n < 1 || concurrency < 1 || concurrency > n {
		return fmt.Errorf("start pods: %d pods, %d at once: want 1 <= at once <= pods", n, concurrency)
	}
	return nil
}

// PodStarter is implemented by clusters that start pods on demand, for
// the pod start-up workload (seed 004's Fig. 15b: creation latency as
// more pods start at once on one node).
type PodStarter interface {
	// StartPods starts n pods on the named node, at most concurrency at
	// a time, all released at one instant; waits until every one's
	// network is ready; deletes them; and returns their times in start
	// order (Ready from the instant of release, Teardown set). The pods
	// carry no workload and are gone when it returns, also on error,
	// unless the error says what stayed (ErrLeftBehind): the next burst
	// would make its pods beside it.
	StartPods(ctx context.Context, node string, n, concurrency int) ([]PodTime, error)
}

// ErrTransient marks a failure of the nodes' passing state (a cluster's
// agents on two images while their DaemonSet rolls out), which the
// same command may not meet a while later: a runtime failure (exit 1),
// not bad input (exit 2), though found before anything changed.
var ErrTransient = errors.New("transient state of the nodes")

// Transient marks err as ErrTransient, its message unchanged.
func Transient(err error) error { return transientError{err} }

type transientError struct{ error }

func (e transientError) Unwrap() []error { return []error{e.error, ErrTransient} }

// ErrLeftBehind marks an engine's error that includes a failure to undo
// what it made: an Up that failed and whose teardown of what it had
// built failed too (a namespace, a process or a cluster object left), a
// Scale whose cleanup of a pod it could not make, or deletion of one it
// scaled down, failed, or a pod start-up burst (PodStarter, a trial's
// workload) whose pods could not all be deleted or undone. The runner
// may retry a failed Up, Scale or trial, or give their cells up and go
// on, only when nothing was left: the next cluster or pods would be
// made beside the leftovers (the local engine's names are the run's, a
// burst's pods the same at every trial), and the host must be put back
// first (the run's teardown, else cnibench cleanup).
var ErrLeftBehind = errors.New("left behind")

// LeftBehind marks err as ErrLeftBehind, its message unchanged; nil
// stays nil.
func LeftBehind(err error) error {
	if err == nil {
		return nil
	}
	return leftBehindError{err}
}

type leftBehindError struct{ error }

func (e leftBehindError) Unwrap() []error { return []error{e.error, ErrLeftBehind} }
