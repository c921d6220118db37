package app

import (
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// A precision target on a collector's metric is accepted as the
// collectors describe their metrics in collect.List (the real list, with
// "cpp_*_cycles (sampling cycles)", braces and upper-case placeholders),
// and a typo still refused.
func TestPrecisionMetricCollectors(t *testing.T) {
	for metric, ok := range map[string]bool{
		"cpp_total_cycles":               true,
		"cpp_bridge_ns":                  true,
		"if_underlay_rx_dropped_count":   true,
		"daemon_flanneld_server_cpu_pct": true,
		"iptables_rules_count":           true,
		"cpp_total_cycle":                false,
		"if_eth0_rx_dropped_count":       false,
	} {
		_, err := study.Resolve("cni-compare", study.Options{Set: []string{"precision.metric=" + metric}}, studyCatalog())
		if ok && err != nil {
			t.Errorf("%s: %v", metric, err)
		}
		if !ok && err == nil {
			t.Errorf("%s: accepted, want refused", metric)
		}
	}
}
