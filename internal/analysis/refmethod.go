package analysis

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// PktgenJitter is RefMatch.Method for jitter of a load pktgen sent. The
// papers' jitter is iperf3's: its client stamps each datagram in user
// space as it sends it and its server times the datagram as it reads
// it, so both programs' scheduling is in the number. pktgen stamps its
// packets in the kernel as it builds them and cnibench's receiver takes
// the kernel's receive time (docs/workloads.md): the same RFC 3550
// formula over other clocks' readings.
const PktgenJitter = "the paper's timed by iperf3, ours from pktgen's stamps"

// PinFellBack is RefMatch.Method where a cell the number rests on ran
// another placement than its workload asked for: a placement name this
// machine could not honour (other-numa on one NUMA node) with
// pin.fallback: mark ran the nearest one, and its samples carry
// MetricPinNotComparable. nic-modes' "numa-other / numa-same = 0.220"
// beside ours from two placements on one node compares nothing.
const PinFellBack = "not comparable: placement fell back (env.json notes)"

// MetricPinNotComparable is 1 in every sample of a variant whose
// placement fell back (the workload package's name for it,
// workload.MetricPinNotComparable, which analysis does not import): a
// flag on the cell, not a measurement.
const MetricPinNotComparable = "pin_not_comparable"

// PinFellBackCells are the cells whose samples carry
// MetricPinNotComparable.
func PinFellBackCells(rows []Row) map[results.Cell]bool {
	out := map[results.Cell]bool{}
	for _, r := range rows {
		if r.Metric == MetricPinNotComparable && r.CPU < 0 && r.N > 0 && r.Mean > 0 {
			out[r.Cell] = true
		}
	}
	return out
}

// windowTotals are the metrics a trial sums over its measured window
// (iperf3's end.sum_sent.retransmits covers -t, the window, not the
// warm-up -O omits): a published total over a 5-minute test set beside
// ours over a 4-second one differs 75-fold with nothing measured
// differently. Only rates per second compare.
var windowTotals = map[string]bool{results.MetricRetransmits: true}

// pktgenSent are the workload variants (as cells name them) whose UDP
// load pktgen sends.
func pktgenSent(s *study.Study) map[string]bool {
	out := map[string]bool{}
	for _, v := range s.Variants() {
		if v.UDPSender() == study.SenderPktgen {
			out[v.Name] = true
		}
	}
	return out
}

// CPPOneNode is RefMatch.Method for a CPU cost per packet of an
// inter-node workload in a run whose nodes ran on two kernels: the
// server node's agent ran perf, which sampled that node's CPUs alone
// (collect's cpp), where seed 004's inter-host numbers add the sender's
// and the receiver's cycles ("on both the sender and receiver host").
// The local engine's perf, and a node agent's on nodes that share a
// kernel, sample the one machine both ends run on: no note there.
const CPPOneNode = "ours is the server node's CPUs alone (perf on one of two kernels); the paper's both hosts' cycles"

// markMethods sets Method on the references whose matched rows were
// measured otherwise than the published number: the jitter of a load
// pktgen sent, a total over a window (windowTotals), whose length and
// rate per second Method gives (a study states its paper's test length
// in the reference's note, as the built-in ones do), a node's CPU %
// or memory % that is the whole machine's (shared, SharedNodeReadings),
// and a cost per packet of one node of two (cppOneNode, the variants
// cppOneNodeVariants names); and, before any, a cell whose placement
// fell back (fellBack, PinFellBackCells), the numerator's or the one a
// ratio divides by.
func markMethods(refs []RefMatch, pktgen map[string]bool, window time.Duration, fellBack map[results.Cell]bool, shared SharedNodes, cppOneNode map[string]bool) {
	for i := range refs {
		m := &refs[i]
		switch {
		case m.Reference.Metric == results.MetricJitter && slices.ContainsFunc(m.Rows, func(k Key) bool { return pktgen[k.Workload] }):
			m.Method = PktgenJitter
		case cppCost(m.Reference.Metric) && slices.ContainsFunc(m.Rows, func(k Key) bool { return cppOneNode[k.Workload] }):
			m.Method = CPPOneNode
		case windowTotals[m.Reference.Metric] && m.Reference.Value != nil && len(m.Rows) > 0 && window > 0:
			m.Method = totalMethod(m.MeanLow, m.MeanHigh, window)
		case len(m.Rows) > 0 && shared.Metrics[m.Reference.Metric]:
			m.Method = shared.method(m.Reference.Metric)
		}
		if fellBackRef(m, fellBack) {
			m.Method = strings.TrimSuffix(PinFellBack+"; "+m.Method, "; ")
		}
	}
}

