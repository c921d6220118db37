package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
)

func sample(dp, tuning string, reps int, bitrate float64) results.Sample {
	return results.Sample{
		Cell:    results.Cell{Datapath: dp, Tuning: tuning, Workload: "tcp", Replicas: reps},
		Metrics: map[string]float64{results.MetricBitrate: bitrate, "retransmits": 1},
	}
}

func TestRunsMatchesCellsAcrossDatapathNames(t *testing.T) {
	a := []results.Sample{sample("bridge", "baseline", 1, 10e9), sample("bridge", "baseline", 1, 12e9), sample("bridge", "rfs", 1, 11e9)}
	b := []results.Sample{sample("kube-cni", "baseline", 1, 5e9), sample("kube-cni", "baseline", 1, 6e9), sample("kube-cni", "rps", 1, 1e9)}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1 (only baseline/r=1 is in both): %+v", len(rows), rows)
	}
	r := rows[0]
	if r.A.Mean != 11e9 || r.B.Mean != 5.5e9 {
		t.Errorf("means %v %v", r.A.Mean, r.B.Mean)
	}
	if math.Abs(r.Ratio.Ratio-0.5) > 1e-12 {
		t.Errorf("ratio %v, want 0.5", r.Ratio.Ratio)
	}
	if !strings.Contains(r.Key, "bridge|kube-cni") {
		t.Errorf("key %q does not name both datapaths", r.Key)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Head{A: "local", B: "kube"}, rows); err != nil {
		t.Fatal(err)
	}
	// The key's "|" would end the table's first cell.
	if !strings.Contains(buf.String(), "| bridge\\|kube-cni/baseline/tcp/r=1 | bitrate") {
		t.Errorf("markdown does not escape the key's |:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "| 2, 2 | 0.500 [") {
		t.Errorf("markdown lacks the trial counts and the ratio with its interval:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "not corrected for multiple comparisons (1 rows;") {
		t.Errorf("markdown does not say how p was computed:\n%s", buf.String())
	}
}

// With several datapaths, names must agree: calico vs flannel are not
// the same cell.
func TestRunsKeepsDatapathsApartWhenSeveral(t *testing.T) {
	a := []results.Sample{sample("calico-vxlan", "baseline", 1, 1), sample("flannel-vxlan", "baseline", 1, 2)}
	b := []results.Sample{sample("calico-vxlan", "baseline", 1, 3), sample("bridge", "baseline", 1, 4)}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 1 || rows[0].DataA != "calico-vxlan" || rows[0].DataB != "calico-vxlan" {
		t.Fatalf("rows %+v", rows)
	}
}

// A row whose A cannot be told from 0 shows the delta method's interval,
// marked, cut at 0 for quantities that cannot be negative, and the note
// says why; numbers of five digits are not in exponent form.
func TestDeltaRowMarked(t *testing.T) {
	jitter := func(v float64) results.Sample {
		s := sample("flannel-udp", "baseline", 1, 1e9)
		s.Metrics["jitter_ms"], s.Metrics["rtt_us"] = v, 1000*v+10000
		return s
	}
	a := []results.Sample{jitter(0.01), jitter(0.2), jitter(0.005)}
	rows := Runs(counted(a), counted(a), []string{"jitter_ms", "rtt_us"}, nil, nil, nil)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Head{A: "a", B: "b"}, rows); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"| 1.000 [0.000, ", "] delta |", "\"delta\": A's mean cannot be told from 0", "| 10072 [9796, 10348] |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, " delta |") != 1 {
		t.Errorf("want only the jitter row marked delta:\n%s", out)
	}
}

func TestNoCommonCells(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Head{A: "a", B: "b"}, nil); err != nil || !strings.Contains(buf.String(), "No cell") {
		t.Fatalf("%v %q", err, buf.String())
	}
}

// Rows come per metric in the order run A measured its cells (the
// study's), not by name: rfs before rfs+, 4 replicas before 16.
func TestRunsInStudyOrder(t *testing.T) {
	var a []results.Sample
	for _, reps := range []int{4, 16} {
		for _, tn := range []string{"baseline", "rfs", "rfs+"} {
			a = append(a, sample("bridge", tn, reps, 10e9), sample("bridge", tn, reps, 11e9))
		}
	}
	rows := Runs(counted(a), counted(a), nil, nil, nil, nil)
	var got []string
	for _, r := range rows {
		got = append(got, r.Metric+" "+r.Key)
	}
	want := []string{
		"bitrate bridge/baseline/tcp/r=4", "bitrate bridge/rfs/tcp/r=4", "bitrate bridge/rfs+/tcp/r=4",
		"bitrate bridge/baseline/tcp/r=16", "bitrate bridge/rfs/tcp/r=16", "bitrate bridge/rfs+/tcp/r=16",
	}
	if len(got) != 12 || strings.Join(got[:6], "\n") != strings.Join(want, "\n") || !strings.HasPrefix(got[6], "retransmits bridge/baseline/tcp/r=4") {
		t.Errorf("order:\n%s", strings.Join(got, "\n"))
	}
}

