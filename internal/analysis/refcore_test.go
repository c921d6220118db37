package analysis

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// rps-rfs's per-core references are of the paper's core 3, which took
// its softirqs, set beside our literal CPU 3: on a 2-CPU machine there is
// none, and where there is one it need not be the core that ran NET_RX.
// Each such reference says which core took the paper's softirqs (its
// baseline core_softirq reference) and which took NET_RX here (the
// busiest in the baseline cell at its replica count).
func TestCoreReferencesNameTheSoftIRQCores(t *testing.T) {
	s, err := study.Resolve("rps-rfs", study.Options{Set: []string{"replicas=[16]", "tunings=[baseline,rfs+]"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, tn := range []string{"baseline", "rfs+"} {
		for trial := 1; trial <= 3; trial++ {
			cores := []results.CoreStat{
				{CPU: 0, CPUPercent: results.CPUPercent{Idle: 60, User: 40}, NetRxPerSec: 100},
				{CPU: 1, CPUPercent: results.CPUPercent{Idle: 10, SoftIRQ: 80, User: 10}, NetRxPerSec: 9000},
			}
			if tn == "rfs+" { // RFS moves the softirqs: not what names the core
				cores[0].NetRxPerSec, cores[1].NetRxPerSec = 9000, 100
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 16},
				Trial: trial, Metrics: map[string]float64{results.MetricBitrate: 1e9 * wobble(trial)}, Cores: cores})
		}
	}
	m := Build(s, samples)
	methods := map[string]string{}
	for _, r := range m.References {
		if r.Reference.CPU != nil {
			methods[r.Reference.Tuning+" "+r.Reference.Metric+" "+string(rune('0'+*r.Reference.CPU))] = r.Method
		}
	}
	for key, want := range map[string]string{
		"baseline core_idle 3":    "the paper's core 3 took its softirqs; here CPU 1 took the most NET_RX softirqs (baseline), so compare CPU 1's row",
		"rfs+ core_softirq 3":     "the paper's core 3 took its softirqs; here CPU 1 took the most NET_RX softirqs (baseline), so compare CPU 1's row",
		"baseline core_idle 0":    "the paper's core 3 took its softirqs; here CPU 1 took the most NET_RX softirqs (baseline)",
		"baseline core_idle 1":    "the paper's core 3 took its softirqs; here CPU 1 took the most NET_RX softirqs (baseline): our CPU 1 did the paper's core 3's work",
		"baseline core_softirq 3": "the paper's core 3 took its softirqs; here CPU 1 took the most NET_RX softirqs (baseline), so compare CPU 1's row",
	} {
		if got := methods[key]; got != want {
			t.Errorf("%s: method %q, want %q", key, got, want)
		}
	}
	// The reference without a core (every core > 90% idle) gets none.
	for _, r := range m.References {
		if r.Reference.CPU == nil && strings.Contains(r.Method, "softirqs") {
			t.Errorf("%+v: method %q", r.Reference, r.Method)
		}
	}
}
