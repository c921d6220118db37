package advise

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// ReportVersion is the advice.json layout's version.
const ReportVersion = 1

// NotMeasured and NotProven are what the measured-effect and verdict
// columns say until --prove has measured a candidate: no number is shown
// that was not measured, and the way to measure it is said once.
const (
	NotMeasured = "not measured"
	NotProven   = "not proven: run with --prove"
	// Stopped is the verdict of a candidate whose A/B advise --prove was
	// stopped during or before (Ctrl-C): the pages are written all the
	// same, with the verdicts of the candidates proven before it.
	Stopped = "not proven: advise was stopped"
)

// Report is everything the pages show; the pages only render it.
type Report struct {
	Version   int       `json:"version"`
	Generated time.Time `json:"generated"`
	// Found is the inspection in a few lines for people.
	Found      []Finding           `json:"found"`
	Candidates []Entry             `json:"candidates"`
	Others     []Result            `json:"others"`
	Inspection *inspect.Inspection `json:"inspection"`
	// Runs are the run directories read (--run), and Seen what they
	// showed, with what answers it.
	Runs []string `json:"runs,omitempty"`
	Seen []Seen   `json:"seen,omitempty"`
	// Partial says of each run read what limits its findings: that it
	// ended before its cells were done (they come from what it measured
	// so far), that its study could not be read (the findings that need
	// it were not looked for), and what reading it tolerated (a missing
	// env.json, a truncated last line).
	Partial []string `json:"partial,omitempty"`
	// evaluated names the rules Build evaluated where they were not all
	// of them (--rule); nil for all. A finding the others answer says
	// they were not evaluated, not that no rule answers it.
	evaluated []string
}

// Finding is one line of the inspection summary.
type Finding struct {
	What  string `json:"what"`
	Value string `json:"value"`
}

// Entry is a candidate knob with its rationale and evidence.
type Entry struct {
	Result
	Title    string     `json:"title"`
	Evidence []Evidence `json:"evidence"`
	Risk     string     `json:"risk"`
	// Measured and Verdict are filled by --prove; NotMeasured and
	// NotProven until then.
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"`
	// VerdictWhy names the cells behind the verdict (--prove).
	VerdictWhy string `json:"verdict_why,omitempty"`
	// Proof is the A/B run behind Measured and Verdict (--prove).
	Proof *Proof `json:"proof,omitempty"`
	// Seen are the findings of a run (--run) its rule answers.
	Seen []Sighting `json:"seen,omitempty"`
}

// VerdictText is the verdict with the cells behind it, when proven.
func (e *Entry) VerdictText() string {
	if e.VerdictWhy == "" {
		return e.Verdict
	}
	return e.Verdict + ": " + e.VerdictWhy
}

// Verdicts of a proven candidate.
const (
	// Accepted: better than the machine as found, significantly and by
	// more than the margin, in some cell, and worse in none.
	Accepted = "accepted"
	// Rejected: worse in some cell, or decided in some and better beyond
	// the margin in none: it does not help here.
	Rejected = "rejected"
	// Undecided: no cell decided within the budget.
	Undecided = "undecided"
	// Failed: the A/B run failed (Proof.Error says how), or the runner
	// gave up a cell of B (ProofCell.GaveUp says why) while A's same
	// cell ran, and no cell is worse: B's trials failed every attempt
	// there, which no gain in another cell outweighs and no budget would
	// decide.
	Failed = "failed"
	// Unmeasured: no cell was judged, and in some the runner gave up A's
	// cell as well as B's (ProofCell.GaveUpA): the workload failed there
	// without the candidate too, so that is the machine's or the
	// workload's failure and says nothing of the candidate, for or
	// against. Like every verdict it leaves advise's exit code 0.
	Unmeasured = "not measured"
	// NotProvable: the rule has no A/B on emulated nodes (Rule.NoProof).
	NotProvable = "not provable here"
)