// A cell bound by one core in A and not in B (what RPS does to a veth
// pair's single receive queue) is listed with both sides' trial counts,
// matched across datapath names as the rows are; a cell bound in
// neither, or missing from B, is not.
func TestOneCoreChanges(t *testing.T) {
	cores := func(idle0, idle1 float64) []results.CoreStat {
		return []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: idle0, SoftIRQ: 70}},
			{CPU: 1, CPUPercent: results.CPUPercent{Idle: idle1, SoftIRQ: 5}}}
	}
	withCores := func(s results.Sample, c []results.CoreStat) results.Sample { s.Cores = c; return s }
	a := []results.Sample{
		withCores(sample("bridge", "baseline", 1, 1e9), cores(1, 80)),
		withCores(sample("bridge", "baseline", 1, 1e9), cores(2, 85)),
		withCores(sample("bridge", "baseline", 4, 1e9), cores(30, 30)),
		withCores(sample("bridge", "rps", 1, 1e9), cores(0, 90)),
	}
	b := []results.Sample{
		withCores(sample("kube-cni", "baseline", 1, 2e9), cores(30, 40)),
		withCores(sample("kube-cni", "baseline", 1, 2e9), cores(0, 60)),
		withCores(sample("kube-cni", "baseline", 1, 2e9), cores(35, 30)),
		withCores(sample("kube-cni", "baseline", 4, 2e9), cores(20, 25)),
	}
	got := OneCore(&results.Run{Samples: a}, &results.Run{Samples: b}, nil, nil)
	if len(got) != 1 {
		t.Fatalf("%d cells, want baseline r=1 only: %+v", len(got), got)
	}
	g := got[0]
	if g.Key != "bridge|kube-cni/baseline/tcp/r=1" || g.Node != "server" || g.A.Bound != 2 || g.A.N != 2 || g.B.Bound != 1 || g.B.N != 3 || !g.ABound || g.BBound {
		t.Errorf("%+v", g)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Head{A: "a", B: "b", Bound: got}, Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := "| bridge\\|kube-cni/baseline/tcp/r=1 | server | **bound** in 2 of 2 trials (cpu 0: 98% busy, 70% softirq) | 1 of 3 trials bound |"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, buf.String())
	}
}

// A side of one trial has no interval in the CSV and JSON (empty, null),
// not bounds at its mean that read as a zero-width interval.
func TestOneTrialSideHasNoInterval(t *testing.T) {
	a := []results.Sample{sample("bridge", "baseline", 1, 10e9)}
	b := []results.Sample{sample("bridge", "baseline", 1, 11e9), sample("bridge", "baseline", 1, 12e9)}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	var buf bytes.Buffer
	if err := Write(&buf, "csv", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// n_a mean_a ci_low_a ci_high_a n_b mean_b ci_low_b ci_high_b ratio
	// ratio_low ratio_high ratio_method
	if r := recs[1][2:14]; r[0] != "1" || r[1] != "1e+10" || r[2] != "" || r[3] != "" || r[4] != "2" || r[6] == "" || r[7] == "" ||
		r[8] != "1.15" || r[9] != "" || r[10] != "" || r[11] != "none" {
		t.Errorf("csv sides: %q", r)
	}
	buf.Reset()
	if err := Write(&buf, "json", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			A struct {
				N    int      `json:"n"`
				Low  *float64 `json:"ci_low"`
				High *float64 `json:"ci_high"`
			} `json:"a"`
			B struct {
				Low *float64 `json:"ci_low"`
			} `json:"b"`
			Ratio     *float64 `json:"ratio"`
			RatioLow  *float64 `json:"ratio_low"`
			RatioHigh *float64 `json:"ratio_high"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Rows[0]; r.A.N != 1 || r.A.Low != nil || r.A.High != nil || r.Ratio == nil || r.RatioLow != nil || r.RatioHigh != nil || r.B.Low == nil {
		t.Errorf("json: %s", buf.String())
	}
}

// counted is a run of the given counted samples only.
func counted(samples []results.Sample) *results.Run { return &results.Run{Samples: samples} }

// compare printed "ceiling_at_high ()": a metric without a unit (a 0/1
// flag) got empty parentheses, which read as a unit left out; the
// report's labels had dropped them already. One with a unit keeps it.
func TestMarkdownNoEmptyUnit(t *testing.T) {
	for _, c := range []struct{ metric, label string }{
		{iperf3.MetricCeilingAtHigh, "| " + iperf3.MetricCeilingAtHigh + " |"},
		{results.MetricBitrate, "| " + results.MetricBitrate + " (Gbit/s) |"},
	} {
		cell := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
		a := []results.Sample{{Cell: cell, Metrics: map[string]float64{c.metric: 1}}, {Cell: cell, Metrics: map[string]float64{c.metric: 1}}}
		rows := Runs(counted(a), counted(a), []string{c.metric}, nil, nil, nil)
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, Head{A: "a", B: "b"}, rows); err != nil {
			t.Fatal(err)
		}
		if md := buf.String(); !strings.Contains(md, c.label) || strings.Contains(md, "()") {
			t.Errorf("%s: want %q, no \"()\":\n%s", c.metric, c.label, md)
		}
	}
}
