package analysis

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// pathCounted says how ours of each Table III path metric was counted
// (internal/metrics/iptables, nftables and nftrace's names, which
// analysis does not import). Seed 004's Table III gives chains and
// rules "a packet will traverse" and nothing more: which packets,
// whether built-in chains count, whether a rule tested without matching
// does.
var pathCounted = map[string]string{
	"iptables_path_chains_count": counterPath,
	"iptables_path_rules_count":  counterPath,
	"nft_path_chains_count":      "nftables chains and rules (those carrying a counter) whose counters grew over the trial, " + pathScope,
	"nft_path_rules_count":       "nftables chains and rules (those carrying a counter) whose counters grew over the trial, " + pathScope,
	"trace_path_chains_count":    tracePath,
	"trace_path_rules_count":     tracePath,
}

const (
	pathScope = "the connection's set-up included, built-in chains included, summed over both nodes"
	// counterPath: a counter moves only for a rule that matched, so a
	// rule tested without matching does not count, and a chain counts
	// when one of its rules or its policy counted (docs/netfilter.md).
	counterPath = "chains and rules whose packet counters grew over the trial, " + pathScope +
		" (a rule tested without matching does not count)"
	tracePath = "chains the measured packets entered or jumped to and rules they matched, in an nf_tables trace " +
		"from before the clients connect until the measured window, built-in chains included, summed over both nodes"
	pathPaper = "the paper does not say how it counted"
)

// markDatapathMethods adds to each reference's Method what the run
// recorded of the datapaths its rows are of (env's datapaths): how a
// Table III path count was counted and on which rules (pathMethod), and,
// on a Table III count or a cost per packet of a datapath whose form
// stood in for its CNI's own (DatapathEnv.StandIn: weave's bridge in
// place of Open vSwitch), what the stand-in changes. env is nil where the
// run's env.json is not at hand: the rules are then not named.
func markDatapathMethods(refs []RefMatch, env *results.Env) {
	for i := range refs {
		m := &refs[i]
		metric := m.Reference.Metric
		_, path := pathCounted[metric]
		if !path && !cppCost(metric) || len(m.Rows) == 0 {
			continue
		}
		dps := rowDatapaths(m.Rows)
		var notes []string
		if path {
			notes = append(notes, pathMethod(metric, dps, env))
		}
		if env != nil {
			for _, dp := range dps {
				if s := env.Datapaths[dp].StandIn; s != "" {
					if m.Reference.Datapath == "" {
						s = dp + ": " + s
					}
					notes = append(notes, s)
				}
			}
		}
		if len(notes) == 0 {
			continue
		}
		if m.Method != "" {
			notes = append([]string{m.Method}, notes...)
		}
		m.Method = strings.Join(notes, "; ")
	}
}

// rowDatapaths are the datapaths of rows, sorted, each once.
func rowDatapaths(rows []Key) []string {
	var out []string
	for _, k := range rows {
		if !slices.Contains(out, k.Datapath) {
			out = append(out, k.Datapath)
		}
	}
	slices.Sort(out)
	return out
}

// pathMethod says how ours of a Table III path metric was counted and on
// which rules: "ours: chains and rules whose packet counters grew ..., on
// cnibench's model of flannel-io/flannel ... plus kube-proxy in iptables
// mode (10 Services) and the kubelet's rules; the paper does not say how
// it counted".
func pathMethod(metric string, dps []string, env *results.Env) string {
	out := "ours: " + pathCounted[metric]
	if on := rulesOf(dps, env); on != "" {
		out += ", " + on
	}
	return out + "; " + pathPaper
}

// rulesOf says whose rules the nodes held for the datapaths' rows: the
// cluster's own, cnibench's model of a CNI's (env.json's netfilter), or
// none written; "" where env is not at hand or the rows are of several
// datapaths.
func rulesOf(dps []string, env *results.Env) string {
	switch {
	case env == nil || len(dps) != 1:
		return ""
	case env.Engine == "kube":
		return "on the cluster's own rules"
	}
	de := env.Datapaths[dps[0]]
	nf := de.Netfilter
	switch {
	case nf == nil && de.Policy != nil:
		return "on cnibench's " + de.Policy.Style + " policy " + de.Policy.Mode + " chains, without kube-proxy's rules"
	case nf == nil:
		return "on nodes where no CNI or kube-proxy rules were written (no netfilter: in the study)"
	}
	return "on cnibench's model of " + nf.Source + " (" + nf.CNI + ") plus " + proxyText(nf) + " and the kubelet's rules"
}

// proxyText names the Service proxy whose rules were written beside the
// CNI's: "kube-proxy in iptables mode (10 Services)".
func proxyText(nf *results.NetfilterEnv) string {
	proxy := map[string]string{
		study.KubeProxyIptables:   "kube-proxy in iptables mode",
		study.KubeProxyNFT:        "kube-proxy in nftables mode",
		study.KubeProxyIPVS:       "kube-proxy in IPVS mode",
		study.KubeProxyKubeRouter: "kube-router's IPVS proxy",
		study.KubeProxyCilium:     "Cilium's socket load balancer",
	}[nf.KubeProxy]
	if proxy == "" {
		return "no Service proxy"
	}
	return proxy + " (" + strconv.Itoa(nf.Services) + " Services)"
}
