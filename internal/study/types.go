// Package study defines the versioned study file format (cnibench/v1alpha1),
// loads and validates it without touching the host, and expands it into the
// cells a run executes.
//
// A study is pure data: validation never needs root, and every error names
// the file, line and field so users can fix their YAML.
package study

import (
	"maps"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// APIVersion and Kind identify study files.
const (
	APIVersion = "cnibench/v1alpha1"
	Kind       = "Study"
)

// Study is a parsed study file.
type Study struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   Metadata `yaml:"metadata"`
	Spec       Spec     `yaml:"spec"`
	// Profiles are named partial specs merged over Spec by --profile (and
	// --quick, which selects "quick"). They are kept as raw YAML.
	Profiles map[string]any `yaml:"profiles,omitempty"`

	// Source is where the study was read from (file path or "builtin:NAME").
	Source string `yaml:"-"`
	// Profile is the profile applied, if any.
	Profile string `yaml:"-"`
	// where locates a field in the text the study was parsed from, for
	// problems found after parsing (Locate); nil for a study built in code.
	where locator
	// written are the cells' names the file itself gives, in spec and in
	// each profile, before the run's profile and --set (published.go);
	// nil for a study built in code.
	written *cellNames
	// stored says it was read as a run's study.yaml (Options.Stored).
	stored bool
}

// Metadata names and describes a study.
type Metadata struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	Source      string `yaml:"source,omitempty"`
}

// Spec is the experiment matrix and its parameters.
type Spec struct {
	Nodes     Nodes      `yaml:"nodes,omitempty"`
	Datapaths []Datapath `yaml:"datapaths"`
	// Link is the underlay link between the emulated nodes.
	Link      Link       `yaml:"link,omitempty"`
	Tunings   []Tuning   `yaml:"tunings"`
	Baseline  string     `yaml:"baseline,omitempty"`
	Workloads []Workload `yaml:"workloads"`
	Replicas  []int      `yaml:"replicas"`
	// Trials is a fixed count or {min, max} for adaptive repetitions;
	// Precision, Margin and Budget steer the adaptive runner (adaptive.go).
	Trials    Trials     `yaml:"trials"`
	Precision *Precision `yaml:"precision,omitempty"`
	// Margin is the equivalence margin of decisions against the baseline
	// (default 2%): within it a tuning is "equal".
	Margin *Percent `yaml:"margin,omitempty"`
	// Budget bounds the run's machine time (0: none); --budget overrides.
	Budget Duration `yaml:"budget,omitempty" zero:"ok"`
	// Noise sets the noise guard's thresholds (default DefaultNoise).
	Noise    *Noise   `yaml:"noise,omitempty"`
	Duration Duration `yaml:"duration"`
	Warmup   Duration `yaml:"warmup,omitempty" zero:"ok"`
	// Cooldown is a pause between trials so queues drain and CPU settles.
	Cooldown  Duration    `yaml:"cooldown,omitempty" zero:"ok"`
	Reference []Reference `yaml:"reference,omitempty"`
	// Impairments are network impairments (netem), one more axis of
	// cells: each trial runs with one applied at ImpairAt (impairment.go).
	Impairments []Impairment `yaml:"impairments,omitempty"`
	ImpairAt    ImpairAt     `yaml:"impairAt,omitempty"`
	// Verdict holds the pass/fail criteria of the verdict table.
	Verdict *Verdict `yaml:"verdict,omitempty"`
	// Only limits a run to the cells its selectors pick and the cells
	// those are compared with (only.go); empty: every cell.
	Only []CellSelector `yaml:"only,omitempty"`
	// SkipUnavailable drops datapaths this machine cannot build (missing
	// kernel feature or tool) with a note, instead of refusing the run:
	// for surveys such as "every datapath this kernel has".
	SkipUnavailable bool `yaml:"skipUnavailable,omitempty"`
}

// Nodes describes the emulated nodes: the server node (where servers run
// and tunings apply) and the client node.
type Nodes struct {
	Server NodeSpec `yaml:"server,omitempty"`
	Client NodeSpec `yaml:"client,omitempty"`
	// UnderlayMTU is the MTU of the underlay link (the paper's eth1).
	UnderlayMTU int `yaml:"underlayMTU,omitempty" zero:"underlayMTU"`
}

// NodeSpec is one node's settings.
type NodeSpec struct {
	// CPUs is a CPU list ("0-1,3") the node's processes are pinned to.
	// Empty means the node shares all CPUs of the machine.
	CPUs string `yaml:"cpus,omitempty"`
}

