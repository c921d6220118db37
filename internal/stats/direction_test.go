package stats

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// way is how a metric is expected to improve: either is a setting or
// a count whose better side depends on the study (an MSS swept, the
// packets a window carried), which DirectionOf may call either way but
// which is listed so that no emitted name goes unclassified.
type way int

const (
	lower way = iota
	higher
	either
)

// emitted classifies every metric name the workloads and collectors
// emit: each Metric* constant of the source (by value), and examples of
// the names the collectors build (collect's Metrics patterns, below).
// A name added to the code fails TestEveryMetricClassified until it is
// added here, so that one better low is not taken for one better high
// (qdisc_dropped, node_cpu_percent_server, daemons_cpu_pct and
// rss_bytes were: a gate rule 'qdisc_dropped > +10%' got a warning that
// advised the wrong rule, and the adaptive runner decided them upside
// down).
var emitted = map[string]way{
	// Throughput and rates.
	"bitrate": higher, "bitrate_sum": higher, "sender_bitrate": higher, "background_bitrate_bps": higher,
	"transactions_per_s": higher, "transactions_sum_per_s": higher, "requests_per_s": higher, "transfer_bps": higher,
	"ceiling_rate_bps": higher, "sent_bps": higher,
	// Time.
	"rtt_us": lower, "rtt_mean_us": lower, "rtt_min_us": lower, "rtt_max_us": lower, "rtt_p50_us": lower, "rtt_p90_us": lower,
	"rtt_p99_us": lower, "rtt_p999_us": lower, "half_rtt_mean_us": lower, "latency_mean_ms": lower, "latency_p50_ms": lower,
	"latency_p90_ms": lower, "latency_p99_ms": lower, "jitter_ms": lower, "setup_ms": lower, "pod_start_ms": lower, "startup_ms": lower,
	"startup_max_ms": lower, "teardown_ms": lower, "pod_setup_ms": lower, "phase_link_ms": lower, "phase_cni_bridge_ms": lower,
	// Loss, errors, drops.
	"lost_count": lower, "lost_percent": lower, "ceiling_loss_pct": lower, "retransmits": lower, "errors_count": lower,
	"timeouts_count": lower, "out_of_order_count": lower, "qdisc_dropped": lower, "qdisc_overlimits": lower,
	"qdisc_requeues": lower, "trace_lost_events_count": lower, "if_underlay_rx_dropped_count": lower,
	"if_pods_tx_dropped_count": lower, "refused_count": lower,
	// Cost: CPU per packet, CPU and memory, netfilter rules and chains.
	"cpp_total_ns": lower, "cpp_bridge_ns": lower, "cpp_bridge_cycles": lower, "node_cpu_percent_client": lower,
	"node_cpu_percent_server": lower, "node_memory_percent_client": lower, "node_memory_percent_server": lower,
	"daemons_cpu_pct": lower, "daemons_rss_bytes": lower, "daemon_flanneld_server_cpu_pct": lower,
	"daemon_flanneld_server_rss_bytes": lower, "outside_cpu_pct": lower,
	"core_softirq": lower, "core_system": lower, "core_user": lower, "core_net_rx": lower, "client_core_softirq": lower,
	"core_idle": higher, "client_core_idle": higher, "core_poll": either, "client_core_poll": either,
	"iptables_rules_count": lower, "iptables_chains_count": lower, "iptables_path_rules_count": lower,
	"iptables_path_chains_count": lower, "nft_rules_count": lower, "nft_chains_count": lower, "nft_counted_rules_count": lower,
	"nft_path_rules_count": lower, "nft_path_chains_count": lower, "trace_path_rules_count": lower,
	"trace_path_chains_count": lower,
	// Settings, counts and flags: no better side of their own.
	"mss_bytes": either, "message_bytes": either, "body_bytes": either, "concurrency": either, "pods": either,
	"offered_bps": either, "requests_target": either, "requests_count": either, "loss_ceiling_pct": either,
	"ceiling_probes": either, "ceiling_at_high": either, "ceiling_sender_bound": either, "pin_not_comparable": either,
	"background_connections_count": either, "packets_count": either, "cpp_packets_count": either, "cpp_skbs_count": either, "cpp_socket_segments_count": either,
	"trace_packets_count": either, "qdisc_sent_packets": either, "qdisc_sent_bytes": either, "snd_cwnd_bytes": either,
	"if_underlay_rx_packets_count": either, "if_tunnel_tx_packets_count": either,
	"bpf_cilium_lb4_count": either, "bpf_socklb_connect4_count": either,
	"iptables_counter_resets_count": either, "nft_counter_resets_count": either,
}

