package report

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// comparability says what of this run can be set beside the published
// numbers. It is derived from env.json (whether the emulated nodes had
// CPUs of their own decides what the per-core figures mean) and from the
// study: its source names the paper whose set-up is described
// (paperSetups), and what compares within the run is what the study
// varies (relativeEffects), its link rate whether absolute bitrates do
// (absoluteBitrates).
func comparability(run *results.Run, s *study.Study) []string {
	var out []string
	e := run.Env
	if e.Engine == "kube" {
		return kubeComparability(e, s)
	}
	if len(s.Spec.Reference) == 0 {
		// A study without published numbers (workloads) has none to say
		// were measured elsewhere.
		out = append(out, "The study lists no published numbers. Here the nodes are emulated on one machine, "+
			"not on real hosts or VMs each with its own cores and NIC.")
	} else {
		out = append(out, "The published numbers were measured on real hosts or VMs, each with its own cores and NIC"+paperSetup(s)+
			". Here the nodes are emulated on one machine.")
	}
	switch {
	case !run.HasEnv:
		out = append(out, "env.json is missing, so it is unknown whether the nodes were pinned to CPUs of their own.")
	case sharesAll(e.NodeCPUs) && len(pinnedWorkloads(s)) > 0:
		out = append(out, fmt.Sprintf("The emulated nodes share all %d CPUs of this machine; the workloads %s pin their servers and clients "+
			"to CPUs (env.json's notes say where), the others do not, and all kernel work of both nodes may run on any core. "+
			"The per-core figures therefore show the whole machine with server and client work mixed; "+
			"their idle and softirq percentages are not comparable with per-core figures of a server node of its own.", e.CPUs, strings.Join(pinnedWorkloads(s), ", ")))
	case sharesAll(e.NodeCPUs):
		out = append(out, fmt.Sprintf("The emulated nodes share all %d CPUs of this machine (the study pins none): "+
			"servers, clients and all kernel work of both nodes compete for the same cores. "+
			"The per-core figures therefore show the whole machine with server and client work mixed; "+
			"their idle and softirq percentages are not comparable with per-core figures of a server node of its own.", e.CPUs))
	default:
		out = append(out, "Node processes were pinned: "+nodeCPUsText(e.NodeCPUs)+overlapText(e.NodeCPUs)+
			". Pinning covers processes only.")
	}
	labelled := ""
	if run.HasEnv && !sharesAll(e.NodeCPUs) {
		labelled = ", labelled with the node each is assigned to"
	}
	out = append(out, "Softirq processing of veth and tunnel packets runs on whichever CPU processes the packet "+
		"(for a veth, typically the sending CPU; with RPS, the steered-to CPU), not on the CPUs of the node the packet belongs to. "+
		"So kernel work of one node can appear on the other's CPUs, and the per-core figures show every CPU of the machine"+labelled+".")
	out = append(out, "Comparable: "+relativeEffects(s, "on the same machine")+" and the direction of per-core shifts. "+absoluteBitrates(s))
	if s.Spec.Nodes.Server.CPUs != "" || s.Spec.Nodes.Client.CPUs != "" {
		out = append(out, fmt.Sprintf("The study asked for server CPUs %q and client CPUs %q.", s.Spec.Nodes.Server.CPUs, s.Spec.Nodes.Client.CPUs))
	}
	return out
}

// comparabilityHeading titles the section of comparability: with the
// paper where the study lists published numbers, else with other
// measurements (the workloads study lists none).
func comparabilityHeading(s *study.Study) string {
	if s != nil && len(s.Spec.Reference) > 0 {
		return "Comparability with the paper"
	}
	return "Comparability with other measurements"
}

// paperSetups are the set-ups of the papers the built-in studies cite,
// by seed, as their study files describe them.
var paperSetups = map[string]string{
	"000": "seed 000: a 4-core KVM VM per node, per-core figures of the server VM only, whose core 3 took the NIC's receive softirqs",
	"001": "seed 001: two Linux hosts, each with two 8-core Xeon E2650 CPUs (16 cores on 2 NUMA nodes) and a 100 Gb/s Mellanox CX4 NIC, on Linux 3.19, its one-node cells on one of them",
	"003": "seed 003: two nodes of the VWall testbed joined by a 1 Gbit/s link",
	"004": "seed 004: two bare-metal CloudLab hosts, each with one 10-core Xeon E5-2640v4 and two dual-port 25 Gb/s Mellanox ConnectX-4 NICs, on Linux 4.15",
}

var seedRE = regexp.MustCompile(`\bseeds? ([0-9]{3}(?:(?:, | and )[0-9]{3})*)`)