// Proof is a candidate's A/B run.
type Proof struct {
	// RunDir is the A/B's run directory; empty when the run left none
	// (it failed before it recorded anything).
	RunDir string `json:"run_dir"`
	// A and B name what was compared (tunings or datapath entries).
	A string `json:"a"`
	B string `json:"b"`
	// Metric is the metric Cells are decided on; where the cells' differ
	// (ProofCell.Metric), their names joined by ", ".
	Metric string  `json:"metric"`
	Margin float64 `json:"margin"`
	// Sets are the overrides the A/B applied to the workload-shape study.
	Sets []string `json:"sets"`
	// Shape says what that study was when it was not the built-in A/B
	// or the user's --study: a run's own, narrowed to where its finding
	// showed (advise --run).
	Shape string      `json:"shape,omitempty"`
	Cells []ProofCell `json:"cells"`
	// Also are the A/B's other compared metrics (latencies besides a
	// transactions/s verdict), over all trials at 95%: what B did to
	// them, not part of the verdict.
	Also []ProofMetric `json:"also,omitempty"`
	// Polling is how long each side's cores spun in cpuidle's polling
	// state, where it was measured and either side did: what a gain of
	// keeping cores out of deeper idle states costs.
	Polling []ProofPoll `json:"polling,omitempty"`
	// Reverted says what the run put back (every change, journaled).
	Reverted string `json:"reverted"`
	Error    string `json:"error,omitempty"`
	// Rerun is, for an undecided A/B, what deciding it would take.
	Rerun *ProofRerun `json:"rerun,omitempty"`
}

// ProofMetric is one more metric of an A/B, cell by cell.
type ProofMetric struct {
	Metric string      `json:"metric"`
	Cells  []ProofCell `json:"cells"`
}

// ProofPoll is the percent of the window the server node's cores spent
// polling (results.MetricCorePoll, their mean) with A and with B, in one
// cell.
type ProofPoll struct {
	Datapath   string  `json:"datapath,omitempty"`
	Impairment string  `json:"impairment,omitempty"`
	Workload   string  `json:"workload"`
	Replicas   int     `json:"replicas"`
	A          float64 `json:"a_percent"`
	B          float64 `json:"b_percent"`
}

// Where names the cell as ProofCell.Where does.
func (c ProofPoll) Where() string {
	return ProofCell{Datapath: c.Datapath, Impairment: c.Impairment, Workload: c.Workload, Replicas: c.Replicas}.Where()
}

// ProofRerun is a rerun of one candidate's A/B with the trial maximum
// that decides its undecided cells by their estimates (each cell's
// difference and spread, analysis.RerunToDecide).
type ProofRerun struct {
	// Args are the advise flags of that rerun, after "advise --prove".
	Args []string `json:"args"`
	// Cells of the Undecided ones have an estimate the rerun reaches.
	Cells     int `json:"cells"`
	Undecided int `json:"undecided"`
	// Seconds is the rerun's machine time in trials, at this run's trial
	// times.
	Seconds float64 `json:"seconds"`
}

// ProofCell is B against A at one workload variant and replica count.
type ProofCell struct {
	// Datapath and Impairment are set where the A/B had several of them
	// (a run's own study, advise --run): they tell its cells apart.
	Datapath   string `json:"datapath,omitempty"`
	Impairment string `json:"impairment,omitempty"`
	Workload   string `json:"workload"`
	Replicas   int    `json:"replicas"`
	// Metric is what the cell is compared on: in Proof.Cells the metric
	// it is decided on (a study may mix workloads decided on metrics of
	// either direction: pod start-up's startup_ms beside a bitrate), in
	// ProofMetric.Cells that metric's name again. Empty in an
	// advice.json written before it was recorded.
	Metric string `json:"metric,omitempty"`
	// N is the trials the cell's decision rests on: a stop's look's
	// (results.Stop.Judged), else all the trials compared.
	N          int      `json:"n"`
	Ratio      *float64 `json:"ratio"`
	Low        *float64 `json:"low"`
	High       *float64 `json:"high"`
	Method     string   `json:"method"`
	Confidence float64  `json:"confidence"`
	Decision   string   `json:"decision"`
	Reason     string   `json:"reason"`
	// Stop is why an undecided cell stopped (the runner's reason: its
	// maximum, the budget, or futility).
	Stop string `json:"stop,omitempty"`
	// GaveUp is why the runner gave B's cell up (a trial failed every
	// attempt; where the cell B was decided against was given up and is
	// not A's, as in a datapath A/B on a study of tunings, that as
	// well): the cell has no verdict, and neither has the candidate
	// (Failed) unless another cell is worse.
	GaveUp string `json:"gave_up,omitempty"`
	// GaveUpA is, for a cell of B given up, why the runner gave up A's
	// same cell too: both sides failed there, so the cell is neither
	// judged nor held against the candidate (Unmeasured when no other
	// cell is judged).
	GaveUpA string `json:"gave_up_a,omitempty"`
	// NotMeasured is why B's cell ran no trial: the budget was spent
	// before its block. The verdict rests on the other cells and says so.
	NotMeasured string `json:"not_measured,omitempty"`
	// Disturbed and DisturbedA count the trials of B's cell and of A's
	// that the noise guard found disturbed and counted because their
	// repeats were used up (analysis.CountedDisturbed).
	Disturbed  int `json:"disturbed,omitempty"`
	DisturbedA int `json:"disturbed_a,omitempty"`
}

