package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestLatencyComparedInTables: in a study of tunings, a latency's table
// gives each tuning's ratio to the baseline with its interval and a
// decision where lower is better; the bitrate's absolute table does not
// repeat the normalized table's decision. report.html shows the latency
// tables under their own heading.
func TestLatencyComparedInTables(t *testing.T) {
	s := quickStudy(t, "replicas=[1]", "trials=4", "tunings=[baseline, rfs]")
	c := results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: "baseline", Workload: s.Variants()[0].Name, Replicas: 1}
	rfs := c
	rfs.Tuning = "rfs"
	samples := latencyRounds(c, rfs, "rtt_p99_us", 1.2) // 20% slower in every round
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "lat", Engine: "local", CPUs: 2, Started: latencyT0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	// One replica count: a metric per row, a tuning per column.
	if head := mdRow(t, md, "metric (unit), 1 replica"); head != "| metric (unit), 1 replica | baseline | rfs |" {
		t.Errorf("head of the metrics table: %s", head)
	}
	lat := mdRow(t, md, "rtt_p99_us (us)")
	if !strings.Contains(lat, "; ×1.200 [") || !strings.Contains(lat, "paired-t, 4 pairs: worse") {
		t.Errorf("rfs's p99 latency, 1.2 times the baseline's in every round, is not compared as worse:\n%s", lat)
	}
	if abs := mdRow(t, md, "bitrate (Gbit/s)"); strings.Contains(abs, "×") {
		t.Errorf("the bitrate's absolute table repeats the normalized table's decision:\n%s", abs)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	_, lower, ok := strings.Cut(page, "<h3>Other metrics against the baseline</h3>")
	if !ok || !strings.Contains(lower, "<h4>rtt_p99_us (us)</h4>") || !strings.Contains(lower, "paired-t, 4 pairs: worse") {
		t.Error("report.html has no latency table of the tunings against the baseline")
	}
}

// TestLatencyAcrossDatapaths: the datapath table of a latency percentile
// gives each datapath's ratio to the first with its decision, lower being
// better.
func TestLatencyAcrossDatapaths(t *testing.T) {
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{"replicas=[1]", "trials=4", "tunings=[baseline]", "datapaths=[bridge, macvlan]"}},
		study.Catalog{Datapaths: []string{"bridge", "macvlan"}, Tools: testCatalog.Tools})
	if err != nil {
		t.Fatal(err)
	}
	bridge := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: s.Variants()[0].Name, Replicas: 1}
	macvlan := bridge
	macvlan.Datapath = "macvlan"
	samples := latencyRounds(bridge, macvlan, "rtt_p99_us", 0.8)
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "latdp", Engine: "local", CPUs: 2, Started: latencyT0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	_, table, ok := strings.Cut(md, "| datapath — rtt_p99_us (us) |")
	if table, _, _ = strings.Cut(table, "\n\n"); !ok || !strings.Contains(table, "| macvlan | ") || !strings.Contains(table, "×0.800 [") || !strings.Contains(table, "better") {
		t.Errorf("macvlan's p99 latency, 0.8 of the bridge's in every round, is not compared as better:\n%s", table)
	}
}

// TestDecidedOnAnotherMetric: a study whose precision target names a metric
// no other table compares (here UDP's jitter, lower is better) is decided
// on it: the glance shows that metric's decisions and says so in its
// head, and its table shows the decision made at the look first.
func TestDecidedOnAnotherMetric(t *testing.T) {
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{"replicas=[1]", "trials={min: 3, max: 6}", "tunings=[baseline, rfs]",
		"workloads=[{name: udp, tool: iperf3, protocol: udp, rate: 1G}]", "precision={metric: jitter_ms, halfWidth: 2%}"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	c := results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: "baseline", Workload: s.Variants()[0].Name, Replicas: 1}
	rfs := c
	rfs.Tuning = "rfs"
	samples := latencyRounds(c, rfs, "jitter_ms", 0.8)
	m := analysis.Build(s, samples)
	ratio, low, high := 0.8, 0.75, 0.85
	m.Stops = []results.Stop{{Cell: rfs, Metric: "jitter_ms", Status: "target", N: 4, Decision: "better", Versus: "baseline",
		Ratio: &ratio, Low: &low, High: &high, Method: "paired-t", Confidence: 0.9833, Look: 4}}
	n := newNumbers(m)
	glance := n.glanceTables(s)
	if len(glance) != 1 || !strings.Contains(glance[0].Head[0], "(ratio of jitter_ms, lower is better)") || glance[0].Rows[0][1] != "better ×0.80 (n=4)" {
		t.Errorf("glance %+v, want rfs better on jitter_ms", glance)
	}
	r, _ := n.row(rfs, "jitter_ms", -1)
	if cell := n.absCell(r); !strings.Contains(cell, "; better at the look after 4 trials: 0.800 [0.750, 0.850]") || !strings.Contains(cell, "; all trials at 95%: ×0.800") {
		t.Errorf("jitter_ms cell %q does not lead with the look's decision", cell)
	}
}

var latencyT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// latencyRounds is 4 rounds of cell a, then cell b, each round started
// after the one before (so two datapaths count as sharing rounds): b's
// metric is factor times a's in every round, both drifting 5% a round;
// their bitrate drifts 1% a round alike.
func latencyRounds(a, b results.Cell, metric string, factor float64) []results.Sample {
	var out []results.Sample
	for trial := 1; trial <= 4; trial++ {
		for i, c := range []results.Cell{a, b} {
			g := 1 + 0.001*float64(trial%2)
			if i == 1 {
				g *= factor
			}
			start := latencyT0.Add(time.Duration(10*trial+5*i) * time.Second)
			out = append(out, results.Sample{Cell: c, Trial: trial, Attempt: 1, Start: start, End: start.Add(4 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: 9e9 * (1 + 0.01*float64(trial)), metric: 40 * g * (1 + 0.05*float64(trial))}})
		}
	}
	return out
}
