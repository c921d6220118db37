package seen

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// dpStudy is a study of an overlay, host networking and two datapaths
// without a tunnel (calico-routed the first of them), with bulk TCP
// between nodes and within one, and the CPU cost per packet.
func dpStudy(t *testing.T) *study.Study {
	t.Helper()
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [calico-vxlan, host, calico-routed, bridge]
  workloads:
    - {name: tcp, tool: iperf3}
    - {name: tcp-intra, tool: iperf3, placement: intra-node}
    - {name: cpp, tool: iperf3, cpp: true}
  trials: 6
  duration: 3s
`), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFindOverlay: the overlay's inter-node cells are decided against
// the first datapath without a tunnel on each cell's judged metric, by
// round where the datapaths shared rounds; intra-node cells (which never
// reach the tunnel), host networking and the second native datapath are
// not compared. A study without a datapath of each kind shows nothing.
func TestFindOverlay(t *testing.T) {
	s := dpStudy(t)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	drift := []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15}
	gain := map[string]float64{"calico-vxlan": 0.8, "host": 1.3, "calico-routed": 1, "bridge": 0.95}
	run := &results.Run{}
	at := 0
	for i, d := range drift {
		for _, dp := range []string{"calico-vxlan", "host", "calico-routed", "bridge"} {
			for _, w := range []string{"tcp", "tcp-intra"} {
				c := results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1}
				v := 10e9 * d * gain[dp] * (1 + 0.01*float64((i+len(dp))%3-1))
				run.Samples = append(run.Samples, results.Sample{Cell: c, Trial: i + 1, Start: t0.Add(time.Duration(at) * time.Second),
					Metrics: map[string]float64{results.MetricBitrate: v}})
				at++
				if i == 0 {
					run.Stops = append(run.Stops, results.Stop{Cell: c, Metric: results.MetricBitrate})
				}
			}
		}
	}
	run.HasEnv, run.Env.Engine = true, "local"
	got := Find("/runs/dp", run, s)
	if len(got) != 1 || got[0].Finding != advise.FindingOverlay {
		t.Fatalf("sightings %+v, want the overlay's", got)
	}
	// The run's nodes were emulated (the local engine): the pages say
	// that the machine inspected is not the run's nodes.
	if !got[0].Emulated {
		t.Error("a sighting of the local engine's run is not marked emulated")
	}
	run.Env.Engine = "kube"
	if got := Find("/runs/dp", run, s); len(got) != 1 || got[0].Emulated {
		t.Errorf("a sighting of a cluster's run: %+v", got)
	}
	want := regexp.MustCompile(`^calico-vxlan \(tunnel vxlan\.calico\) against calico-routed: worse in 1 of its inter-node cells ` +
		`\(tcp baseline r=1 bitrate ×0\.80 \[0\.7\d, 0\.8\d\] at 95%, n=6\)$`)
	if !want.MatchString(got[0].Text) {
		t.Errorf("overlay:\n%s\nwant it to match\n%s", got[0].Text, want)
	}
	if c := got[0].Cells; len(c) != 1 || c[0] != (results.Cell{Datapath: "calico-vxlan", Tuning: "baseline", Workload: "tcp", Replicas: 1}) {
		t.Errorf("overlay's cells %+v, want its one inter-node cell", c)
	}
	// Without a datapath that has no tunnel there is nothing to set the
	// overlay against.
	s.Spec.Datapaths = s.Spec.Datapaths[:2]
	if got := Find("/runs/dp", run, s); len(got) != 0 {
		t.Errorf("sightings of a run without a native datapath: %+v", got)
	}
}

// TestFindNetfilter: the cells whose CPU cost per packet went a tenth or
// more into netfilter are named, the largest share first, beside the
// range of the others; below a tenth everywhere, nothing is shown.
func TestFindNetfilter(t *testing.T) {
	s := dpStudy(t)
	run := &results.Run{}
	share := map[string]float64{"calico-vxlan": 0.12, "host": 0.02, "calico-routed": 0.25, "bridge": 0.09}
	for _, dp := range []string{"calico-vxlan", "host", "calico-routed", "bridge"} {
		for trial := 1; trial <= 2; trial++ {
			run.Samples = append(run.Samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "cpp", Replicas: 1},
				Trial: trial, Metrics: map[string]float64{cpp.TotalMetric(cpp.UnitNs): 2000, cpp.MetricName("netfilter", cpp.UnitNs): 2000 * share[dp]}})
		}
	}
	got := Find("/runs/nf", run, s)
	if len(got) != 1 || got[0].Finding != advise.FindingNetfilter {
		t.Fatalf("sightings %+v, want netfilter's", got)
	}
	want := "netfilter took 10% or more of the CPU cost per packet in 2 of the 4 cells that measured it: " +
		"calico-routed cpp baseline r=1 25% (500 of 2000 ns per packet, means of 2 trials); " +
		"calico-vxlan cpp baseline r=1 12% (240 of 2000 ns per packet, means of 2 trials); in the others 2% to 9%"
	if got[0].Text != want {
		t.Errorf("netfilter:\n%s\nwant\n%s", got[0].Text, want)
	}
	if c := got[0].Cells; len(c) != 2 || c[0].Datapath != "calico-routed" || c[1].Datapath != "calico-vxlan" {
		t.Errorf("netfilter's cells %+v, want the two over a tenth", c)
	}
	share["calico-vxlan"], share["calico-routed"] = 0.05, 0.099
	for i := range run.Samples {
		run.Samples[i].Metrics[cpp.MetricName("netfilter", cpp.UnitNs)] = 2000 * share[run.Samples[i].Cell.Datapath]
	}
	if got := Find("/runs/nf", run, s); len(got) != 0 {
		t.Errorf("sightings below a tenth: %+v", got)
	}
}

// A sighting names a few of its cells and counts the rest.
func TestSomeOf(t *testing.T) {
	name := func(i int) string { return string(rune('a' + i)) }
	for n, want := range map[int]string{0: "", 2: "a; b", 3: "a; b; c", 5: "a; b; c; and 2 more"} {
		if got := someOf(n, name); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

// TestFindIdleWake: a run on haltpoll CPUs names its request/response
// cells with their rates, not its bulk TCP nor the cells of a tuning
// that bounds the idle states; a machine that wakes fast, or one without
// a record of how it idles, shows nothing.
func TestFindIdleWake(t *testing.T) {
	s, run := haltpollRun(t, 2)
	for trial := 1; trial <= 2; trial++ {
		for _, dp := range []string{"host", "bridge"} {
			for _, tn := range []string{"baseline", "poll"} {
				run.Samples = append(run.Samples,
					results.Sample{Cell: results.Cell{Datapath: dp, Tuning: tn, Workload: "rr", Replicas: 1}, Trial: trial,
						Metrics: map[string]float64{"transactions_per_s": 17000 + 1000*float64(trial)}},
					results.Sample{Cell: results.Cell{Datapath: dp, Tuning: tn, Workload: "tcp", Replicas: 1}, Trial: trial,
						Metrics: map[string]float64{results.MetricBitrate: 10e9}})
			}
		}
	}
	f := idleWake(run, s)
	text, cells := f.text, f.cells
	want := "2 request/response cells ran on CPUs that idle in states slow to leave (haltpoll idle, 1 µs stated; a halted vCPU " +
		"waits for the hypervisor; the run's record has no PM QoS limits, which may have kept the cores out of them), so each round trip may have waited for a core to wake: host rr baseline r=1 18500 transactions_per_s " +
		"(mean of 2 trials); bridge rr baseline r=1 18500 transactions_per_s (mean of 2 trials); the run's tuning poll bounds the idle " +
		"states (its decisions are in the run's report)"
	if text != want || len(cells) != 2 || cells[1] != (results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "rr", Replicas: 1}) {
		t.Errorf("idle-wake:\n%s\nwant\n%s\ncells %v", text, want, cells)
	}
	if sg := Find("/runs/i", run, s); len(sg) != 1 || sg[0].Finding != advise.FindingIdleWake {
		t.Errorf("Find: %+v", sg)
	}
	// With the limits the run began with recorded: a window of 0 leaves
	// the halt reachable and the text says the limits allowed it; every
	// CPU held at n/a (polling only) shows nothing.
	zero := int64(0)
	run.Env.CPUIdle.Limits = &results.IdleLimits{ResumeUS: map[int]int64{0: -1, 1: -1}, HaltPollNS: &zero}
	if text := idleWake(run, s).text; !strings.Contains(text, "1 µs stated; a halted vCPU waits for the hypervisor; no CPU has a PM QoS limit of its own; the global one") {
		t.Errorf("limits recorded, none set: %s", text)
	}
	run.Env.CPUIdle.Limits = &results.IdleLimits{ResumeUS: map[int]int64{0: 0, 1: 0}}
	if text := idleWake(run, s).text; text != "" {
		t.Errorf("every CPU polling only: %s", text)
	}
	run.Env.CPUIdle = &results.CPUIdle{Driver: "intel_idle", States: []results.IdleState{{Name: "POLL"}, {Name: "C1", LatencyUS: 2}}}
	if text := idleWake(run, s).text; text != "" {
		t.Errorf("fast wake-up: %s", text)
	}
	run.Env.CPUIdle = nil
	if text := idleWake(run, s).text; text != "" {
		t.Errorf("no record of how the CPUs idle: %s", text)
	}
}

// A run whose study no longer resolves (advise --run reads it as nil)
// on a machine that wakes slowly shows nothing of idle wake-ups, rather
// than panicking: which of its cells were request/response is the
// study's to say.
func TestFindNilStudySlowIdle(t *testing.T) {
	run := &results.Run{HasEnv: true, Env: results.Env{CPUIdle: &results.CPUIdle{Driver: "intel_idle", Governor: "menu",
		States: []results.IdleState{{Name: "POLL"}, {Name: "C1", LatencyUS: 2}, {Name: "C6", LatencyUS: 133}}}}}
	for trial := 1; trial <= 2; trial++ {
		run.Samples = append(run.Samples, results.Sample{Cell: results.Cell{Datapath: "host", Tuning: "baseline", Workload: "rr", Replicas: 1},
			Trial: trial, Metrics: map[string]float64{"transactions_per_s": 18000}})
	}
	if got := Find("/runs/gone", run, nil); len(got) != 0 {
		t.Errorf("sightings of a run without its study: %+v", got)
	}
}

// haltpollRun is the idle-wake findings' study (host and bridge; a
// baseline and a tuning bounding the idle states; request/response and
// bulk TCP) of trials trials, and an empty run of it on haltpoll CPUs.
func haltpollRun(t *testing.T, trials int) (*study.Study, *results.Run) {
	t.Helper()
	s, err := study.Parse("s.yaml", []byte(fmt.Sprintf(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [host, bridge]
  tunings: [baseline, {name: poll, cpuIdle: {maxExitLatency: 0us}}]
  workloads:
    - {name: rr, tool: sockperf, protocol: tcp, messageSize: 64}
    - {name: tcp, tool: iperf3}
  trials: %d
  duration: 3s
`, trials)), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s, &results.Run{HasEnv: true, Env: results.Env{CPUIdle: &results.CPUIdle{Driver: "haltpoll", Governor: "haltpoll",
		States: []results.IdleState{{Name: "POLL"}, {Name: "haltpoll idle", LatencyUS: 1}}}}}
}
