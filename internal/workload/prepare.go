package workload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
)

// Preflight of the options the runner, not the tool, must check against
// this machine and the built datapaths before anything changes: placement
// names (pin: {server: same-numa}), the MSS bound of each datapath's pod
// MTU, the loss-ceiling search's pktgen sender, and a task tool on a
// datapath whose pods have no network of their own. Study validation
// checks everything that needs no machine; what is left needs the CPU
// topology, the datapaths' MTUs or the kernel.

// Machine is what Prepare checks and resolves against.
type Machine struct {
	// Topology is the CPUs of the machine the server runs on: this one's
	// (topology.Read("/sys")), or a cluster node's read through its agent.
	Topology topology.Topology
	// Where names that machine in notes and errors: "" for this machine,
	// "node NAME" for a cluster node.
	Where string
	// ServerCPUs and ClientCPUs are the emulated nodes' CPU lists (empty:
	// the node shares the machine).
	ServerCPUs, ClientCPUs cpuset.Set
	// Pktgen reports whether the kernel has pktgen (probe.Pktgen).
	Pktgen func() error
	// Remote is true when the nodes are other machines (kube engine):
	// this machine's probes and topology say nothing about theirs.
	Remote bool
	// Allowed are the CPUs of that machine a workload's processes may be
	// pinned to: this process's affinity, which the programs it starts
	// inherit; on a cluster node, the cpuset its pods run in (a static
	// CPU manager keeps the CPUs of Guaranteed pods out of it), as its
	// agent sees it. nil: unknown, every CPU of Topology.
	Allowed cpuset.Set
	// AllowedWhy says where Allowed comes from, for refusals.
	AllowedWhy string
	// Task reports whether a tool's trial is a task that starts pods
	// (spec.Tool.Task: podstartup) rather than traffic between pairs; nil:
	// no tool is (checkTask).
	Task func(tool string) bool
}

// where names the machine of the topology.
func (m Machine) where() string {
	if m.Where == "" {
		return "this machine"
	}
	return m.Where
}

// Datapath is one datapath of the run, for the MSS bound.
type Datapath struct {
	Name, Type string
	// PodMTU is the MTU of the pods' interfaces; 0 when unknown here
	// (a cluster's CNI), which skips the check.
	PodMTU int
	// SocketServices is set when ClusterIPs are translated only at the
	// socket (Cilium's kube-proxy replacement on a datapath without
	// per-packet Service translation): packets that no socket sent
	// (pktgen's) are never translated.
	SocketServices bool
	// HostNetwork: the pods share their node's namespace, so a client
	// and a server on one node are one namespace.
	HostNetwork bool
}

// MetricPinNotComparable is 1 in every sample of a variant whose
// placement name this machine could not honour and that ran the nearest
// placement instead (pin.fallback: mark).
const MetricPinNotComparable = "pin_not_comparable"

// Resolved is one variant's pin as run: CPU lists for taskset.
type Resolved struct {
	Server, Client string
	// NotComparable says why the placement is not the one asked for
	// (fallback mark); "" when it is.
	NotComparable string
}

// Prepared is the workload options resolved for this machine.
type Prepared struct {
	pins map[string]Resolved // by variant name
	// Notes say what each placement name resolved to, for env.json.
	Notes []string
}

// Apply returns the variant with its pin as resolved: placement names
// replaced by CPU lists. A nil Prepared or a variant without names is
// returned as is.
func (p *Prepared) Apply(w study.Workload) study.Workload {
	if p == nil {
		return w
	}
	r, ok := p.pins[w.Name]
	if !ok {
		return w
	}
	pin := *w.Pin
	pin.Server, pin.Client = r.Server, r.Client
	w.Pin = &pin
	return w
}

// Mark records in a sample's metrics that its placement is not the one
// the study asked for.
func (p *Prepared) Mark(w study.Workload, metrics map[string]float64) {
	if p == nil || metrics == nil {
		return
	}
	if r, ok := p.pins[w.Name]; ok && r.NotComparable != "" {
		metrics[MetricPinNotComparable] = 1
	}
}