// markMethods marks the model's references (markMethods) with what the
// run recorded of its nodes in env (its engine and shared_kernel); nil
// where the run's env.json is not at hand (Build), which leaves the
// nodes' kernels to the rows (SharedNodeReadings) and marks no cost per
// packet. Then markDatapathMethods adds what env says of the datapaths:
// how Table III's counts were counted, and a stand-in's difference; and
// markCoreMethods which core took the softirqs, the paper's and ours,
// beside a per-core number.
func (m *Model) markMethods(s *study.Study, env *results.Env) {
	for i := range m.References {
		m.References[i].Method = ""
	}
	shared := env != nil && env.SharedKernel
	var machine []int
	if env != nil {
		machine = env.MachineCPUs
	}
	markMethods(m.References, pktgenSent(s), measuredWindow(s), PinFellBackCells(m.Rows), SharedNodeReadings(s, m.Rows, shared, machine), cppOneNodeVariants(s, env))
	markDatapathMethods(m.References, env)
	markCoreMethods(m.References, m.Rows, s)
}

// cppOneNodeVariants are the workload variants (as cells name them)
// whose cost per packet a run on env measured on the server node alone:
// those with cpp: true and the client on the other node, in a run of the
// kube engine whose nodes did not share a kernel (CPPOneNode).
func cppOneNodeVariants(s *study.Study, env *results.Env) map[string]bool {
	out := map[string]bool{}
	if s == nil || env == nil || env.Engine != "kube" || env.SharedKernel {
		return out
	}
	for _, v := range s.Variants() {
		if v.CPP && !v.ClientOnServerNode() {
			out[v.Name] = true
		}
	}
	return out
}

// cppCost says whether metric is a cost per packet (cpp_<component>_<unit>
// or the total; the unit is cycles or ns), not the packet counts beside
// them (internal/metrics/cpp's names, which analysis does not import).
func cppCost(metric string) bool {
	return strings.HasPrefix(metric, "cpp_") && (strings.HasSuffix(metric, "_cycles") || strings.HasSuffix(metric, "_ns"))
}

// fellBackRef reports whether a matched row of m, or the row its ratio
// divides by or its difference subtracts (RatioKey's), is of a cell
// whose placement fell back.
func fellBackRef(m *RefMatch, fellBack map[results.Cell]bool) bool {
	for _, k := range m.Rows {
		den := k.Cell
		den.Datapath = cmp.Or(m.Reference.Against, den.Datapath)
		den.Workload = cmp.Or(m.Reference.AgainstWorkload, den.Workload)
		if fellBack[k.Cell] || m.Reference.Compares() && fellBack[den] {
			return true
		}
	}
	return false
}

// measuredWindow is the part of a trial its workload measures: the
// duration less the warm-up.
func measuredWindow(s *study.Study) time.Duration {
	return s.Spec.Duration.Duration - s.Spec.Warmup.Duration
}

// totalMethod says over how long our totals ran and what they are per
// second: "a total over the test: ours over 4 s, 912.5/s; the paper's
// over its own test".
func totalMethod(low, high float64, window time.Duration) string {
	sec := window.Seconds()
	f := Scale{Factor: 1, Decimals: -1}.Format
	rate := f(low/sec) + "/s"
	if high != low {
		rate = f(low/sec) + " to " + f(high/sec) + "/s"
	}
	return "a total over the test: ours over " + strconv.FormatFloat(sec, 'f', -1, 64) + " s, " + rate + "; the paper's over its own test"
}

// nodeTwins pairs each node metric recorded under the client's name with
// the server's (internal/collect's nodes collector, whose names analysis
// does not import).
var nodeTwins = map[string]string{
	"node_cpu_percent_client":    "node_cpu_percent_server",
	"node_memory_percent_client": "node_memory_percent_server",
}