// Where names a proof's cell: "http at 1 pair(s)", "flannel http at 1
// pair(s) delay" where the A/B had several datapaths or impairments.
func (c ProofCell) Where() string {
	out := fmt.Sprintf("%s at %d pair(s)", c.Workload, c.Replicas)
	if c.Datapath != "" {
		out = c.Datapath + " " + out
	}
	if c.Impairment != "" {
		out += " " + c.Impairment
	}
	return out
}

// Build evaluates rules on an inspection.
func Build(rules []*Rule, in *inspect.Inspection, now time.Time) *Report {
	rep := &Report{Version: ReportVersion, Generated: now.UTC(), Found: Summarize(in), Inspection: in,
		Candidates: []Entry{}, Others: []Result{}}
	if len(rules) < len(ruleFiles) {
		rep.evaluated = []string{}
		for _, r := range rules {
			rep.evaluated = append(rep.evaluated, r.Name)
		}
	}
	for _, res := range EvaluateAll(rules, in) {
		if res.Status != Candidate {
			rep.Others = append(rep.Others, res)
			continue
		}
		rep.Candidates = append(rep.Candidates, Entry{Result: res, Title: res.Rule.Title, Evidence: res.Rule.Evidence,
			Risk: res.Rule.Risk, Measured: NotMeasured, Verdict: NotProven})
	}
	return rep
}

// Summarize turns an inspection into lines for people.
func Summarize(in *inspect.Inspection) []Finding {
	if in.Record != nil {
		return recordSummary(in)
	}
	var f []Finding
	add := func(what, format string, a ...any) { f = append(f, Finding{what, fmt.Sprintf(format, a...)}) }
	if in.Source != "" {
		add("machine", "%s", in.Source)
	}
	add("kernel", "%s", orUnknown(in.Kernel))
	add("CPUs", "%d on %d NUMA node(s)", in.CPUs, in.NUMANodes)
	add("underlay", "%s", orUnknown(in.Underlay))
	for _, n := range in.NICs {
		if n.Virtual {
			what := "no device behind it: a veth, as on kind-style nodes"
			if n.Name == in.Underlay && len(in.UnderlayLower) > 0 {
				what = "stacked over " + strings.Join(in.UnderlayLower, ", ") + ": a VLAN, macvlan, bond or Open vSwitch port"
			}
			add("NIC "+n.Name, "virtual (%s), MTU %d, %d rx / %d tx queues", what, n.MTU, n.RxQueues, n.TxQueues)
			continue
		}
		add("NIC "+n.Name, "driver %s, MTU %d, %d rx / %d tx queues, NUMA node %s", orUnknown(n.Driver), n.MTU, n.RxQueues, n.TxQueues, numa(n.NUMANode))
		if n.RSS != nil && n.RSS.Table == 0 {
			add("RSS "+n.Name, "%d ring(s), no indirection table reported", n.RSS.Rings)
		} else if n.RSS != nil {
			add("RSS "+n.Name, "%d ring(s), indirection table of %d over rings %v, hash %s", n.RSS.Rings, n.RSS.Table, n.RSS.Used, orUnknown(n.RSS.Hash))
		}
		var irqs []string
		for _, q := range n.IRQs {
			irqs = append(irqs, fmt.Sprintf("%d %s -> CPUs %s", q.IRQ, q.Name, q.CPUs))
		}
		if len(irqs) > 0 {
			add("IRQs "+n.Name, "%s", strings.Join(irqs, "; "))
		}
		var steer []string
		for _, q := range n.Queues {
			steer = append(steer, fmt.Sprintf("%s rps_cpus=%s rps_flow_cnt=%d", q.Name, q.RPSCPUs, q.FlowCnt))
		}
		if len(steer) > 0 {
			add("RPS/RFS "+n.Name, "%s", strings.Join(steer, "; "))
		}
		if len(n.Offloads) > 0 {
			add("offloads "+n.Name, "%s", offloads(n.Offloads))
		}
	}
	if v, ok := in.Sysctls[inspect.SysRPSSockFlowEntries]; ok {
		add("rps_sock_flow_entries", "%d", v)
	}
	for _, t := range in.Tunnels {
		add("tunnel "+t.Name, "%s, MTU %d; %s", encap(t), t.MTU, offloads(t.Offloads))
	}
	for _, b := range in.Bridges {
		add("bridge "+b.Name, "MTU %d", b.MTU)
	}
	for _, g := range in.PodLinks {
		add("pod links "+g.Prefix+"*", "%d, MTU %d-%d", g.Count, g.MinMTU, g.MaxMTU)
	}
	add("CNI", "%s", cniString(in.CNI))
	add("netfilter", "iptables %d chains / %d rules; nftables %d chains / %d rules",
		in.Netfilter.IptablesChains, in.Netfilter.IptablesRules, in.Netfilter.NftChains, in.Netfilter.NftRules)
	if m, ok := in.Sysctls[inspect.SysConntrackMax]; ok {
		add("conntrack", "%d of %d entries, %s hash buckets", in.Sysctls[inspect.SysConntrackCount], m, conntrackBucketsNow(in))
	}
	add("busy polling", "busy_read %s, busy_poll %s", sysctlUs(in, inspect.SysBusyRead), sysctlUs(in, inspect.SysBusyPoll))
	f = append(f, idleFindings(in)...)
	if len(in.Qdiscs) > 0 {
		var q []string
		for d, k := range in.Qdiscs {
			q = append(q, d+" "+k)
		}
		sort.Strings(q)
		add("root qdiscs", "%s", strings.Join(q, ", "))
	}
	if len(in.Unknown) > 0 {
		f = append(f, unknownFinding(in))
	}
	return f
}

