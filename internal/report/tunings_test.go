package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The report says what each tuning is and what its trials wrote (env.json
// "tunings"): each place, knob and value with the values found and the
// devices; a mask with its CPUs. A tuning without a record says why: it
// sets nothing, no trial of it ran, or the run predates the record. A
// study without tunings besides its baseline has no such section.
func TestTuningsSection(t *testing.T) {
	const text = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: tset}
spec:
  datapaths: [calico-vxlan]
  tunings: [baseline, rps+, rfs, {name: busy, sysctls: {net.core.busy_read: 50}}]
  workloads:
    - {name: tcp, tool: iperf3, protocol: tcp}
  trials: 2
  duration: 5s
`
	s, err := study.Parse("tset.yaml", []byte(text), study.Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		for _, tn := range []string{"baseline", "rps+", "busy"} { // no trial of rfs
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1},
				Trial: trial, Start: t0, End: t0.Add(5 * time.Second), Metrics: map[string]float64{results.MetricBitrate: 1e10 + float64(trial)}})
		}
	}
	run := &results.Run{Samples: samples, Env: results.Env{Tunings: map[string][]results.TuningSetting{
		"rps+": {
			{Where: results.WhereHost, Knob: "pm_qos_resume_latency_us", Value: "n/a", Devices: []string{"cpu0", "cpu1"}, Found: []string{"0"}},
			{Where: results.WhereNode, Knob: "rps_cpus", Value: "00000003", Devices: []string{"cali0", "cali1", "cali2", "eth1", "vxlan.calico"}, Found: []string{"0"}},
			{Where: results.WherePods, Knob: "rps_cpus", Value: "00000003", Devices: []string{"eth0"}, Found: []string{"3"}, Unchanged: true},
			{Where: results.WhereClientNode, Knob: "net.ipv4.tcp_congestion_control", Value: "bbr", Found: []string{"bbr"}, Unchanged: true},
		},
	}}}
	m := analysis.Build(s, samples)
	m.AddRun(s, run)
	var b strings.Builder
	if err := writeMarkdown(&b, s, m, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## What each tuning set",
		"| baseline | nothing: the machine as found |  |  | nothing |",
		"| rps+ | RPS to CPUs all (every CPU of the node) on the server node's underlay NIC, tunnel device and measured pods' host-side veths, and on eth0 inside each measured server pod | host | pm_qos_resume_latency_us | n/a (0 µs: polling only) | 0 (no limit) | cpu0, cpu1 |",
		"|  |  | server node | rps_cpus | 00000003 (CPUs 0-1) | 0 (none) | cali0, cali1, cali2, eth1 and 1 more |",
		"|  |  | server pods | rps_cpus | 00000003 (CPUs 0-1) | 3 (CPUs 0-1) (already so: unchanged) | eth0 |",
		"|  |  | client node | net.ipv4.tcp_congestion_control | bbr | bbr (already so: unchanged) |  |",
		"| rfs | RPS to CPUs all (every CPU of the node); RFS with 32768 socket-flow entries (host) and 32768 flows per receive queue",
		"not applied: no trial of it ran",
		"| busy | sysctls net.core.busy_read = 50 (a global one on the host, one of each namespace in the server node's namespace) |  |  | not recorded (the run was made before cnibench recorded what tunings set) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	// A tuning that changed nothing says so at a glance, too.
	m.Tunings = append(m.Tunings, analysis.TuningDef{Name: "busy", Set: []results.TuningSetting{
		{Where: results.WhereHost, Knob: "net.core.busy_read", Value: "50", Found: []string{"50"}, Unchanged: true}}})
	m.Tunings = slices.DeleteFunc(m.Tunings, func(d analysis.TuningDef) bool { return d.Name == "busy" && d.Set == nil })
	b.Reset()
	if err := writeMarkdown(&b, s, m, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| busy | equal ×1.00 (n=2) · changed nothing |", "\"changed nothing\": the tuning found every value"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(md, "| rps+ | equal ×1.00 (n=2) |") || strings.Contains(md, "changed nothing") {
		t.Errorf("a tuning that changed something is marked unchanged")
	}
	var h strings.Builder
	if err := writeHTML(&h, run, s, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "<h2>What each tuning set</h2>") || !strings.Contains(h.String(), "00000003 (CPUs 0-1)") {
		t.Error("report.html has no table of what each tuning set")
	}

	// Baseline alone: nothing to say.
	m.Tunings = m.Tunings[:1]
	if tb := tuningsTable(s, m); len(tb.Rows) > 0 {
		t.Errorf("a study of its baseline alone has a tunings table: %v", tb.Rows)
	}
}