// SharedNodes says which client-node readings of a run are the whole
// machine's. Where the emulated nodes run on one kernel (the local
// engine, a kind-style cluster on one machine) the collector reads one
// /proc for both and records it once, under the client's name, with no
// _server row (memory always, CPU unless the nodes are pinned apart):
// the seed-003 paper's Table IV is its client node alone.
type SharedNodes struct {
	// Metrics are the client metrics recorded without their server twin.
	Metrics map[string]bool
	// CPUs is how many CPUs the CPU reading averages (collect's
	// countedCPUs): where spec.nodes pins the client, its list; else the
	// CPUs the local engine's nodes share (env.json's machine_cpus,
	// cnibench's cpuset); else, in a run that did not record them or on
	// a cluster, every CPU of the per-core rows.
	CPUs int
	// Pinned is the client node's CPU list, "" when not pinned.
	Pinned string
	// Allowed is the list the reading averages where it is fewer CPUs
	// than the machine has (machine_cpus narrower than the per-core
	// rows, every CPU of /proc/stat): "" otherwise. Of is the machine's
	// count then.
	Allowed string
	Of      int
}

// SharedNodeReadings finds them in a run's rows. machine are the CPUs
// the local engine's nodes share (results.Env.MachineCPUs; nil where not
// recorded), which an unpinned node's CPU reading averages over.
// sharedKernel is what the run recorded (results.Env.SharedKernel):
// nodes on one kernel read
// one /proc, so the client's memory reading is the machine's, and its CPU
// reading too unless spec.nodes pins the nodes to different CPUs (the
// nodes collector's rule, collect.sharedNodes). A run that did not
// record it reads false, as a run on two kernels does (the field is a
// plain bool, omitted when false): there the sign in the rows decides, a
// client metric of nodeTwins with rows and no row of its server twin
// anywhere in the run (the collector's, run-wide, of one kernel's
// reading), which a run on two kernels does not show.
func SharedNodeReadings(s *study.Study, rows []Row, sharedKernel bool, machine []int) SharedNodes {
	seen, cores := map[string]bool{}, map[int]bool{}
	for _, r := range rows {
		if r.N > 0 {
			seen[r.Metric] = true
		}
		if r.CPU >= 0 {
			cores[r.CPU] = true
		}
	}
	out := SharedNodes{Metrics: map[string]bool{}, CPUs: len(cores)}
	for client, server := range nodeTwins {
		switch {
		case !seen[client]:
		case sharedKernel:
			out.Metrics[client] = strings.HasPrefix(client, "node_memory_percent_") || pinnedAlike(s)
		case !seen[server]:
			out.Metrics[client] = true
		}
	}
	switch {
	case s != nil && s.Spec.Nodes.Client.CPUs != "":
		out.Pinned = s.Spec.Nodes.Client.CPUs
		set, err := cpuset.Parse(out.Pinned) // validated with the study
		if err == nil {
			out.CPUs = len(set)
		}
	case len(machine) > 0:
		if len(machine) < len(cores) {
			out.Allowed, out.Of = cpuset.Set(machine).String(), len(cores)
		}
		out.CPUs = len(machine)
	}
	return out
}

// pinnedAlike says whether the study's nodes count the same CPUs (neither
// pinned, or pinned to one list): on one kernel, then, the client's CPU
// reading is the server's too.
func pinnedAlike(s *study.Study) bool {
	if s == nil {
		return true
	}
	c, v := s.Spec.Nodes.Client.CPUs, s.Spec.Nodes.Server.CPUs
	if c == "" || v == "" {
		return c == v
	}
	cs, err1 := cpuset.Parse(c)
	vs, err2 := cpuset.Parse(v)
	return err1 == nil && err2 == nil && slices.Equal(cs, vs)
}

// method says what our reading of metric is beside the paper's client
// node: "ours is the whole machine's 2 CPUs, both emulated nodes on one
// kernel; the paper's its client node alone".
func (s SharedNodes) method(metric string) string {
	const both, paper = ", both emulated nodes on one kernel", "; the paper's its client node alone"
	switch {
	case strings.HasPrefix(metric, "node_memory_percent_"):
		return "ours is the whole machine's memory" + both + paper
	case s.Pinned != "":
		return "ours is CPUs " + s.Pinned + ", which both emulated nodes are pinned to on one kernel" + paper
	case s.Allowed != "":
		return "ours is CPUs " + s.Allowed + ", the " + strconv.Itoa(s.CPUs) + " of the machine's " + strconv.Itoa(s.Of) +
			" that cnibench's cpuset lets both emulated nodes use, on one kernel" + paper
	case s.CPUs > 0:
		return "ours is the whole machine's " + strconv.Itoa(s.CPUs) + " CPUs" + both + paper
	}
	return "ours is the whole machine's CPUs" + both + paper
}