// patterns are collect's Metrics descriptions (collect.Entry.Metrics,
// as the source writes them) with the names above that stand for them.
var patterns = map[string][]string{
	`"cpp_*_cycles (sampling cycles)"`:                            {"cpp_bridge_cycles"},
	`"cpp_*_ns (sampling cpu-clock)"`:                             {"cpp_total_ns"},
	`"cpu.jsonl"`:                                                 nil,
	`"cores and client_cores in samples.jsonl"`:                   {"core_idle", "client_core_softirq"},
	`"daemon_NAME_NODE_cpu_pct"`:                                  {"daemon_flanneld_server_cpu_pct"},
	`"daemon_NAME_NODE_rss_bytes"`:                                {"daemon_flanneld_server_rss_bytes"},
	`"daemons_cpu_pct"`:                                           {"daemons_cpu_pct"},
	`"daemons_rss_bytes"`:                                         {"daemons_rss_bytes"},
	`"if_{underlay,tunnel,pods}_{rx,tx}_{packets,dropped}_count"`: {"if_underlay_rx_dropped_count", "if_tunnel_tx_packets_count"},
	`"iptables_*"`:                                                {"iptables_rules_count", "iptables_path_chains_count"},
	`"nft_*"`:                                                     {"nft_rules_count", "nft_counted_rules_count"},
	`"noise.outside_cpu_pct in samples.jsonl"`:                    {"outside_cpu_pct"},
	`"trace_*"`:                                                   {"trace_path_rules_count", "trace_lost_events_count"},
	`BPFPrefix + "cilium_*_count"`:                                {"bpf_cilium_lb4_count"},
	`BPFPrefix + "socklb_*_count"`:                                {"bpf_socklb_connect4_count"},
}

// sourceMetrics scans the repository's non-test Go source for the
// string values of Metric* constants and, in []string literals given to
// a Metrics field, the entries that are not such a constant.
func sourceMetrics(t *testing.T) (names, descs []string) {
	t.Helper()
	constName := regexp.MustCompile(`^Metric\w*$`)
	fset := token.NewFileSet()
	err := filepath.WalkDir("../../internal", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for i, id := range x.Names {
					if lit, ok := value(x, i); ok && constName.MatchString(id.Name) {
						names = append(names, lit)
					}
				}
			case *ast.KeyValueExpr:
				descs = append(descs, metricsList(fset, x)...)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, descs
}

// value is the string literal a spec gives its i-th name.
func value(s *ast.ValueSpec, i int) (string, bool) {
	if i >= len(s.Values) {
		return "", false
	}
	bl, ok := s.Values[i].(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

// metricsList is the entries of "Metrics: []string{...}" other than a
// bare identifier (a Metric* constant, scanned as such), as written.
func metricsList(fset *token.FileSet, kv *ast.KeyValueExpr) []string {
	k, ok := kv.Key.(*ast.Ident)
	cl, isList := kv.Value.(*ast.CompositeLit)
	if !ok || k.Name != "Metrics" || !isList {
		return nil
	}
	if at, ok := cl.Type.(*ast.ArrayType); !ok || at.Len != nil {
		return nil
	}
	var out []string
	for _, e := range cl.Elts {
		if _, ident := e.(*ast.Ident); ident {
			continue
		}
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, e)
		out = append(out, b.String())
	}
	return out
}

// TestEveryMetricClassified: every metric name the source emits is in
// emitted, every collector's pattern in patterns, and DirectionOf
// agrees with each classification.
func TestEveryMetricClassified(t *testing.T) {
	names, descs := sourceMetrics(t)
	if len(names) < 50 || len(descs) < 5 {
		t.Fatalf("scanned %d metric constants and %d collector patterns: the scan is broken", len(names), len(descs))
	}
	for _, n := range names {
		if _, ok := emitted[n]; !ok {
			t.Errorf("metric %q (a Metric* constant) is not classified: add it to emitted with the side it is better on, "+
				"and make DirectionOf agree", n)
		}
	}
	for _, d := range descs {
		examples, ok := patterns[d]
		if !ok {
			t.Errorf("collector metrics %s are not classified: add the pattern to patterns with example names, and them to emitted", d)
		}
		for _, e := range examples {
			if _, ok := emitted[e]; !ok {
				t.Errorf("example %q of %s is not in emitted", e, d)
			}
		}
	}
	for name, w := range emitted {
		got := DirectionOf(name)
		if (w == lower && got != LowerIsBetter) || (w == higher && got != HigherIsBetter) {
			t.Errorf("DirectionOf(%q) = %v, want %s better", name, got, map[way]string{lower: "lower", higher: "higher"}[w])
		}
	}
	if !slices.Contains(names, "qdisc_dropped") {
		t.Error("the scan missed qdisc_dropped (collect.MetricQdiscDrops)")
	}
}