// Prepare checks and resolves the options of every variant of the
// study's workloads (spec.workloads, unexpanded); an error is a preflight
// error (exit 2, nothing changed), each problem marked with its workload's
// field (study.At) so that it is reported at the workload's line.
func Prepare(workloads []study.Workload, m Machine, dps []Datapath) (*Prepared, error) {
	p := &Prepared{pins: map[string]Resolved{}}
	var errs []error
	for i, base := range workloads {
		field := fmt.Sprintf("spec.workloads[%d]", i)
		senderOK := true
		if err := checkCPP(base, dps); err != nil {
			errs = append(errs, study.At(field+".cpp", err))
		}
		if err := checkTask(base, m, dps); err != nil {
			errs = append(errs, study.At(field, err))
		}
		for _, w := range base.Variants() {
			if err := checkMSS(w, dps); err != nil {
				errs = append(errs, study.At(field, err))
			}
			// One refusal of the sender per workload: the variants of a
			// sweep share it, and the first says why.
			if err := checkSender(senderName(base, w), w, m, dps); err != nil && senderOK {
				errs = append(errs, study.At(field, err))
				senderOK = false
			}
			if err := checkPinCPUs(w, m); err != nil {
				errs = append(errs, study.At(field, fmt.Errorf("workload %s: %w", w.Name, err)))
				continue
			}
			r, note, ok, err := resolvePin(w, m)
			if err != nil {
				errs = append(errs, study.At(field, fmt.Errorf("workload %s: %w", w.Name, err)))
			} else if ok {
				p.pins[w.Name] = r
				p.Notes = append(p.Notes, fmt.Sprintf("workload %s: %s", w.Name, note))
			}
		}
	}
	return p, errors.Join(errs...)
}

// checkCPP refuses the CPU cost per packet of a workload whose two ends
// are one namespace: with both pods on one node of a host-network
// datapath (placement intra-node, or target hairpin, whose client runs in
// the server pod and reaches it through its Service) the traffic goes
// over the loopback, which no measured device counts (the node's
// underlay holds only stray packets), so every trial failed with no
// packets counted, or a few ARP packets made each cost enormous.
func checkCPP(w study.Workload, dps []Datapath) error {
	if !w.CPP || !w.ClientOnServerNode() {
		return nil
	}
	why, instead := "both ends of a one-node workload", "place it inter-node"
	if !w.IntraNode() {
		why, instead = "target hairpin's client runs in the server pod, and both ends", "target pod or service"
	}
	for _, d := range dps {
		if d.HostNetwork {
			return fmt.Errorf("workload %s: cpp counts the packets of the server pods' device, and on datapath %s %s are the node's namespace, talking over the loopback: leave %s out of this workload's datapaths, or %s",
				w.Name, d.Name, why, d.Name, instead)
		}
	}
	return nil
}

// checkTask refuses a task tool (a pod start-up burst) on a host-network
// datapath, whose pods are the node's namespace and have no network to
// start: the engine refused every trial's burst only once the cluster was
// built, and the run retried it until it gave the cells up.
func checkTask(w study.Workload, m Machine, dps []Datapath) error {
	if m.Task == nil || !m.Task(w.Tool) {
		return nil
	}
	for _, d := range dps {
		if d.HostNetwork {
			return fmt.Errorf("workload %s: %s starts pods and times their network's set-up, and datapath %s runs pods in the node's network (hostNetwork), so they have none to start: run %s in a study without datapath %s",
				w.Name, w.Tool, d.Name, w.Tool, d.Name)
		}
	}
	return nil
}

// checkMSS bounds the MSS by each datapath's pod MTU (MTU - 40): study
// validation knows only the underlay's and the study's MTU overrides, not
// a tunnel's overhead, which the built datapath knows. The datapath with
// the smallest pod MTU is named, with any others the MSS exceeds.
func checkMSS(w study.Workload, dps []Datapath) error {
	if w.MSS == 0 {
		return nil
	}
	var over []Datapath
	low := -1
	for _, d := range dps {
		if d.PodMTU == 0 || w.MSS <= d.PodMTU-study.MSSHeaders {
			continue
		}
		if low < 0 || d.PodMTU < over[low].PodMTU {
			low = len(over)
		}
		over = append(over, d)
	}
	if low < 0 {
		return nil
	}
	var others []string
	for i, d := range over {
		if i != low {
			others = append(others, d.Name)
		}
	}
	also := ""
	if len(others) > 0 {
		also = " (" + strings.Join(others, ", ") + " too)"
	}
	return fmt.Errorf("workload %s: mss %d: datapath %s has pod MTU %d, so a TCP segment carries at most %d bytes (MTU - %d)%s; lower mss or give the datapath a larger mtu",
		w.Name, w.MSS, over[low].Name, over[low].PodMTU, over[low].PodMTU-study.MSSHeaders, study.MSSHeaders, also)
}

