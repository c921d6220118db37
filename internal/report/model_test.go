package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// quickStudy is the rps-rfs study of the quick profile (replicas 1, 2, 4).
func quickStudy(t *testing.T, set ...string) *study.Study {
	t.Helper()
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: set}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// quickSamples: 3 trials of baseline and rfs at 1, 2 and 4 replicas, 2
// CPUs; rfs moves 10% more data with 1% spread.
func quickSamples() []results.Sample {
	var out []results.Sample
	for _, reps := range []int{1, 2, 4} {
		for _, tn := range []string{"baseline", "rfs"} {
			gain := 1.0
			if tn == "rfs" {
				gain = 1.1
			}
			for trial := 1; trial <= 3; trial++ {
				br := 10e9 / float64(reps) * gain * (1 + 0.01*float64(trial-2))
				s := results.Sample{
					Cell:    results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: reps},
					Trial:   trial,
					Metrics: map[string]float64{results.MetricBitrate: br, results.MetricBitrateSum: br * float64(reps), results.MetricRetransmits: float64(trial)},
				}
				for cpu := range 2 {
					s.Cores = append(s.Cores, results.CoreStat{CPU: cpu, CPUPercent: results.CPUPercent{
						Idle: 95 - 10*float64(reps) - 5*float64(cpu) + float64(trial), SoftIRQ: float64(reps + cpu), System: 1, User: 2,
					}})
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func markdownOf(t *testing.T, s *study.Study, m analysis.Model) string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeMarkdown(&buf, s, m, nil); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriteMarkdown(t *testing.T) {
	s := quickStudy(t)
	md := markdownOf(t, s, analysis.Build(s, quickSamples()))
	mdHas(t, md,
		"# rps-rfs: summary",
		"## calico-vxlan / tcp",
		"### Normalized bitrate (vs baseline)",
		"| tuning | 1 replica | 2 replicas | 4 replicas |",
		"| rfs | 1.100 [",
		"; p<0.001; judged on ", // the paired decision follows Welch p // Welch's p against the baseline, from the model
		"| rps | missing | missing | missing |",
		"### bitrate (Gbit/s)",
		"| baseline | 10.00 [",
		"### core_idle per core (%)",
		"## Published reference numbers",
		"| rfs+, 16 replicas | bitrate | normalized 1.24 | not measured: this run measured no tuning rfs+ |",
		// "every core > 90% idle at 1 replica": matches our 2 cores.
		"| baseline, 1 replica, every cpu | core_idle | 90 % | 82.0 to 87.0 % (means of 2 rows) |",
	)
	logIfFailed(t, md)
}

// mdHas fails the test for each string summary.md lacks.
func mdHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
}

// logIfFailed shows the whole summary.md when a check of it failed.
func logIfFailed(t *testing.T, md string) {
	t.Helper()
	if t.Failed() {
		t.Log(md)
	}
}

func TestMarkdownInlineReference(t *testing.T) {
	// With 16 replicas in the matrix, the published normalized value sits
	// beside ours in the table.
	s := quickStudy(t, "replicas=[16]")
	var smp []results.Sample
	for _, x := range quickSamples() {
		if x.Cell.Replicas == 4 {
			x.Cell.Replicas = 16
			x.Cell.Tuning = strings.Replace(x.Cell.Tuning, "rfs", "rfs+", 1)
			smp = append(smp, x)
		}
	}
	md := markdownOf(t, s, analysis.Build(s, smp))
	if !strings.Contains(md, "· paper 1.24") || strings.Contains(md, "| rfs+, 16 replicas | bitrate | normalized 1.24 | not measured") {
		t.Errorf("reference not matched:\n%s", md)
	}
}

// TestRenderersShowTheModel: the renderers format the model's numbers and
// compute none. A p value set by hand (no sample could give it) and a
// mean changed by hand appear in both report.html and summary.md.
func TestRenderersShowTheModel(t *testing.T) {
	s := quickStudy(t)
	m := analysis.Build(s, quickSamples())
	set := false
	for i := range m.Rows {
		r := &m.Rows[i]
		if r.Tuning == "rfs" && r.Replicas == 2 && r.Metric == results.MetricBitrate && r.CPU < 0 {
			r.PBaseline, r.Mean = 0.4321, 7.654321e9
			set = true
		}
	}
	if !set {
		t.Fatal("no rfs bitrate row at 2 replicas")
	}
	md := markdownOf(t, s, m)
	var page bytes.Buffer
	run := &results.Run{Samples: quickSamples(), Env: results.Env{Started: time.Unix(0, 0)}}
	if err := writeHTML(&page, run, s, m); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"summary.md": md, "report.html": page.String()} {
		if !strings.Contains(text, "; p=0.432") {
			t.Errorf("%s lacks the model's p value 0.432", name)
		}
		if !strings.Contains(text, "7.65 [") {
			t.Errorf("%s lacks the model's mean 7.65", name)
		}
	}
	// The table of all rows has the p column as well.
	if !strings.Contains(page.String(), "<th>p vs baseline</th>") || !strings.Contains(page.String(), "<td>0.432</td>") {
		t.Error("report.html's table of all rows lacks the p value")
	}
}

// TestBuildOldLayout: a run directory written before summary.json
// existed (study.yaml, env.json, samples.jsonl only, no derived files)
// builds, and gains summary.json, summary.csv with the p-value columns
// and summary.md with p values.
func TestBuildOldLayout(t *testing.T) {
	dir, _ := syntheticDir(t)
	for _, f := range []string{analysis.SummaryJSON, results.SummaryCSV, results.SummaryMD, results.ReportHTML} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Fatalf("%s exists before the build: %v", f, err)
		}
	}
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, analysis.SummaryJSON))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := analysis.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	var p float64 = math.NaN()
	for _, r := range m.Rows {
		if r.Tuning == "rfs+" && r.Replicas == 16 && r.Metric == results.MetricBitrate {
			p = r.PBaseline
		}
	}
	// rfs+ gains 20% at 16 replicas with 2% noise over 3 trials.
	if !(p < 0.05) {
		t.Fatalf("summary.json p of rfs+ at 16 replicas = %v", p)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(dir, results.SummaryCSV)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs[1:] {
		if r[1] == "rfs+" && r[3] == "16" && r[4] == "bitrate" {
			found = closeTo(r[15], p)
		}
	}
	if !found {
		t.Errorf("summary.csv lacks p = %v for rfs+ at 16 replicas", p)
	}
	if md := readFile(t, filepath.Join(dir, results.SummaryMD)); !strings.Contains(md, "; p"+analysis.FormatP(p)) {
		t.Errorf("summary.md lacks p%s", analysis.FormatP(p))
	}
}

