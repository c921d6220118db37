package analysis

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// TestRefMethodPktgenJitter: a published jitter beside ours for a load
// pktgen sent says the two were timed differently; beside iperf3's own, or
// for another metric of the pktgen load, nothing is said. summary.json
// keeps it.
func TestRefMethodPktgenJitter(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [flannel-vxlan]
  trials: 3
  duration: 10s
  workloads:
    - {name: kern, tool: iperf3, protocol: udp, rates: [500M, 1G], sender: pktgen}
    - {name: user, tool: iperf3, protocol: udp, rate: 500M}
  reference:
    - {workload: kern, metric: jitter_ms, value: 0.013}
    - {workload: kern, metric: bitrate, value: 5e8}
    - {workload: user, metric: jitter_ms, value: 0.013}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, w := range []string{"kern@500M", "kern@1G", "user"} {
		for trial := 1; trial <= 3; trial++ {
			samples = append(samples, results.Sample{
				Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricJitter: 0.01 * wobble(trial), results.MetricBitrate: 4.9e8 * wobble(trial)},
			})
		}
	}
	m := Build(s, samples)
	for i, want := range []string{PktgenJitter, "", ""} {
		if got := m.References[i].Method; got != want {
			t.Errorf("reference %d (%s of %s): method %q, want %q", i, m.References[i].Reference.Metric, m.References[i].Reference.Workload, got, want)
		}
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.References[0].Method != PktgenJitter || back.References[2].Method != "" {
		t.Errorf("summary.json read back methods %q, %q", back.References[0].Method, back.References[2].Method)
	}
}

// TestRefMethodWindowTotal: retransmits are a total over the measured
// window. The seed-003 paper's are over 5-minute tests, the quick
// profile's over 4 s: beside the paper's total ours says over how long
// it ran and what that is per second (one row, or the range over a
// sweep's rows), and each built-in retransmits reference's note gives
// the paper's test length and rate, so the two compare per second. A
// bitrate, not a total, gets no such note.
func TestRefMethodWindowTotal(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [flannel-vxlan]
  trials: 3
  duration: 5s
  warmup: 1s
  workloads:
    - {name: one, tool: iperf3, protocol: tcp}
    - {name: swept, tool: iperf3, protocol: tcp, rates: [500M, 1G]}
  reference:
    - {workload: one, metric: retransmits, value: 219300, note: "paper: a total over its 300 s test, 731/s"}
    - {workload: swept, metric: retransmits, value: 8040}
    - {workload: one, metric: bitrate, value: 1.553e8}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for w, retr := range map[string]float64{"one": 3100, "swept@500M": 400, "swept@1G": 800} {
		for trial := 1; trial <= 3; trial++ {
			samples = append(samples, results.Sample{
				Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricRetransmits: retr + 100*float64(trial-2), results.MetricBitrate: 1.5e8 * wobble(trial)},
			})
		}
	}
	m := Build(s, samples)
	for i, want := range []string{
		"a total over the test: ours over 4 s, 775/s; the paper's over its own test",
		"a total over the test: ours over 4 s, 100 to 200/s; the paper's over its own test",
		"",
	} {
		if got := m.References[i].Method; got != want {
			t.Errorf("reference %d (%s of %s): method %q, want %q", i, m.References[i].Reference.Metric, m.References[i].Reference.Workload, got, want)
		}
	}

	// The built-in study whose references are totals: each says the
	// paper's window, and a quick run's rows say theirs.
	fb, err := study.Resolve("flannel-backends", study.Options{Profile: "quick"}, study.Catalog{Datapaths: []string{"flannel-vxlan", "flannel-udp"}, Tools: testCatalog.Tools})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range fb.Spec.Reference {
		if r.Metric == results.MetricRetransmits {
			n++
			if !strings.Contains(r.Note, "over its 300 s test") || !strings.Contains(r.Note, "/s") {
				t.Errorf("flannel-backends %s %s %s: note %q does not give the paper's test length and rate", r.Datapath, r.Workload, r.Impairment, r.Note)
			}
		}
	}
	if n == 0 {
		t.Fatal("flannel-backends has no retransmits reference")
	}
	if w := measuredWindow(fb); w != 4*time.Second {
		t.Errorf("flannel-backends quick: measured window %v, want 4s", w)
	}
}