// Workload is one traffic generator configuration. Fields a tool does not
// use are rejected by validation (see toolOptions). A list field (rates,
// lengths, parallels, messageSizes, concurrency, background.connections)
// is a sweep: the workload expands into one variant per value (Variants),
// each its own cell named "NAME@VALUE".
type Workload struct {
	Name     string `yaml:"name,omitempty"`
	Tool     string `yaml:"tool"`
	Protocol string `yaml:"protocol,omitempty"`
	// Length is the write/read buffer size (iperf3 -l), e.g. "128K"; for
	// UDP it is the datagram payload size.
	Length  string   `yaml:"length,omitempty"`
	Lengths []string `yaml:"lengths,omitempty"`
	// Rate is the offered bitrate per stream (iperf3 -b), e.g. "500M".
	Rate  string   `yaml:"rate,omitempty"`
	Rates []string `yaml:"rates,omitempty"`
	// Parallel is the number of streams per client (iperf3 -P).
	Parallel  int   `yaml:"parallel,omitempty" zero:"option"`
	Parallels []int `yaml:"parallels,omitempty"`
	// Reverse makes the server send (iperf3 -R).
	Reverse bool `yaml:"reverse,omitempty"`
	// Placement is inter-node (client and server on different nodes, the
	// default) or intra-node (both on the server node).
	Placement string `yaml:"placement,omitempty"`
	// Pin binds the server and client processes to CPU lists.
	Pin *Pin `yaml:"pin,omitempty"`
	// Target is what the client addresses: the server pod's IP (pod), a
	// ClusterIP Service in front of it (service, through kube-proxy's
	// rules), or that Service from inside the server pod (hairpin);
	// empty is the engine's own way (pod IP locally, the Service on a
	// cluster).
	Target string `yaml:"target,omitempty"`
	// MessageSize is the request and response size of a request/response
	// workload (sockperf --msg-size), bytes.
	MessageSize  int   `yaml:"messageSize,omitempty" zero:"option"`
	MessageSizes []int `yaml:"messageSizes,omitempty"`
	// MSS is the TCP maximum segment size (iperf3 -M), bytes; MSSes
	// sweeps it (seed 001's Fig. 16 packet sizes for TCP).
	MSS   int   `yaml:"mss,omitempty" zero:"option"`
	MSSes []int `yaml:"msses,omitempty"`
	// LossCeiling ("3%") makes a UDP trial search first for the highest
	// offered rate whose loss stays under it (short probes, bisection)
	// and then measure at that rate, as seed 001 held pktgen's rate so
	// that loss stayed under 3%. CeilingSearch tunes the search.
	LossCeiling   string         `yaml:"lossCeiling,omitempty"`
	CeilingSearch *CeilingSearch `yaml:"ceilingSearch,omitempty"`
	// Sender is what offers a UDP workload's load, at rate/rates or in a
	// loss-ceiling search: "iperf3" (default, its client) or "pktgen"
	// (the kernel's packet generator in each client pod, each server
	// pod with Reverse; seed 001's sender), for a sender that must keep
	// up with rates one iperf3 process cannot send (UDPSender).
	Sender string `yaml:"sender,omitempty"`
	// Concurrency lists the HTTP client concurrencies to sweep (ab -c),
	// or how many pods start at once (podstartup).
	Concurrency []int `yaml:"concurrency,omitempty"`
	// Pods is how many pods a pod start-up trial starts, at most
	// Concurrency at a time; 0: as many as Concurrency (all at once).
	Pods int `yaml:"pods,omitempty" zero:"option"`
	// Requests bounds an HTTP trial's measured run by a request count per
	// client (ab -n), as seed 004 ran 500K requests per test; the run
	// ends at the count or at the trial's end, whichever comes first.
	// 0: time-bounded only.
	Requests int `yaml:"requests,omitempty" zero:"option"`
	// Size is the HTTP response body size, e.g. "5M".
	Size string `yaml:"size,omitempty"`
	// Background runs capped TCP connections beside the measured pair.
	Background *Background `yaml:"background,omitempty"`
	// CPP samples the whole machine with perf during the measured window
	// and reports the CPU cost per packet by kernel component.
	CPP bool `yaml:"cpp,omitempty"`
	// Counters records, over the measured window, the packet and drop
	// counters of the server node's devices (ip -s link) and the iptables
	// chains and rules packets traversed on both nodes (iptables-save -c).
	Counters bool `yaml:"counters,omitempty"`

	// Base is the name of the workload a variant was expanded from and
	// Param the swept value ("500M"); both empty for a plain workload.
	Base  string `yaml:"-"`
	Param string `yaml:"-"`
}

// Pin binds processes to CPUs: a CPU list ("0", "2-3") or a placement
// name (same-numa, other-numa, same-core, other-core, none) resolved at
// preflight from the CPU topology of the machine the server runs on (this
// one on the local engine, the server's node through its agent on a
// cluster; internal/topology), relative to the other end (see
// workload.Prepare). Empty leaves them on their node's CPUs.
type Pin struct {
	Server string `yaml:"server,omitempty"`
	Client string `yaml:"client,omitempty"`
	// Fallback says what a name this machine cannot honour does (other-numa
	// on one NUMA node, same-core without SMT): "refuse" (default, a
	// preflight error) or "mark" (run the nearest placement there is and
	// mark the samples not comparable).
	Fallback string `yaml:"fallback,omitempty"`
}