// TestMarkdownAcrossDatapaths: with two datapaths summary.md compares them
// side by side; a metric only one datapath has (Cilium's BPF counters) is
// named once in the other's section instead of a table of "missing"; a
// planned cell without samples is listed.
func TestMarkdownAcrossDatapaths(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"bridge", "cilium"}, Tools: testCatalog.Tools}
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick",
		Set: []string{"datapaths=[bridge,cilium]", "tunings=[baseline,rps]", "replicas=[1]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var smp []results.Sample
	for _, dp := range []string{"bridge", "cilium"} {
		for trial := 1; trial <= 3; trial++ {
			x := results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricBitrate: 5e9 + float64(trial)*1e8}}
			if dp == "cilium" {
				x.Metrics["bpf_cilium_lb_count"] = 10
			}
			smp = append(smp, x)
		}
	}
	md := markdownOf(t, s, analysis.Build(s, smp))
	mdHas(t, md,
		"## Cells without samples\n\n- bridge / rps / tcp / 1 replica\n- cilium / rps / tcp / 1 replica\n",
		"## Datapaths side by side",
		"| datapath — bitrate (Gbit/s) | tcp |",
		"| cilium | 5.20 [",
		"Not measured here (other datapaths or workloads of the run have them): bpf_cilium_lb_count.",
		"| bpf_cilium_lb_count (count) |",
	)
	// The row is cilium's only; bridge's section has the line instead.
	if c := strings.Count(md, "| bpf_cilium_lb_count"); c != 1 {
		t.Errorf("%d bpf_cilium_lb_count tables, want 1 (cilium's)", c)
	}
	logIfFailed(t, md)
}

