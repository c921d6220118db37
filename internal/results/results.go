// Package results holds the data model of a run's raw files and the
// crash-safe writers and readers for them.
//
// A run directory contains:
//
//	study.yaml     the resolved study
//	env.json       the environment found before the run (Env)
//	samples.jsonl  one Sample per finished trial, appended and flushed as it ends
//	cpu.jsonl      one CPUPoint per core per second of each measured window
//	stops.json     per cell of an adaptive run: n, precision, why it stopped (Stops)
//	summary.csv    one SummaryRow per cell and metric (derived; rebuildable)
//	summary.json   the summary model, analysis.Model (derived)
//	summary.md     Markdown summary (derived)
//	report.html    self-contained report (derived)
//
// The first five are raw (stops.json records the controller's word, which
// depends on the machine time spent); everything else can be rebuilt from them by
// `cnibench report DIR`.
package results

import "time"

// File names inside a run directory.
const (
	StudyFile   = "study.yaml"
	EnvFile     = "env.json"
	SamplesFile = "samples.jsonl"
	CPUFile     = "cpu.jsonl"
	StopsFile   = "stops.json"
	SummaryCSV  = "summary.csv"
	SummaryMD   = "summary.md"
	ReportHTML  = "report.html"
)

// Cell identifies one point of a study's matrix.
type Cell struct {
	Datapath string `json:"datapath"`
	Tuning   string `json:"tuning"`
	Workload string `json:"workload"`
	Replicas int    `json:"replicas"`
	// Impairment is the study impairment's name; "" is none (runs made
	// before impairments existed load so).
	Impairment string `json:"impairment,omitempty"`
}

// Sample is what one trial of one cell measured. Metrics holds scalar
// results keyed by metric name (see the Metric* constants); PerReplica holds
// the same per client/server pair where the workload has pairs.
type Sample struct {
	Cell       Cell                 `json:"cell"`
	Trial      int                  `json:"trial"`
	Start      time.Time            `json:"start"`
	End        time.Time            `json:"end"`
	Metrics    map[string]float64   `json:"metrics"`
	PerReplica []map[string]float64 `json:"per_replica,omitempty"`
	// Series holds per-interval series per replica (iperf3's cwnd, RTT
	// and bitrate each second), keyed by series name; optional.
	Series []map[string][]float64 `json:"series,omitempty"`
	// Cores is the average per-core CPU breakdown over the measured window,
	// one entry per CPU of the machine.
	Cores []CoreStat `json:"cores,omitempty"`
	// ClientCores are the client node's, when it runs a kernel of its own
	// (a cluster's; emulated nodes' cores are all in Cores).
	ClientCores []CoreStat `json:"client_cores,omitempty"`
	// Attempt numbers the attempts at this trial from 1 (0 in runs made
	// before retries existed): a failed or repeated attempt is recorded,
	// and the trial run again.
	Attempt int `json:"attempt,omitempty"`
	// Error is why the attempt failed; a failed attempt has no metrics.
	Error string `json:"error,omitempty"`
	// Noise is what else used the machine during the trial.
	Noise *Noise `json:"noise,omitempty"`
	// Discarded says why analysis leaves the attempt out (it failed, it
	// was disturbed and repeated, or it is SetUpFailed's record); "" for
	// a counted trial. Load puts such attempts in Run.Marked.
	Discarded string `json:"discarded,omitempty"`
	// Part is the part of the run that measured it: 0, then one more
	// per --resume; trial k of two cells pairs only within one part.
	Part int `json:"part,omitempty"`
}

// Counted reports whether the sample is one of the trials analysis uses.
func (s Sample) Counted() bool { return s.Discarded == "" && s.Error == "" }