// Pin fallbacks.
const (
	PinRefuse = "refuse"
	PinMark   = "mark"
)

// CeilingSearch bounds the loss-ceiling search: offered rates per stream
// from Low (must pass) to High, resolution Step, each probe Probe long.
// Empty fields take the Default* values below.
type CeilingSearch struct {
	Low   string   `yaml:"low,omitempty"`
	High  string   `yaml:"high,omitempty"`
	Step  string   `yaml:"step,omitempty"`
	Probe Duration `yaml:"probe,omitempty" zero:"probe"`
	// Sender is what offers the probes and the measured load: "iperf3"
	// (default) or "pktgen" (the kernel's packet generator, seed 001's
	// sender; probed at preflight and refused where missing).
	Sender string `yaml:"sender,omitempty"`
}

// Background is the load of seed 004: Connections TCP connections, each
// capped at Rate, spread evenly over Pairs extra pod pairs (iperf3 -P and
// -b per stream), running while the measured pair runs.
type Background struct {
	Connections []int  `yaml:"connections"`
	Pairs       int    `yaml:"pairs"`
	Rate        string `yaml:"rate"`
}

// Placements of a workload's client.
const (
	PlacementInterNode = "inter-node"
	PlacementIntraNode = "intra-node"
)

// IntraNode reports whether client and server share the server node.
func (w Workload) IntraNode() bool { return w.Placement == PlacementIntraNode }

// Reference is a published number set beside ours in the report.
type Reference struct {
	Datapath string `yaml:"datapath,omitempty" json:"datapath,omitempty"`
	// Workload is a workload's name (every variant of its sweep matches)
	// or one variant's, NAME@VALUE (one offered rate, one length).
	Workload string `yaml:"workload,omitempty" json:"workload,omitempty"`
	Tuning   string `yaml:"tuning,omitempty" json:"tuning,omitempty"`
	// Impairment names a study impairment ("none" for the unimpaired
	// cells); empty matches every cell.
	Impairment string `yaml:"impairment,omitempty" json:"impairment,omitempty"`
	Replicas   int    `yaml:"replicas,omitempty" json:"replicas,omitempty" zero:"replicas"`
	Metric     string `yaml:"metric" json:"metric"`
	CPU        *int   `yaml:"cpu,omitempty" json:"cpu,omitempty"`
	// Value is in the metric's unit; Normalized is relative to baseline.
	Value      *float64 `yaml:"value,omitempty" json:"value,omitempty"`
	Normalized *float64 `yaml:"normalized,omitempty" json:"normalized,omitempty"`
	// Ratio is the point's mean over the mean at the same point with
	// datapath Against and/or workload AgainstWorkload instead: papers
	// that compare attachment modes publish "A beats B by 7.93%" (ratio
	// 1.0793) or "binding to another NUMA node drops 77.99%" (0.2201),
	// not numbers of their hardware.
	Ratio *float64 `yaml:"ratio,omitempty" json:"ratio,omitempty"`
	// Difference is the point's mean minus the mean at the same other
	// point (Against and/or AgainstWorkload), in the metric's unit:
	// papers that give a cost as an amount ("one background connection
	// costs the test connection ~2 Gbps") without the number it was
	// taken from, which a ratio would need.
	Difference      *float64 `yaml:"difference,omitempty" json:"difference,omitempty"`
	Against         string   `yaml:"against,omitempty" json:"against,omitempty"`
	AgainstWorkload string   `yaml:"againstWorkload,omitempty" json:"against_workload,omitempty"`
	// UpTo makes the one number given (value, normalized, ratio or
	// difference) the low end of a published range: papers give a span
	// for a class of datapaths ("the VXLAN overlays 14 ~ 15.5 Gbps"),
	// not each one's number.
	UpTo *float64 `yaml:"upTo,omitempty" json:"up_to,omitempty"`
	Note string   `yaml:"note,omitempty" json:"note,omitempty"`
}

// Compares reports whether the reference sets two points of ours
// against each other (a ratio or a difference), not one point's number.
func (r Reference) Compares() bool { return r.Ratio != nil || r.Difference != nil }

// RatioTerms names the two points of a ratio or difference reference as
// tables print them: "macvlan / bridge", "numa-other / numa-same".
func (r Reference) RatioTerms() (num, den string) {
	switch {
	case r.AgainstWorkload == "":
		return r.Datapath, r.Against
	case r.Against == "":
		return r.Workload, r.AgainstWorkload
	}
	return r.Datapath + " " + r.Workload, r.Against + " " + r.AgainstWorkload
}

// Duration is a time.Duration written as "30s" in YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML parses Go duration strings ("30s", "1m30s").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return atNode(n, "invalid duration %q (use e.g. 30s, 1m)", n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return ShortDuration(d.Duration), nil }

// ProfileNames are the study's profile names in order, for the lists
// that show or go through every profile (studies, doctor, tests).
func (s *Study) ProfileNames() []string { return slices.Sorted(maps.Keys(s.Profiles)) }