// unknownFinding lists what could not be read, and why.
func unknownFinding(in *inspect.Inspection) Finding {
	var unk []string
	for k, why := range in.Unknown {
		unk = append(unk, k+" ("+why+")")
	}
	sort.Strings(unk)
	return Finding{"unknown", strings.Join(unk, "; ")}
}

// idleFindings say how the CPUs idle and, where read, the limits that
// bound their states.
func idleFindings(in *inspect.Inspection) []Finding {
	if _, ok := in.Unknown["cpuidle"]; ok {
		// A run's record without it: the unknown finding says why.
		return []Finding{{"CPU idle", "unknown"}}
	}
	if in.CPUIdle == nil {
		return []Finding{{"CPU idle", "no cpuidle driver"}}
	}
	f := []Finding{{"CPU idle", in.CPUIdle.String()}}
	if _, limits, err := reachable(in); err == nil {
		f = append(f, Finding{"CPU idle limits", limits})
	}
	return f
}

// offloads lists the GRO/GSO/TSO and tunnel offloads briefly.
// encap is a tunnel's kind, "over IPv6" for a dual-stack node's IPv6
// tunnel.
func encap(t inspect.Device) string {
	if t.IPv6 {
		return t.Kind + " over IPv6"
	}
	return t.Kind
}

func offloads(m map[string]inspect.Offload) string {
	if len(m) == 0 {
		return "offloads unknown"
	}
	var s []string
	for _, f := range []string{inspect.FeatGRO, inspect.FeatGROHW, inspect.FeatGSO, inspect.FeatTSO, inspect.FeatUDPTunnel, inspect.FeatUDPTunnelCsum, inspect.FeatIPIP, inspect.FeatGRE} {
		if o, ok := m[f]; ok {
			s = append(s, f+" "+onOff(o.On)+fixed(o))
		}
	}
	return strings.Join(s, ", ")
}

func numa(n int) string {
	if n < 0 {
		return "none reported"
	}
	return fmt.Sprint(n)
}

// sysctlUs is a sysctl in microseconds as read, or "unknown" where the
// inspection could not read it (a container without /proc/sys/net/core):
// never a 0 that was not measured.
func sysctlUs(in *inspect.Inspection, name string) string {
	v, ok := in.Sysctls[name]
	if !ok {
		return "unknown"
	}
	return fmt.Sprintf("%d us", v)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