// Noise is the noise guard's record of one trial (docs/statistics.md).
type Noise struct {
	// StealPct is the server node's mean steal time over the measured
	// window, in percent of its CPU time (the machine's where the nodes
	// share one kernel: emulated nodes, a kind-style cluster).
	StealPct float64 `json:"steal_pct"`
	// ClientStealPct is the client node's, where it runs a kernel of its
	// own (a cluster's) and its cores were sampled; null otherwise, and
	// in runs recorded before it was. The guard judges the larger of the
	// two (Steal).
	ClientStealPct *float64 `json:"client_steal_pct,omitempty"`
	// OutsidePct is the CPU of processes outside the run, in percent of
	// the machine's CPU time; null when not measured (a cluster's nodes).
	OutsidePct *float64 `json:"outside_cpu_pct,omitempty"`
	// BusyBeforePct is the machine's busy CPU share just before the
	// trial (every process, the run's idle pods and daemons included).
	BusyBeforePct *float64 `json:"busy_before_pct,omitempty"`
	// WindowPct is the share of the planned measured window (warm-up end
	// to the duration's end) during which every collector was recording:
	// less when they took long to start (a slow or overloaded machine).
	// Null for a task's window, which has no planned length.
	WindowPct *float64 `json:"window_pct,omitempty"`
	// WindowLateS is how many seconds after warm-up end the last
	// collector had started.
	WindowLateS float64 `json:"window_late_s,omitempty"`
	// WindowSlowest names the collector whose start took longest, with
	// its time ("trace 2.9 s"), when that was a tenth of a second or more.
	WindowSlowest string `json:"window_slowest,omitempty"`
	// EndLateS is how many seconds after the planned end the workload
	// returned: its start-up and tear-down. Large values mean the
	// workload measured seconds the collectors' window did not see.
	EndLateS float64 `json:"end_late_s,omitempty"`
	// Disturbed says which threshold the trial crossed; "" when none.
	Disturbed string `json:"disturbed,omitempty"`
}

// CoreStat is the CPU time breakdown of one core in percent (as mpstat
// prints it) plus the softirq/softnet counters' rates over a window.
type CoreStat struct {
	CPU  int    `json:"cpu"`
	Node string `json:"node,omitempty"` // emulated node the CPU is assigned to, "" when shared
	CPUPercent
	NetRxPerSec       float64 `json:"net_rx_softirqs_per_s"`
	ProcessedPerSec   float64 `json:"softnet_processed_per_s"`
	DroppedPerSec     float64 `json:"softnet_dropped_per_s"`
	SqueezedPerSec    float64 `json:"softnet_time_squeeze_per_s"`
	ReceivedRPSPerSec float64 `json:"softnet_received_rps_per_s"`
	// Poll is the percent of the window the CPU spun in cpuidle's
	// polling state, part of Idle: the kernel counts polling as idle time
	// though the core is busy all of it (what a cpuIdle bound costs). Nil
	// where the CPU has no polling state to count (no cpuidle driver).
	Poll *float64 `json:"poll,omitempty"`
	// Offline marks a CPU that was offline at the window's end: its
	// percentages are zeros, as mpstat prints them, and no measurement
	// (Measured); its rates count what it did while it was online.
	Offline bool `json:"offline,omitempty"`
}

// Measured reports whether c's percentages are a measurement: not a CPU
// offline at the window's end, nor a window with no elapsed time. Their
// zeros, which 100 - idle reads as a core 100% busy, are recognised in
// runs from before Offline was recorded too: a measured core's shares
// add up to about 100, never to 0.
func (c CoreStat) Measured() bool { return !c.Offline && c.CPUPercent != (CPUPercent{}) }