// DefaultPktgenPayload is the pktgen sender's UDP payload when the
// workload gives no length: a 1500-byte MTU's, as seed 001's UDP tests.
const DefaultPktgenPayload = 1472

// PktgenPayload is the pktgen sender's UDP payload for a variant's
// length, a size as the study writes it ("1400", "2K"; study.ParseBytes,
// as iperf3 -l reads it), or DefaultPktgenPayload without one. Study
// validation bounds it (study.MinPktgenPayload..MaxPktgenPayload).
func PktgenPayload(length string) (int, error) {
	if length == "" {
		return DefaultPktgenPayload, nil
	}
	n, ok := study.ParseBytes(length)
	if !ok || n < study.MinPktgenPayload || n > study.MaxPktgenPayload {
		return 0, fmt.Errorf("length %q is not a UDP payload pktgen sends (%d to %d bytes)", length, study.MinPktgenPayload, study.MaxPktgenPayload)
	}
	return int(n), nil
}

// checkSender refuses a pktgen sender: on a cluster, whose pods are not
// namespaces of this machine; on a kernel without pktgen with the probe's
// reason; and on a MACVLAN datapath with both pods on one node, because
// pktgen feeds packets to the device driver directly, past the MACVLAN
// bridge layer, so they never reach the sibling (seed 001, section 3.4);
// on a host-network datapath with both pods on one node, which are then
// one namespace whose route to itself is the loopback;
// and toward a Service that only a socket-level proxy translates.
// The errors call the workload name (senderName).
func checkSender(name string, w study.Workload, m Machine, dps []Datapath) error {
	if !strings.EqualFold(w.Protocol, "udp") || w.UDPSender() != study.SenderPktgen {
		return nil
	}
	field := w.SenderField()
	if m.Remote {
		return fmt.Errorf("workload %s: %s pktgen drives the kernel in the pods' namespaces on this machine: the local engine only; use sender iperf3 on a cluster", name, field)
	}
	if m.Pktgen != nil {
		if err := m.Pktgen(); err != nil {
			return fmt.Errorf("workload %s: %s pktgen: %w", name, field, err)
		}
	}
	payload, err := PktgenPayload(w.Length)
	if err != nil {
		return fmt.Errorf("workload %s: %s pktgen: %w", name, field, err)
	}
	for _, d := range dps {
		if d.PodMTU > 0 && payload+28 > d.PodMTU {
			return fmt.Errorf("workload %s: %s pktgen sends %d-byte datagrams whole (it does not fragment), more than datapath %s's pod MTU %d carries (%d bytes of payload): set length", name, field, payload, d.Name, d.PodMTU, d.PodMTU-28)
		}
		if d.SocketServices && (w.Target == study.TargetService || w.Target == study.TargetHairpin) {
			return fmt.Errorf("workload %s: %s pktgen cannot reach a Service on datapath %s: its Service proxy (Cilium's kube-proxy replacement) "+
				"translates the ClusterIP when a socket connects, and pktgen's packets come from no socket; use sender iperf3, or target pod", name, field, d.Name)
		}
		if d.HostNetwork && w.IntraNode() {
			return fmt.Errorf("workload %s: %s pktgen cannot send to a server in its own namespace (datapath %s runs its pods in the node's, "+
				"and placement intra-node puts both there): pktgen hands its packets to a device's driver, and the route to a local "+
				"address is the loopback, where it finds no neighbour to address them to; leave %s out of this workload's datapaths, "+
				"or use sender iperf3", name, field, d.Name, d.Name)
		}
		if d.Type == "macvlan" && w.IntraNode() {
			return fmt.Errorf("workload %s: %s pktgen cannot feed a MACVLAN-to-MACVLAN path on one host (datapath %s): "+
				"pktgen hands packets to the device driver, past the MACVLAN bridge layer that would deliver them to the sibling", name, field, d.Name)
		}
	}
	return nil
}

// senderName is how a refusal of variant w's sender names it: as the
// study named the workload, since the points of a sweep of rates share
// the refusal; by the point where the sweep is of lengths, which decide
// whether a datagram fits the path.
func senderName(base, w study.Workload) string {
	if len(base.Lengths) > 0 {
		return w.Name
	}
	return base.Name
}