// TestNoNormalizedViewOfBaselineAlone: a study of the baseline tuning only
// (the workloads study) has nothing to normalize: no column of 1.000; and
// its metrics stand in one table per cell, a row each, not a table each.
func TestNoNormalizedViewOfBaselineAlone(t *testing.T) {
	s := quickStudy(t, "tunings=[baseline]")
	var smp []results.Sample
	for _, x := range quickSamples() {
		if x.Cell.Tuning == "baseline" {
			smp = append(smp, x)
		}
	}
	m := analysis.Build(s, smp)
	md := markdownOf(t, s, m)
	if strings.Contains(md, "### Normalized") || strings.Contains(md, "### bitrate (Gbit/s)") {
		t.Errorf("summary.md of a baseline-only run has a normalized or a per-metric table")
	}
	mdHas(t, md, "### Metrics (tuning baseline)\n\n| metric (unit) | 1 replica | 2 replicas | 4 replicas |\n|---|---|---|---|\n| bitrate (Gbit/s) | 10.00 [")
	if c, want := strings.Count(md, "### Metrics (tuning baseline)"), len(analysis.Groups(m.Rows)); c != want {
		t.Errorf("%d metric tables, want one per cell: %d", c, want)
	}
	logIfFailed(t, md)
	for _, g := range analysis.Groups(m.Rows) {
		if v := groupPage(g, newNumbers(m), func(int) string { return "" }); v.Normalized != nil {
			t.Errorf("%s: report.html has a normalized figure of the baseline alone", g.Name())
		}
	}
}

// A published number the run has no row for says which part of its point
// did not run (analysis.RefMatch.Missing, found there), and for a ratio
// the point it divides by; without a reason it is plainly not measured.
func TestReferenceNotMeasuredSaysWhy(t *testing.T) {
	ratio := 1.08
	macvlan := dpRow("macvlan", "rr-chc", "transactions_per_s", 18000)
	n := newNumbers(analysis.Model{Rows: []analysis.Row{macvlan}})
	for _, c := range []struct {
		m    analysis.RefMatch
		want string
	}{
		{analysis.RefMatch{Reference: study.Reference{Datapath: "ovs", Metric: "bitrate"}, Missing: "no datapath ovs"}, "not measured: this run measured no datapath ovs"},
		{analysis.RefMatch{Reference: study.Reference{Workload: "flows-chc", Metric: "bitrate"}, Missing: "no workload flows-chc"}, "not measured: this run measured no workload flows-chc"},
		{analysis.RefMatch{Reference: study.Reference{Metric: "rtt_p99_us"}}, "not measured"},
	} {
		if got := n.oursFor(c.m); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m.Reference, got, c.want)
		}
	}
	m := analysis.RefMatch{Reference: study.Reference{Datapath: "macvlan", Workload: "rr-chc", Metric: "transactions_per_s", Ratio: &ratio, Against: "ovs"},
		Rows: []analysis.Key{analysis.RowKey(macvlan)}, RatioMissing: "no datapath ovs"}
	if got := n.oursFor(m); !strings.Contains(got, "ratio: ovs not measured: this run measured no datapath ovs") {
		t.Errorf("ratio: %q", got)
	}
}

// The published numbers of a datapath the run measured nothing of are not
// rows of the reference table (a cluster run of flannel-backends would
// list the other backend's 75 as "not measured"); one line says whose and
// how many were left out. A reference missing for another reason (a
// workload, a replica count) stays a row. When every reference is left
// out, report.html does not claim the study lists none.
func TestReferencesOfUnmeasuredDatapathsLeftOut(t *testing.T) {
	v := 9.0
	macvlan := dpRow("macvlan", "rr-chc", "transactions_per_s", 18000)
	ref := func(dp, wl, missing string) analysis.RefMatch {
		return analysis.RefMatch{Reference: study.Reference{Datapath: dp, Workload: wl, Metric: "transactions_per_s", Value: &v}, Missing: missing}
	}
	n := newNumbers(analysis.Model{Rows: []analysis.Row{macvlan}, References: []analysis.RefMatch{
		ref("ovs", "", "no datapath ovs"),
		ref("macvlan", "flows-chc", "no workload flows-chc"),
		ref("flannel-udp", "", "no datapath flannel-udp"),
		ref("ovs", "rr-chc", "no datapath ovs"),
	}})
	tb, leftOut := n.refTable()
	if len(tb.Rows) != 1 || !strings.HasPrefix(tb.Rows[0][0], "macvlan, flows-chc") {
		t.Errorf("rows %q, want the macvlan flows-chc reference alone", tb.Rows)
	}
	if !strings.Contains(leftOut, "(2 of ovs, 1 of flannel-udp)") {
		t.Errorf("left-out line %q", leftOut)
	}

	s := quickStudy(t)
	m := analysis.Build(s, quickSamples())
	for i := range m.References {
		m.References[i].Reference.Datapath, m.References[i].Missing, m.References[i].Rows = "ovs", "no datapath ovs", nil
	}
	md := markdownOf(t, s, m)
	var page bytes.Buffer
	if err := writeHTML(&page, &results.Run{Samples: quickSamples(), Env: results.Env{Started: time.Unix(0, 0)}}, s, m); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(%d of ovs)", len(m.References))
	for name, text := range map[string]string{"summary.md": md, "report.html": page.String()} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", name, want)
		}
		if strings.Contains(text, "| ovs") || strings.Contains(text, "<td>ovs") || strings.Contains(text, "lists no published numbers") {
			t.Errorf("%s shows the left-out references or says there are none", name)
		}
	}
}