// CPUPercent is one core's time split in percent of elapsed jiffies,
// computed as mpstat -P ALL computes it (guest time is already contained in
// user and nice in /proc/stat and is not counted twice).
type CPUPercent struct {
	User    float64 `json:"user"`
	Nice    float64 `json:"nice"`
	System  float64 `json:"system"`
	IOWait  float64 `json:"iowait"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	Steal   float64 `json:"steal"`
	Idle    float64 `json:"idle"`
}

// CPUPoint is one line of cpu.jsonl: one core over one sampling interval.
type CPUPoint struct {
	Cell  Cell      `json:"cell"`
	Trial int       `json:"trial"`
	Time  time.Time `json:"time"`
	CPU   int       `json:"cpu"`
	CPUPercent
}

// Env is env.json: what the machine looked like before the run.
type Env struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	RunID   string `json:"run_id"`
	// RunIDs is the run ID of every part of the run, in order: the
	// first run's, then each --resume's (a new process, with a RunID of
	// its own). A resumed part adds its ID before its engine makes
	// anything (a kube run's Lease, pods and Services carry it), so that
	// the next resume looks for what every part left on a cluster, one
	// killed before it rewrote env.json too. Nil in runs before it was
	// recorded (AllRunIDs).
	RunIDs    []string `json:"run_ids,omitempty"`
	Engine    string   `json:"engine"`
	Hostname  string   `json:"hostname"`
	Kernel    string   `json:"kernel"`
	CPUModel  string   `json:"cpu_model"`
	CPUs      int      `json:"cpus"`
	NUMANodes int      `json:"numa_nodes"`
	// CPUIdle is how this machine's CPUs idle (cpuidle): a round trip
	// waits for a core to wake, so request/response numbers depend on it
	// (a busy machine's are shorter); nil where sysfs has no cpuidle.
	CPUIdle *CPUIdle          `json:"cpuidle,omitempty"`
	Started time.Time         `json:"started"`
	Tools   map[string]string `json:"tools"`
	// NodeCPUs maps each emulated node to the CPUs its processes are
	// pinned to; an empty list means the node shares all CPUs.
	NodeCPUs map[string][]int `json:"node_cpus"`
	// MachineCPUs are the CPUs the local engine's nodes could use
	// (hostcpus.Machine: cnibench's cgroup's cpuset, its affinity only
	// where the cpuset cannot be read; not narrowed by taskset on
	// cnibench, whose workloads may still be pinned, and RPS steer, to
	// any CPU of the cpuset): the cores sampled beyond them
	// (cpu.jsonl, Sample.Cores: every CPU of /proc/stat) ran none of the
	// run's work. Nil on a cluster and in runs before it was recorded.
	MachineCPUs []int `json:"machine_cpus,omitempty"`
	// Offloads maps interface to its ethtool features found before the run.
	Offloads map[string]map[string]bool `json:"offloads,omitempty"`
	// Steering holds RPS/RFS settings found before the run, keyed by path.
	Steering map[string]string `json:"steering,omitempty"`
	// Sysctls holds the network sysctls the study's tunings set, by
	// name, as found before the run where the tunings write them (the
	// host's for a global one, the server node's namespace's for one of
	// each namespace); those of a client-side tuning as "client: NAME",
	// from the client node.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Tunings says what each tuning wrote over the run's trials, by the
	// tuning's name (MergeSettings); the baseline writes nothing.
	Tunings map[string][]TuningSetting `json:"tunings,omitempty"`
	// Impairments says what each impairment installed over the run's
	// trials, by its name (MergeImpairments); none installs nothing. A
	// run before it was recorded has none.
	Impairments map[string][]ImpairmentSetting `json:"impairments,omitempty"`
	// Datapaths says how each datapath of the run was built, keyed by
	// the study's name for it.
	Datapaths map[string]DatapathEnv `json:"datapaths,omitempty"`
	// CNI is the cluster's network plugin and mode as the kube engine
	// detected them; nil on the local engine, where the cells' datapaths
	// are what cnibench built. Cells keep the study's datapath names
	// either way, so runs of both engines line up.
	CNI *CNI `json:"cni,omitempty"`
	// Image is the image a cluster's workload pods ran (the kube engine:
	// the installed agent's, whose tools were checked and whose versions
	// Tools are); "" on the local engine, whose programs are this
	// machine's, and in runs before it was recorded.
	Image string `json:"image,omitempty"`
	// ImageIDs are the images the nodes resolved Image to, as the ready
	// workload pods' containers report them (status imageID: NAME@sha256:
	// where pulled), distinct and sorted: a tag may name another image
	// on each pull, so more than one says the nodes ran different ones.
	// Empty where Image is, and before any workload pod was ready.
	ImageIDs []string `json:"image_ids,omitempty"`
	// SharedKernel: the client and server nodes ran on one kernel (the
	// local engine's namespaces, a kind-style cluster on one machine:
	// engine.Facts.SharedKernel), so their CPUs are one machine's.
	SharedKernel bool `json:"shared_kernel,omitempty"`
	// ClientNode is a cluster's client node (the kube engine's), which
	// a --resume and compare hold to as to the server node's facts
	// above; nil on the local engine and in kube runs before it was
	// recorded, whose SharedKernel is then no reading either.
	ClientNode *ClientNodeEnv `json:"client_node,omitempty"`
	// Origin is how the run was started; nil in runs before it was
	// recorded.
	Origin *Origin `json:"origin,omitempty"`
	// StudySHA256 is the SHA-256 of study.yaml as the run wrote it:
	// --resume refuses a study edited since, whose trials would not
	// compare with the kept ones; "" in runs before it was recorded.
	StudySHA256 string `json:"study_sha256,omitempty"`
	// MachineS is the machine time the run had spent when it last wrote
	// stops.json, in seconds, as its budget counts it: cluster set-ups,
	// pauses, repeated and failed attempts; of a resumed run's earlier
	// part its attempts, and no less than its last machine_s (set-ups
	// after that are missed). 0 in runs before it was recorded.
	MachineS float64  `json:"machine_s,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// Origin is how a run was started, for the record and for the reruns its
// report offers (built from Command).
type Origin struct {
	// Command is the command line in words, without where the run's
	// files go (--out): cnibench run rps-rfs --quick --set trials=3. A
	// resumed run keeps the command of the run it continues.
	Command []string `json:"command"`
	// Profiles are the profiles the study offered, which study.yaml (the
	// study as resolved, its profile applied) no longer has.
	Profiles []string `json:"profiles,omitempty"`
}

// DatapathEnv is how one datapath of a run was built: its knobs and
// what applying them did.
type DatapathEnv struct {
	Type           string `json:"type"`
	Implementation string `json:"implementation,omitempty"`
	Wiring         string `json:"wiring,omitempty"`
	// Mode is the form of its CNI's datapath the datapath built, for one
	// that has several (datapath.Moded: weave's "ovs", or "bridge" where
	// the kernel lacks openvswitch; a Calico tunnel's
	// "tunnel-tx-checksum-off" where Felix turns it off, up to Linux
	// 5.7.0, else "tunnel-tx-checksum-on"); "" for the others, on a
	// cluster and in runs before it was recorded. StandIn is what that
	// form changes in what a packet meets, "" when it is the CNI's own:
	// the report sets it beside the numbers it moves.
	Mode    string `json:"mode,omitempty"`
	StandIn string `json:"stand_in,omitempty"`
	// PodMTU is the MTU of the pods' interfaces.
	PodMTU int `json:"pod_mtu,omitempty"`
	// LinkRate is the shaped underlay line rate, bit/s; 0 = unshaped.
	LinkRate uint64 `json:"link_rate_bps,omitempty"`
	// Offloads lists what was set where ("gro off on server/eth1").
	Offloads []string   `json:"offloads,omitempty"`
	Policy   *PolicyEnv `json:"policy,omitempty"`
	// Netfilter is the CNI and kube-proxy rule state installed on the
	// nodes (knob netfilter).
	Netfilter *NetfilterEnv `json:"netfilter,omitempty"`
	// BridgeNFCallIPTables is net.bridge.bridge-nf-call-iptables in the
	// server node's namespace once the datapath was built: "1" when its
	// bridged frames pass iptables, "0", or "absent" (br_netfilter not
	// loaded); "" when unread. A bridge datapath's cost per packet differs
	// by it, and loading br_netfilter anywhere makes it 1 in every new
	// namespace.
	BridgeNFCallIPTables string `json:"bridge_nf_call_iptables,omitempty"`
	// PodNetwork is how long pods' networks took to set up and tear
	// down over the whole run of this datapath.
	PodNetwork *PodNetworkEnv `json:"pod_network,omitempty"`
}

// PodNetworkEnv summarises per-pod network setup (namespace + wiring)
// and teardown (unwiring + namespace deletion) times, in milliseconds.
type PodNetworkEnv struct {
	Pods             int     `json:"pods"`
	SetupMedianMs    float64 `json:"setup_median_ms"`
	SetupMaxMs       float64 `json:"setup_max_ms"`
	TeardownPods     int     `json:"teardown_pods"`
	TeardownMedianMs float64 `json:"teardown_median_ms"`
	TeardownMaxMs    float64 `json:"teardown_max_ms"`
}

// PolicyEnv is the network-policy rule set a datapath ran with: its
// style and mode, and the chains and rules it put on each node.
type PolicyEnv struct {
	Style  string         `json:"style"`
	Mode   string         `json:"mode"`
	Chains map[string]int `json:"chains"`
	Rules  map[string]int `json:"rules"`
}

// NetfilterEnv is the netfilter state a datapath ran with: whose rules,
// the code they follow, kube-proxy's mode and Services, and the chains
// and rules installed on each node (at the last replica count).
type NetfilterEnv struct {
	CNI       string         `json:"cni"`
	Source    string         `json:"source"`
	KubeProxy string         `json:"kube_proxy"`
	Services  int            `json:"services,omitempty"`
	Endpoints int            `json:"endpoints,omitempty"`
	Chains    map[string]int `json:"chains"`
	Rules     map[string]int `json:"rules"`
	// SocketLB says where Cilium's kube-proxy replacement (kubeProxy:
	// cilium) translated Services: its BPF programs and their cgroup.
	SocketLB string `json:"socket_lb,omitempty"`
}

// CNI names a detected network plugin, with what it was recognised by.
type CNI struct {
	Name     string   `json:"name"` // calico, flannel, cilium, ..., unknown
	Mode     string   `json:"mode,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// LabelStandsFor is the CNI the study's datapath label stands for
	// ("flannel (udp)") when that is not the one detected: the cells were
	// named for another datapath than they measured.
	LabelStandsFor string `json:"label_stands_for,omitempty"`
}

// String is "name (mode)", or the name alone.
func (c CNI) String() string {
	if c.Mode == "" {
		return c.Name
	}
	return c.Name + " (" + c.Mode + ")"
}

// SummaryRow is one row of summary.csv: statistics of one metric in one cell.
// CPU is -1 for metrics that are not per core. Normalized fields are set for
// metrics that are normalized to the study's baseline tuning.
type SummaryRow struct {
	Cell
	Metric   string  `json:"metric"`
	CPU      int     `json:"cpu"`
	Unit     string  `json:"unit"`
	N        int     `json:"n"`
	Mean     float64 `json:"mean"`
	SD       float64 `json:"sd"`
	CI95Low  float64 `json:"ci95_low"`
	CI95High float64 `json:"ci95_high"`
	// Normalized is mean / baseline mean at the same datapath, workload and
	// replica count; HasNorm says whether the three fields are meaningful.
	HasNorm      bool    `json:"has_norm"`
	Normalized   float64 `json:"normalized"`
	NormCI95Low  float64 `json:"normalized_ci95_low"`
	NormCI95High float64 `json:"normalized_ci95_high"`
}

// Metric names used in Sample.Metrics and SummaryRow.Metric.
const (
	// MetricBitrate is the per-replica average receiver bitrate (bit/s),
	// the paper's "average bitrate read at each server".
	MetricBitrate = "bitrate"
	// MetricBitrateSum is the aggregate receiver bitrate over all replicas.
	MetricBitrateSum = "bitrate_sum"
	// MetricTransactions is a request/response workload's rate
	// (sockperf, qperf), MetricRequests an HTTP workload's (ab).
	MetricTransactions = "transactions_per_s"
	MetricRequests     = "requests_per_s"
	// MetricRetransmits is TCP retransmits summed over replicas.
	MetricRetransmits = "retransmits"
	// MetricJitter is a UDP receiver's jitter (RFC 3550), ms: iperf3's
	// own, or cnibench's receiver's for a load pktgen sent.
	MetricJitter = "jitter_ms"
	// Per-core metrics in summary rows (CPU >= 0).
	MetricCoreIdle    = "core_idle"
	MetricCoreSoftIRQ = "core_softirq"
	MetricCoreSystem  = "core_system"
	MetricCoreUser    = "core_user"
	MetricCoreNetRx   = "core_net_rx"
	MetricCorePoll    = "core_poll"
	// ClientCorePrefix names a per-core metric of the client node's own
	// cores (Sample.ClientCores): client_core_idle, ...
	ClientCorePrefix = "client_"
)
