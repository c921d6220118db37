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

// A study of tunings on a request/response workload (a user's sysctl
// tunings, advise's busy-poll A/B): transactions per second are
// normalized to the baseline as bitrate is, the glance judges them, and
// the workload's headline metrics lead its tables, before its message
// size.
func TestTuningsOnRequestResponse(t *testing.T) {
	const text = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: rr}
spec:
  datapaths: [calico-vxlan]
  tunings: [baseline, {name: busy, sysctls: {net.core.busy_read: 50}}]
  workloads:
    - {name: rr, tool: sockperf, protocol: tcp, messageSize: 64}
  trials: 4
  duration: 5s
`
	s, err := study.Parse("rr.yaml", []byte(text), study.Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for trial := 1; trial <= 4; trial++ {
		for _, tn := range []string{"baseline", "busy"} {
			tps := 14000 + 100*float64(trial)
			if tn == "busy" {
				tps *= 1.25
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "rr", Replicas: 1},
				Trial: trial, Start: t0, End: t0.Add(5 * time.Second),
				Metrics: map[string]float64{results.MetricTransactions: tps, "message_bytes": 64, "rtt_mean_us": 1e6 / tps}})
		}
	}
	m := analysis.Build(s, samples)
	for _, g := range analysis.Groups(m.Rows) {
		v := groupPage(g, newNumbers(m), func(int) string { return "" })
		if v.Normalized == nil || v.Quantity != "transactions per second" || v.Unit != "1/s" {
			t.Fatalf("report.html's %s: normalized figure %v, headings %q in %q", g.Name(), v.Normalized != nil, v.Quantity, v.Unit)
		}
		// At one replica count the figure is the tuning's bar from 1,
		// not a point on a replicas axis of one tick.
		if f := v.Normalized; f.Title != "transactions_per_s / baseline (calico-vxlan / rr, 1 replica)" || !strings.Contains(string(f.SVG), ">busy<") {
			t.Errorf("normalized figure at one replica count: %q", f.Title)
		}
	}
	var b strings.Builder
	if err := writeMarkdown(&b, s, m, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"## At a glance", "| busy | better ×1.25", "| normalized transactions_per_s (vs baseline) | 1.000 [0.986, 1.014] | 1.250 ["} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if tps, size := strings.Index(md, "| transactions_per_s"), strings.Index(md, "| message_bytes"); tps < 0 || size < tps {
		t.Errorf("transactions at %d, message size at %d: the headline metric first", tps, size)
	}
	// The run metadata lists the sysctls as found before the run.
	_, det := envView(&results.Run{HasEnv: true, Env: results.Env{Sysctls: map[string]string{"net.core.busy_read": "0"}}})
	if !slices.ContainsFunc(det, func(d detail) bool {
		return d.Summary == "Sysctls the tunings set, before the run" && slices.Equal(d.Lines, []string{"net.core.busy_read = 0"})
	}) {
		t.Errorf("run metadata details %+v", det)
	}
	if got := s.TuningSysctls(study.SideServer); !slices.Equal(got, []string{"net.core.busy_read"}) {
		t.Errorf("the study's sysctls %v", got)
	}
	if got := s.TuningSysctls(study.SideClient); len(got) != 0 {
		t.Errorf("a server-side tuning's sysctls at the client: %v", got)
	}
}