// Seed 004's Fig. 10a and Fig. 12 numbers stand beside the cells they
// describe in summary.md: each class's throughput span (VXLAN overlays
// 14 ~ 15.5 Gb/s, Layer-3 routing 18 ~ 19.7) in its CNIs' inter-host
// cells and the reference table, the span of a native CNI over Flannel
// beside our ratio, and one background connection's ~2 Gb/s cost beside
// our difference of means, with its interval. The ratio's note says it
// is derived here: the paper gives the spans, no ratio.
func TestMarkdownCNICompareRanges(t *testing.T) {
	s, err := study.Resolve("cni-compare", study.Options{Set: []string{"datapaths=[flannel,kube-router]", "workloads=[tcp-inter,bg-intra]"}},
		study.Catalog{Datapaths: catalog.Names(), Tools: testCatalog.Tools})
	if err != nil {
		t.Fatal(err)
	}
	mean := map[[2]string]float64{
		{"flannel", "tcp-inter"}: 14.6e9, {"kube-router", "tcp-inter"}: 19.1e9,
		{"flannel", "bg-intra@bg0"}: 40e9, {"flannel", "bg-intra@bg1"}: 38e9,
	}
	var smp []results.Sample
	start := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	for trial := 1; trial <= 3; trial++ {
		for k, v := range mean {
			at := start.Add(time.Duration(trial) * time.Minute)
			smp = append(smp, results.Sample{Cell: results.Cell{Datapath: k[0], Tuning: "baseline", Workload: k[1], Replicas: 1},
				Trial: trial, Start: at, End: at.Add(30 * time.Second), Metrics: map[string]float64{results.MetricBitrate: v * (1 + 0.01*float64(trial-2))}})
		}
	}
	md := markdownOf(t, s, analysis.Build(s, smp))
	mdHas(t, md, "| flannel | 14.60 [14.24, 14.96] (n=3) · paper 14 to 15.5 |", "| kube-router | 19.10 [18.63, 19.57] (n=3) · paper 18 to 19.7;",
		"| flannel, tcp-inter | bitrate | 14 to 15.5 Gbit/s | 14.60 [14.24, 14.96] Gbit/s (n=3) |",
		"| kube-router, tcp-inter | bitrate | kube-router / flannel = 1.161 to 1.407 | kube-router / flannel = 1.308 [",
		// The ratio is ours, from the paper's two spans: the note beside
		// it says so, since the column beside it is the paper's.
		"kube-router / flannel = 1.308 [1.308, 1.308] (paired-t, 3 pairs; n=3 and 3) | derived here from Fig. 10a's text spans, 18 / 15.5 to 19.7 / 14 Gb/s (Layer-3 routing over the VXLAN overlays); the paper gives no ratio |",
		"| bg-intra@bg1 | bitrate | bg-intra@bg1 − bg-intra@bg0 = -2 Gbit/s | bg-intra@bg1 − bg-intra@bg0 = -2.00 [-2.89, -1.11] Gbit/s (Welch, n=3 and 3) | Fig. 12 (text)")
	logIfFailed(t, md)
}

// A figure marks both ends of a published range (refEnds), one × for a
// single number and none where the reference has no such number.
func TestRefEnds(t *testing.T) {
	low, high := 1.161, 1.407
	for _, c := range []struct {
		v, upTo *float64
		want    []float64
	}{{nil, &high, nil}, {&low, nil, []float64{low}}, {&low, &high, []float64{low, high}}} {
		if got := refEnds(c.v, c.upTo); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("refEnds: %v, want %v", got, c.want)
		}
	}
}