// paperSetup is " (seed 000: ...)" for the papers the study's source
// names whose set-up is known (paperSetups), "" for others (a user's
// study citing another paper, or none).
func paperSetup(s *study.Study) string {
	var parts []string
	for _, seed := range citedSeeds(s) {
		if t, ok := paperSetups[seed]; ok && !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// citesSeed reports whether the study's source names the paper of seed
// ("003"): only then do captions point at that paper's figures and
// tables (a user's study of impairments is not Santos et al.'s).
func citesSeed(s *study.Study, seed string) bool {
	return slices.Contains(citedSeeds(s), seed)
}

var seedNumberRE = regexp.MustCompile(`[0-9]{3}`)

// citedSeeds are the seeds the study's source names ("seed 000 (paper)
// and seed 002", "seeds 001, 003, 004").
func citedSeeds(s *study.Study) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, m := range seedRE.FindAllStringSubmatch(s.Metadata.Source, -1) {
		out = append(out, seedNumberRE.FindAllString(m[1], -1)...)
	}
	return out
}

// seed003Note is note where the study cites the seed-003 paper (Santos
// et al., flannel-backends' figures and tables), "" otherwise.
func seed003Note(s *study.Study, note string) string {
	if citesSeed(s, "003") {
		return note
	}
	return ""
}

// impairmentsIntro opens report.html's Impairments section.
func impairmentsIntro(s *study.Study) string {
	return "Receiver bitrate, jitter, lost datagrams and TCP retransmits of each workload per impairment and datapath and sender bitrate beside it" +
		seed003Note(s, " (the seed-003 paper's Figs 4-7 and 9, Tables VII-VIII)") + ", and TCP's per-second throughput and congestion window at the highest offered rate" +
		seed003Note(s, " (Fig 8)") + "; each impairment's sweep over the offered rate is under Workloads."
}

// relativeEffects says what the run compares within itself, by what the
// study varies: tunings against the baseline, else datapaths against the
// first, else its workloads and impairments against each other.
func relativeEffects(s *study.Study, where string) string {
	var tunings []string
	for _, t := range s.Spec.Tunings {
		tunings = append(tunings, t.Name)
	}
	switch {
	case tuningsBesides(tunings, s.Spec.Baseline):
		return "relative effects within this run, i.e. normalized bitrate (each tuning against the baseline " + where + ")"
	case len(s.Spec.Datapaths) > 1:
		return "relative effects within this run, i.e. each datapath against the first at the same workload " + where +
			" (the datapath tables' ratios)"
	}
	return "relative effects within this run, i.e. workloads, impairments and offered rates against each other " + where
}

// absoluteBitrates says whether absolute bitrates compare: on a link the
// study shapes to a line rate (spec.link.rate, flannel-backends' 1
// Gbit/s, the paper's wire), rates the link bounds do; unshaped, none do.
func absoluteBitrates(s *study.Study) string {
	if r, err := s.Spec.Link.RateBits(); err == nil && r > 0 {
		return fmt.Sprintf("Absolute bitrates compare where the link bounds them: the emulated link is shaped to %s Mbit/s (spec.link.rate) "+
			"as the paper's wire bounded its own; below that, where this machine's CPU bounds them, they do not. "+
			"Not comparable: core numbers and absolute idle percentages.", strconv.FormatFloat(float64(r)/1e6, 'f', -1, 64))
	}
	return "Not comparable: absolute bitrates (no physical NIC or wire, memory-bound veth copies), core numbers, and absolute idle percentages."
}

// pinnedWorkloads names the study's workloads that pin their ends to
// CPUs (pin:), which sharing all CPUs between the nodes does not undo.
func pinnedWorkloads(s *study.Study) []string {
	var out []string
	for _, w := range s.Spec.Workloads {
		if w.Pin != nil {
			out = append(out, w.Name)
		}
	}
	return out
}

// kubeComparability replaces the emulation caveats for runs on a real
// cluster: the nodes have their own CPUs and NICs there.
func kubeComparability(e results.Env, s *study.Study) []string {
	cni := "a CNI that was not detected"
	if e.CNI != nil {
		cni = "the CNI detected as " + e.CNI.String()
	}
	if e.SharedKernel {
		// A kind-style cluster on one machine: the papers' separate
		// machines are not what ran, and the server node's CPUs are the
		// machine's, client work included.
		return []string{
			"This run measured a real Kubernetes cluster with " + cni + ", servers on one node behind Services and clients on another, " +
				"but its nodes report one boot ID: they run on one kernel (a kind-style cluster on one machine), not on separate machines as in the papers. " +
				"Per-core figures are that machine's CPUs (" + nodeCPUsText(e.NodeCPUs) + "), with both nodes' work and kernel processing mixed; " +
				"their idle and softirq percentages are not comparable with the papers' server-node figures.",
			"Comparable: " + relativeEffects(s, "on the same nodes") + ". " +
				"Not comparable: absolute bitrates (packets cross veth pairs on one host, not a wire) and absolute per-core percentages.",
		}
	}
	return []string{
		"This run measured nodes of a real Kubernetes cluster with " + cni + ", as the papers measured theirs: " +
			"servers on one node behind Services, clients on another. Per-core figures are the server node's CPUs (" +
			nodeCPUsText(e.NodeCPUs) + "), which it shares with everything else scheduled there.",
		"Comparable: " + relativeEffects(s, "on the same nodes") + " and the direction of per-core shifts. " +
			"Absolute bitrates depend on these nodes' CPUs, NICs, network and CNI, not only on the tuning.",
	}
}

func sharesAll(m map[string][]int) bool {
	for _, c := range m {
		if len(c) > 0 {
			return false
		}
	}
	return true
}

func overlapText(m map[string][]int) string {
	seen := map[int]string{}
	var shared []int
	for _, n := range sortedKeys(m) {
		for _, c := range m[n] {
			if o, ok := seen[c]; ok && o != n {
				shared = append(shared, c)
			}
			seen[c] = n
		}
	}
	if len(shared) == 0 {
		return " (disjoint)"
	}
	slices.Sort(shared)
	shared = slices.Compact(shared)
	if len(shared) == 1 {
		return fmt.Sprintf(" (CPU %d is shared)", shared[0])
	}
	return " (CPUs " + cpuset.Set(shared).String() + " are shared)"
}

// plannedTrials says how many trials a cell was planned with: "5
// trials", or "3 to 20 trials (adaptive)" for a range, whose cells stop
// anywhere in it.
func plannedTrials(t study.Trials) string {
	if t.Adaptive() {
		return fmt.Sprintf("%d to %d trials (adaptive)", t.Min, t.Max)
	}
	return fmt.Sprintf("%d trials", t.Max)
}

// method explains how the numbers were computed; docs/statistics.md has
// the formulas.
func method(s *study.Study, rows []analysis.Row) []string {
	sp := s.Spec
	nmin, nmax := -1, 0
	for _, r := range rows {
		if r.CPU >= 0 || r.N == 0 {
			continue
		}
		if nmin < 0 || r.N < nmin {
			nmin = r.N
		}
		nmax = max(nmax, r.N)
	}
	observed := "no samples"
	switch {
	case nmin == nmax && nmin > 0:
		observed = fmt.Sprintf("n = %d in every measured cell", nmin)
	case nmin > 0:
		observed = fmt.Sprintf("n = %d to %d per measured cell", nmin, nmax)
	}
	out := []string{
		fmt.Sprintf("Each cell (datapath × tuning × workload × replicas) was planned with %s of %s, the first %s of each omitted as warm-up; %s.",
			plannedTrials(sp.Trials), sp.Duration.Duration, sp.Warmup.Duration, observed),
		"Each trial is one observation. Values are means over trials with the sample standard deviation (n−1) and a 95% confidence interval " +
			"mean ± t(0.975, n−1)·sd/√n, its lower bound raised to 0 when no trial is negative and, for a share in percent (a core's idle, " +
			"loss %), its upper bound lowered to 100 when no trial exceeds it: the true mean lies there. A cell with one trial has no interval (shown as \"n=1, no CI\"); a cell without trials is \"missing\".",
	}
	if tuningsBesides(analysis.DimsOf(rows).Tunings, sp.Baseline) {
		out = append(out, fmt.Sprintf("Normalized bitrate is mean(tuning) / mean(%s) at the same datapath, workload and replica count "+
			"(for request/response and HTTP workloads, of transactions or requests per second). "+
			"Its 95%% interval is Fieller's for the ratio of two independent means (t quantile with Welch–Satterthwaite degrees of freedom); "+
			"when the baseline mean is not clearly away from zero Fieller's set is unbounded and the delta-method interval is used. "+
			"The %s row itself is 1 with its own interval divided by its mean. p values are Welch's two-sided t test against %s, "+
			"not corrected for the many comparisons in one report.", sp.Baseline, sp.Baseline, sp.Baseline))
	}
	if d := analysis.DimsOf(rows).Datapaths; len(d) > 1 {
		out = append(out, fmt.Sprintf("In the datapath tables, p is Welch's two-sided t test of each datapath against %s, the first, "+
			"at the same tuning, workload and replica count (also not corrected).", d[0]))
	}
	out = append(out,
		"Per-core values: each trial contributes each core's average over the measured window (percent of CPU time as mpstat -P ALL computes it "+
			"from /proc/stat; NET_RX softirqs per second from /proc/softirqs); the table and figures show their mean over trials.",
		"Published reference values are read from the paper's text and figures and are approximate; "+
			"a reference without a core applies to every core.",
		fmt.Sprintf("Bitrates are shown in %s and sizes in %s (message and segment sizes in bytes); summary.csv keeps bit/s and bytes.", analysis.Display(results.MetricBitrate).Unit, analysis.ScaleOf("B").Unit),
	)
	if n := straddleNote(rows); n != "" {
		out = append(out, n)
	}
	return out
}