// TestRefMethodPinFellBack: a cell whose placement fell back (its
// samples carry pin_not_comparable, as on a one-node machine running
// nic-modes' numa-other) is marked not comparable wherever a published
// number rests on it, as the ratio's numerator or as what it divides
// by, before any other method note; cells that ran their placement are
// not.
func TestRefMethodPinFellBack(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [flannel-vxlan]
  trials: 3
  duration: 5s
  warmup: 1s
  workloads:
    - {name: near, tool: iperf3, protocol: tcp}
    - {name: far, tool: iperf3, protocol: tcp}
    - {name: plain, tool: iperf3, protocol: tcp}
  reference:
    - {workload: far, againstWorkload: near, metric: bitrate, ratio: 0.2201}
    - {workload: plain, againstWorkload: near, metric: bitrate, ratio: 1}
    - {workload: plain, metric: bitrate, value: 1e9}
    - {workload: far, metric: retransmits, value: 100}
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, w := range []string{"near", "far", "plain"} {
		for trial := 1; trial <= 3; trial++ {
			m := map[string]float64{results.MetricBitrate: 1e9 * wobble(trial), results.MetricRetransmits: 40}
			if w != "plain" {
				m[MetricPinNotComparable] = 1
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: w, Replicas: 1}, Trial: trial, Metrics: m})
		}
	}
	m := Build(s, samples)
	for i, want := range []string{PinFellBack, PinFellBack, "", PinFellBack + "; a total over the test: ours over 4 s, 10/s; the paper's over its own test"} {
		if got := m.References[i].Method; got != want {
			t.Errorf("reference %d (%s of %s): method %q, want %q", i, m.References[i].Reference.Metric, m.References[i].Reference.Workload, got, want)
		}
	}
	if MetricPinNotComparable != workload.MetricPinNotComparable {
		t.Errorf("analysis reads %q, the workload package writes %q", MetricPinNotComparable, workload.MetricPinNotComparable)
	}
	if fb := PinFellBackCells(m.Rows); len(fb) != 2 || !fb[results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "far", Replicas: 1}] {
		t.Errorf("cells that fell back: %v", fb)
	}
}

// TestRefMethodSharedNodes: where the emulated nodes share a kernel the
// collector records the machine's CPU % and memory % under the client's
// names and no _server rows (collect/nodes.go); beside the paper's
// Table IV, its client node alone, the reference says ours is the whole
// machine's, with its CPU count (the per-core rows). A run with both
// nodes' rows (two kernels, or CPUs pinned apart) gets no such note for
// the metric whose server twin it has; a pinned client names its list.
func TestRefMethodSharedNodes(t *testing.T) {
	s := flannelBackends(t, "quick-none")
	build := func(server bool, cores int) Model {
		var samples []results.Sample
		for trial := 1; trial <= 3; trial++ {
			met := map[string]float64{results.MetricBitrate: 8e8 * wobble(trial), "node_cpu_percent_client": 40 * wobble(trial), "node_memory_percent_client": 30}
			if server {
				met["node_cpu_percent_server"] = 20
			}
			smp := results.Sample{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "udp@800M", Replicas: 1}, Trial: trial, Metrics: met}
			for c := 0; c < cores; c++ {
				smp.Cores = append(smp.Cores, results.CoreStat{CPU: c})
			}
			samples = append(samples, smp)
		}
		return Build(s, samples)
	}
	got := nodeMethods(build(false, 2))
	if got["node_cpu_percent_client"] != "ours is the whole machine's 2 CPUs, both emulated nodes on one kernel; the paper's its client node alone" ||
		got["node_memory_percent_client"] != "ours is the whole machine's memory, both emulated nodes on one kernel; the paper's its client node alone" {
		t.Errorf("one kernel, 2 CPUs: methods %q", got)
	}
	if got := nodeMethods(build(true, 2)); got["node_cpu_percent_client"] != "" || got["node_memory_percent_client"] == "" {
		t.Errorf("a server CPU row (CPUs pinned apart): methods %q; want none for CPU, memory still the machine's", got)
	}
	pinned := *s
	pinned.Spec.Nodes.Client.CPUs, pinned.Spec.Nodes.Server.CPUs = "0-1", "0-1"
	if sh := SharedNodeReadings(&pinned, build(false, 4).Rows, false, nil); sh.method("node_cpu_percent_client") != "ours is CPUs 0-1, which both emulated nodes are pinned to on one kernel; the paper's its client node alone" {
		t.Errorf("both nodes pinned to 0-1: %q", sh.method("node_cpu_percent_client"))
	}
}

// nodeMethods are the Methods of the model's matched node_ references.
func nodeMethods(m Model) map[string]string {
	out := map[string]string{}
	for _, r := range m.References {
		if strings.HasPrefix(r.Reference.Metric, "node_") && len(r.Rows) > 0 {
			out[r.Reference.Metric] = r.Method
		}
	}
	return out
}
