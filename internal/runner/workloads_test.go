package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRunEveryWorkloadKind runs a cut-down workloads study end to end on
// the local engine (one variant of each tool, intra-node placement,
// background load, counters and CPP) and checks every cell stored a
// sample with its workload's headline metric.
func TestRunEveryWorkloadKind(t *testing.T) {
	run := runLocal(t, "workloads", []string{"iperf3", "sockperf", "ab", "nginx", "perf"}, study.Options{Profile: "quick", Set: []string{
		`workloads=[{name: udp, tool: iperf3, protocol: udp, rate: 100M, length: "1400", counters: true},
		  {name: intra, tool: iperf3, placement: intra-node, cpp: true},
		  {name: bg, tool: iperf3, background: {connections: [3], pairs: 2, rate: 5M}},
		  {name: rr, tool: sockperf, messageSize: 14},
		  {name: http, tool: ab, size: 64K, concurrency: [2]}]`,
		"duration=3s", "warmup=1s",
	}})
	// CPP comes in cycles or ns, whichever this machine can sample; the
	// run's notes say which, and the sample must use that unit's names.
	ev := ""
	for _, n := range run.Env.Notes {
		for _, u := range cpp.Units {
			if strings.Contains(n, "(metrics cpp_*_"+u+",") {
				ev = u
			}
		}
	}
	if ev == "" {
		t.Fatalf("env.json notes do not say which perf event CPP sampled: %q", run.Env.Notes)
	}
	want := map[string]string{
		"udp": "lost_percent", "intra": cpp.TotalMetric(ev), "bg": "background_bitrate_bps",
		"rr": "transactions_per_s", "http": "requests_per_s",
	}
	if len(run.Samples) != len(want) {
		for _, m := range run.Marked {
			t.Logf("marked: %s trial %d attempt %d: %s %s", m.Cell.Workload, m.Trial, m.Attempt, m.Discarded, m.Error)
		}
		t.Fatalf("%d samples, want %d", len(run.Samples), len(want))
	}
	for _, smp := range run.Samples {
		m := want[smp.Cell.Workload]
		if v, ok := smp.Metrics[m]; !ok || !(v >= 0) {
			t.Errorf("%s: %s = %v (metrics %v)", smp.Cell.Workload, m, v, smp.Metrics)
		}
	}
	for _, smp := range run.Samples {
		if smp.Cell.Workload == "udp" {
			if _, ok := smp.Metrics["if_underlay_rx_packets_count"]; !ok {
				t.Errorf("udp: no interface counters: %v", smp.Metrics)
			}
			// The node namespaces' rulesets (empty here) are read with
			// both tools where they are installed.
			for tool, m := range map[string]string{"iptables-save": iptables.MetricRules, "nft": nftables.MetricRules} {
				if _, err := exec.LookPath(tool); err != nil {
					continue
				}
				if _, ok := smp.Metrics[m]; !ok {
					t.Errorf("udp: %s installed but no %s: %v", tool, m, smp.Metrics)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(run.Dir, results.ReportHTML)); err != nil {
		t.Error("no report")
	}
}
