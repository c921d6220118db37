package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// impairStudy is a two-datapath study with impairments at impairAt.
func impairStudy(t *testing.T, impairAt string) *study.Study {
	t.Helper()
	text := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: imp}
spec:
  datapaths: [flannel-vxlan, flannel-udp]
  impairments: [none, delay-low, {name: wan, loss: 1%, limit: 5000}]
  impairAt: ` + impairAt + `
  workloads:
    - {name: tcp, tool: iperf3, protocol: tcp}
  trials: 1
  duration: 5s
`
	s, err := study.Parse("imp.yaml", []byte(text), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The report's impairments section says, one line per impairment, what
// its netem was as installed (queue limit included, and a limit cnibench
// raised under the link-rate shaper said so), where, on which way of
// the traffic, and on which devices of which datapath (env.json
// "impairments"); then the note on a workload whose data goes the other
// way. A run before the record has no such lines. Before, neither page
// said what an impairment had applied.
func TestImpairmentsApplied(t *testing.T) {
	s := impairStudy(t, "{where: underlay}")
	env := results.Env{Impairments: map[string][]results.ImpairmentSetting{
		"delay-low": {
			{Datapath: "flannel-udp", Where: "underlay", Direction: "egress", Node: "cnb-x-client", Devices: []string{"eth1"}, Netem: "delay 10ms 1ms 25% limit 2891", LimitRaised: true},
			{Datapath: "flannel-vxlan", Where: "underlay", Direction: "egress", Node: "cnb-x-client", Devices: []string{"eth1"}, Netem: "delay 10ms 1ms 25% limit 2891", LimitRaised: true},
		},
		"wan": {
			{Datapath: "flannel-vxlan", Where: "underlay", Direction: "egress", Devices: []string{"eth1"}, Netem: "loss 1% limit 5000"},
			{Datapath: "flannel-udp", Where: "underlay", Direction: "egress", Devices: []string{"eth1"}, Netem: "loss 1% limit 5000"},
		},
	}}
	want := []string{
		"delay-low: delay 10ms 1ms 25% limit 2891 at underlay egress (client->server traffic) on eth1 (flannel-vxlan), eth1 (flannel-udp), " +
			"its limit cnibench's: netem took the link-rate shaper's queue's place and holds the shaper's backlog as well as the delayed packets (tc's default is 1000)",
		"wan: loss 1% limit 5000 at underlay egress (client->server traffic) on eth1 (flannel-vxlan), eth1 (flannel-udp)",
	}
	got := impairmentsApplied(env, s)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Both pages show them.
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for _, imp := range []string{"", "delay-low", "wan"} {
		samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "flannel-vxlan", Tuning: "baseline", Workload: "tcp", Replicas: 1, Impairment: imp},
			Trial: 1, Start: t0, End: t0.Add(5 * time.Second), Metrics: map[string]float64{results.MetricBitrate: 1e9}})
	}
	run := &results.Run{Samples: samples, Env: env}
	m := analysis.Build(s, samples)
	m.AddRun(s, run)
	var md, html strings.Builder
	if err := writeMarkdown(&md, s, m, run); err != nil {
		t.Fatal(err)
	}
	if err := writeHTML(&html, run, s, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Impairments\n\nWhat each impairment installed") || !strings.Contains(md.String(), "- wan: loss 1% limit 5000 at underlay egress") {
		t.Errorf("summary.md lacks the impairments:\n%s", md.String())
	}
	if !strings.Contains(html.String(), "<li>wan: loss 1% limit 5000 at underlay egress (client-&gt;server traffic) on eth1 (flannel-vxlan), eth1 (flannel-udp)</li>") {
		t.Errorf("report.html lacks the impairments")
	}

	// A run before the record: nothing to say of what was installed.
	if got := impairmentsApplied(results.Env{}, s); len(got) != 0 {
		t.Errorf("run without the record: %q", got)
	}
	// The netem on the way the data does not go is said beside them,
	// summary.md showing no run notes.
	s = impairStudy(t, "{where: client-pods}")
	env.Impairments = map[string][]results.ImpairmentSetting{"wan": {{Datapath: "flannel-vxlan", Where: "client-pods", Direction: "egress",
		Devices: []string{"veth1", "veth2", "veth3", "veth4", "veth5"}, Netem: "loss 1% limit 5000"}}}
	got = impairmentsApplied(env, s)
	if len(got) != 2 || got[0] != "wan: loss 1% limit 5000 at client-pods egress (server->client traffic) on veth1, veth2, veth3, veth4 and 1 more (flannel-vxlan)" ||
		!strings.HasPrefix(got[1], "impairAt client-pods egress acts on server->client traffic: workload tcp (iperf3 tcp, the client sends) has only its ACKs impaired") {
		t.Errorf("client-pods lines: %q", got)
	}
}
