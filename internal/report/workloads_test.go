package report

import (
	"github.com/cnibench/cnibench/internal/collect"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// syntheticWorkloads makes two trials of every variant of the built-in
// workloads study (quick profile) with plausible numbers; CPP costs are
// in ns of CPU time (cpu-clock).
func syntheticWorkloads(t *testing.T) (*study.Study, []results.Sample) {
	return syntheticWorkloadsCPP(t, cpp.UnitNs)
}

// syntheticWorkloadsCPP is syntheticWorkloads with CPP costs in unit.
func syntheticWorkloadsCPP(t *testing.T, unit string) (*study.Study, []results.Sample) {
	t.Helper()
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"},
		Tools: registry.Tools()}
	s, err := study.Resolve("workloads", study.Options{Profile: "quick"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, c := range s.Cells() {
		w, _ := s.Workload(c.Workload)
		for trial := 1; trial <= 2; trial++ {
			f := 1 + 0.01*float64(trial)
			m := map[string]float64{}
			var series []map[string][]float64
			switch {
			case w.Tool == "sockperf":
				m["transactions_per_s"], m["rtt_mean_us"] = 20000*f, 50/f
				m["rtt_p50_us"], m["rtt_p90_us"], m["rtt_p99_us"], m["rtt_p999_us"] = 40, 60, 200, 900
				series = []map[string][]float64{{"cdf_rtt_us": {30, 40, 60, 200, 900, 5000}, "cdf_fraction": {0, 0.5, 0.9, 0.99, 0.999, 1}}}
			case w.Tool == "ab":
				m["requests_per_s"], m["transfer_bps"] = 100*f*float64(w.Concurrent()), 100*f*5*(1<<20)*8
				m["latency_p50_ms"], m["latency_p99_ms"] = 10, 40
				series = []map[string][]float64{{"cdf_latency_ms": {5, 10, 20, 40, 80}, "cdf_fraction": {0, 0.5, 0.9, 0.99, 1}}}
			case w.CPP:
				m[results.MetricBitrate] = 5e9
				m[cpp.MetricName("vxlan", unit)], m[cpp.MetricName("bridge", unit)], m[cpp.MetricName("veth", unit)], m[cpp.MetricName("other", unit)] = 30, 15, 10, 100
				m[cpp.TotalMetric(unit)], m[cpp.ExcludedMetric(unit)] = 155, 40
			case w.Protocol == "udp":
				r, _ := study.ParseRate(w.Rate)
				m["offered_bps"], m[results.MetricBitrate], m["lost_percent"], m["jitter_ms"] = r, 0.8*r*f, 20, 0.2
			default:
				m[results.MetricBitrate] = 5e9 * f
				if k := w.BackgroundConnections(); k > 0 {
					m["background_bitrate_bps"], m["background_connections_count"] = float64(k)*10e6, float64(k)
				}
				if w.Background != nil {
					m[collect.MetricNodeCPUClient] = (20 + float64(w.BackgroundConnections())/10) * f
				}
			}
			samples = append(samples, results.Sample{Cell: c, Trial: trial, Start: time.Unix(0, 0), End: time.Unix(4, 0), Metrics: m, Series: series})
		}
	}
	return s, samples
}

// allFigures lists the section's figures, sweeps' included.
func allFigures(sec workloadSection) []figure {
	figs := append([]figure(nil), sec.Figures...)
	for _, sw := range sec.Sweeps {
		figs = append(figs, sw.Figures...)
	}
	return figs
}

func TestWorkloadFigures(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	sec := buildWorkloads(s, analysis.Build(s, samples), samples)
	want := []string{"UDP received vs offered", "UDP lost datagrams", "UDP jitter", "Bitrate vs parallel streams (flannel-vxlan / flows)",
		"Round-trip latency percentiles", "Round-trip latency CDF", "HTTP requests/s vs concurrency", "HTTP latency CDF",
		"Measured bitrate vs background connections", "Node CPU vs background connections", "CPU cost per packet by component"}
	for _, w := range want {
		found := false
		for _, f := range allFigures(sec) {
			if strings.HasPrefix(f.Title, w) {
				found = true
				if f.SVG == "" {
					t.Errorf("%s: no SVG: %s", f.Title, f.Missing)
				}
			}
		}
		if !found {
			t.Errorf("no figure %q", w)
		}
	}
	// Axes are labelled with the decimals their steps need: the UDP
	// figure's 0-500 Mbit/s axes read "250", not gonum's "250.00".
	tick := regexp.MustCompile(`<text[^>]*>\s*(-?[0-9]+\.([0-9]+))\s*</text>`)
	for _, f := range allFigures(sec) {
		var labels []string
		needed := false
		for _, m := range tick.FindAllStringSubmatch(string(f.SVG), -1) {
			labels = append(labels, m[1])
			needed = needed || strings.Trim(m[2], "0") != ""
		}
		if len(labels) > 1 && !needed {
			t.Errorf("%s: tick labels %q carry decimals none of them needs", f.Title, labels)
		}
	}
	// The quick profile: tcp, intra and cpp do not sweep; udp, flows, rr,
	// http and background sweep two values each.
	var plain []string
	for _, r := range sec.Table.Rows {
		plain = append(plain, r[1])
	}
	if strings.Join(plain, ",") != "tcp,intra,cpp" {
		t.Errorf("headline table rows %v, want the workloads that do not sweep", plain)
	}
	var titles []string
	for _, sw := range sec.Sweeps {
		titles = append(titles, sw.Title)
		if len(sw.Table.Rows) != 2 {
			t.Errorf("%s: %d rows, want one per swept value (2)", sw.Title, len(sw.Table.Rows))
		}
		if len(sw.Figures) == 0 {
			t.Errorf("%s: no figures", sw.Title)
		}
		for _, f := range sw.Figures {
			if !strings.Contains(f.Title, "flannel-vxlan / "+strings.Split(strings.TrimPrefix(sw.Title, "flannel-vxlan / "), ":")[0]) {
				t.Errorf("sweep %s holds figure %s", sw.Title, f.Title)
			}
		}
	}
	wantTitles := "flannel-vxlan / udp: rate per stream sweep|flannel-vxlan / flows: parallel streams sweep|flannel-vxlan / rr: message size sweep|" +
		"flannel-vxlan / http: concurrency sweep|flannel-vxlan / background: background connections sweep"
	if got := strings.Join(titles, "|"); got != wantTitles {
		t.Errorf("sweeps %s", got)
	}
	for _, f := range sec.Figures {
		if !strings.HasPrefix(f.Title, "CPU cost per packet") {
			t.Errorf("figure %q outside its sweep", f.Title)
		}
	}
}

// TestSweepTable: one row per swept value, the swept value itself in the
// first column, the sweep's headline metrics with 95% CIs (two trials
// per cell in the synthetic run).
func TestSweepTable(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	var http sweepView
	for _, sw := range buildWorkloads(s, analysis.Build(s, samples), samples).Sweeps {
		if strings.Contains(sw.Title, "/ http:") {
			http = sw
		}
	}
	head := strings.Join(http.Table.Head, "|")
	if !strings.HasPrefix(head, "concurrency|requests_per_s (1/s)|transfer_bps (Gbit/s)|latency_p99_ms (ms)") || strings.Contains(head, "bitrate") {
		t.Errorf("http sweep columns %s", head)
	}
	if len(http.Table.Rows) != 2 || http.Table.Rows[0][0] != "1" || http.Table.Rows[1][0] != "8" {
		t.Fatalf("rows %v", http.Table.Rows)
	}
	// requests/s = 100 x (1.01, 1.02) x concurrency: at c=1 mean 101.5,
	// SD 0.707, 95% CI 101.5 ± 12.706 x 0.5 = [95.15, 107.85], shown
	// with 0 decimals (1/s).
	if got := http.Table.Rows[0][1]; got != "102 [95, 108]" {
		t.Errorf("c=1 requests/s %q, want 102 [95, 108]", got)
	}
}

// The rps-rfs study (one plain TCP workload) gets no workload section.
func TestNoWorkloadFiguresForPlainStudy(t *testing.T) {
	_, samples := syntheticDir(t)
	s, err := study.Resolve("rps-rfs", study.Options{}, study.Catalog{Datapaths: []string{"calico-vxlan"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	if sec := buildWorkloads(s, analysis.Build(s, samples), samples); !sec.empty() {
		t.Errorf("workload section for rps-rfs: %d figures, %d sweeps", len(sec.Figures), len(sec.Sweeps))
	}
}

// TestCPPFigureUnit: the stacked CPP bars say the unit of the event the
// run sampled, in the title and on the axis, and never the other one.
func TestCPPFigureUnit(t *testing.T) {
	for unit, other := range map[string]string{cpp.UnitNs: cpp.UnitCycles, cpp.UnitCycles: cpp.UnitNs} {
		s, samples := syntheticWorkloadsCPP(t, unit)
		var cppFigs []figure
		for _, f := range buildWorkloads(s, analysis.Build(s, samples), samples).Figures {
			if strings.HasPrefix(f.Title, "CPU cost per packet") {
				cppFigs = append(cppFigs, f)
			}
		}
		if len(cppFigs) != 1 {
			t.Fatalf("%s: %d CPP figures", unit, len(cppFigs))
		}
		f := cppFigs[0]
		svg := string(f.SVG)
		if !strings.HasSuffix(f.Title, "("+unit+")") || !strings.Contains(svg, ">"+unit+" / packet</text>") {
			t.Errorf("%s: title %q, axis label missing", unit, f.Title)
		}
		if strings.Contains(svg, other+" / packet") || strings.Contains(f.Title, other) {
			t.Errorf("%s figure mentions %s", unit, other)
		}
		if unit == cpp.UnitCycles && strings.Contains(f.Caption, "Nanoseconds") {
			t.Errorf("cycles caption: %s", f.Caption)
		}
		// The bar stacks to the total (155) with the four components;
		// what the total leaves out is no component, and the caption
		// says where it is.
		if !strings.Contains(svg, ">vxlan</text>") || !strings.Contains(svg, ">other</text>") {
			t.Errorf("%s: legend lacks components", unit)
		}
		if strings.Contains(svg, ">excluded</text>") || !strings.Contains(f.Caption, "cpp_excluded_"+unit+" in summary.csv") {
			t.Errorf("%s: the excluded cost is stacked, or the caption %q does not name it", unit, f.Caption)
		}
	}
}

// writeWorkloadsRun writes the synthetic workloads run (syntheticWorkloads)
// as a run directory, the way a real run does.
func writeWorkloadsRun(t *testing.T, dir string) {
	t.Helper()
	s, samples := syntheticWorkloads(t)
	writeRun(t, dir, s, results.Env{Tool: "cnibench", Version: "test", RunID: "synthetic-workloads", Engine: "local", Hostname: "testhost",
		Kernel: "6.1.0-test", CPUModel: "Synthetic CPU", CPUs: 2, NUMANodes: 1, Started: time.Unix(0, 0),
		Notes: []string{"synthetic data for tests"}}, samples)
}

// writeRun writes a run directory of study s: study.yaml, env.json and
// the samples, as a run does.
func writeRun(t *testing.T, dir string, s *study.Study, env results.Env, samples []results.Sample) {
	t.Helper()
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteStudy(y); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEnv(env); err != nil {
		t.Fatal(err)
	}
	for _, smp := range samples {
		if err := w.AppendSample(smp); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportCollapsesSweeps fails if per-variant sections come back: in
// report.html a swept workload is one block (heading, one table with a
// row per value, its figures), and no heading names a NAME@VALUE
// variant; workloads that do not sweep keep their own sections.
func TestReportCollapsesSweeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeWorkloadsRun(t, dir)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	headings := regexp.MustCompile(`<h[23][^>]*>([^<]*)</h[23]>`).FindAllStringSubmatch(page, -1)
	var sections []string
	for _, h := range headings {
		if strings.Contains(h[1], "@") {
			t.Errorf("heading for a sweep variant: %s", h[0])
		}
		if strings.HasPrefix(h[0], "<h2>flannel-vxlan / ") {
			sections = append(sections, strings.TrimPrefix(h[1], "flannel-vxlan / "))
		}
	}
	if got := strings.Join(sections, ","); got != "tcp,intra,cpp" {
		t.Errorf("per-cell sections %s, want only the workloads that do not sweep (tcp,intra,cpp)", got)
	}
	for _, sw := range []string{"udp: rate per stream", "flows: parallel streams", "rr: message size", "http: concurrency", "background: background connections"} {
		h := `<h3 class="sweep">flannel-vxlan / ` + sw + ` sweep</h3>`
		i := strings.Index(page, h)
		if i < 0 {
			t.Errorf("no sweep block %q", h)
			continue
		}
		// The block's table: a header and two rows (two values), each
		// value with a 95% interval in brackets.
		block := page[i:]
		if j := strings.Index(block[len(h):], "<h"); j >= 0 {
			block = block[:len(h)+j]
		}
		if n := strings.Count(block, "<table>"); n != 1 {
			t.Errorf("%s: %d tables, want 1", sw, n)
		}
		if n := strings.Count(block, "<tr>"); n != 3 {
			t.Errorf("%s: %d table rows with the header, want 3", sw, n)
		}
		if !strings.Contains(block, " [") || !strings.Contains(block, "<svg") {
			t.Errorf("%s: no CI or no figure in its block", sw)
		}
	}

	// summary.md likewise: a section per workload that does not sweep and
	// one per sweep, with a row per value; none per variant.
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	var mdSections []string
	for _, l := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(l, "## flannel-vxlan / "); ok {
			mdSections = append(mdSections, h)
		}
		if strings.HasPrefix(l, "#") && strings.Contains(l, "@") {
			t.Errorf("summary.md heading for a sweep variant: %s", l)
		}
	}
	want := "tcp,intra,cpp,udp: rate per stream sweep,flows: parallel streams sweep,rr: message size sweep,http: concurrency sweep,background: background connections sweep"
	if got := strings.Join(mdSections, ","); got != want {
		t.Errorf("summary.md sections\n %s\nwant\n %s", got, want)
	}
	_, block, ok := strings.Cut(md, "## flannel-vxlan / http: concurrency sweep\n\n")
	table, _, _ := strings.Cut(block, "\n\n")
	if lines := strings.Split(table, "\n"); !ok || len(lines) != 4 || !strings.HasPrefix(lines[0], "| concurrency |") || !strings.Contains(lines[3], " [") {
		t.Errorf("summary.md http sweep: want a header, a rule and two value rows with CIs:\n%s", table)
	}
}

// TestQperfFigure: qperf reports a mean round trip and no percentiles, so
// its request/response sweep gets a figure of the mean, not empty
// percentile bars and a CDF saying nothing was recorded; and one message
// size gets no figure (the tables have its mean).
func TestQperfFigure(t *testing.T) {
	s, samples := qperfRun(t, "messageSizes: [1, 64]")
	var titles []string
	for _, f := range allFigures(buildWorkloads(s, analysis.Build(s, samples), samples)) {
		titles = append(titles, f.Title)
		if f.SVG == "" {
			t.Errorf("%s: no SVG: %s", f.Title, f.Missing)
		}
		if !strings.Contains(f.Caption, "qperf") {
			t.Errorf("%s: caption does not name qperf: %s", f.Title, f.Caption)
		}
	}
	if want := []string{"Mean round-trip time (flannel-vxlan / rr)"}; strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("figures %q, want %q", titles, want)
	}
	s, samples = qperfRun(t, "messageSize: 1")
	sec := buildWorkloads(s, analysis.Build(s, samples), samples)
	if figs := allFigures(sec); len(figs) != 0 {
		t.Errorf("one message size: figure %q, want none", figs[0].Title)
	}
}

// qperfRun is the workloads study with one qperf workload (size: its
// message size field) and two trials of each cell.
func qperfRun(t *testing.T, size string) (*study.Study, []results.Sample) {
	t.Helper()
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan"}, Tools: registry.Tools()}
	s, err := study.Resolve("workloads", study.Options{Profile: "quick",
		Set: []string{"workloads=[{name: rr, tool: qperf, protocol: tcp, " + size + "}]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, c := range s.Cells() {
		for trial := 1; trial <= 2; trial++ {
			f := 1 + 0.01*float64(trial)
			m := map[string]float64{"transactions_per_s": 9000 * f, "rtt_mean_us": 110 / f, "half_rtt_mean_us": 55 / f}
			samples = append(samples, results.Sample{Cell: c, Trial: trial, Start: time.Unix(0, 0), End: time.Unix(4, 0), Metrics: m})
		}
	}
	return s, samples
}

// TestUDPFigureSentByPktgen: with the pktgen sender the samples carry
// what it sent as sent_bps, not iperf3's sender_bitrate. The UDP figure
// drew its "sent" line from sender_bitrate alone, so that line vanished
// for exactly the runs where it shows a generator falling behind, and
// its caption named iperf3's server intervals for device counters.
func TestUDPFigureSentByPktgen(t *testing.T) {
	for _, tc := range []struct{ metric, caption string }{
		{"sender_bitrate", "(iperf3 server intervals)"},
		{iperf3.MetricSent, "(pktgen sender; what arrived is the receiving device's packet counter)"},
	} {
		s, samples := syntheticWorkloads(t)
		for i := range samples {
			if w, _ := s.Workload(samples[i].Cell.Workload); w.Protocol == "udp" && !w.CPP {
				samples[i].Metrics[tc.metric] = 0.9 * samples[i].Metrics["offered_bps"]
			}
		}
		sec := buildWorkloads(s, analysis.Build(s, samples), samples)
		found := false
		for _, f := range allFigures(sec) {
			if !strings.HasPrefix(f.Title, "UDP received vs offered") {
				continue
			}
			found = true
			if !strings.Contains(string(f.SVG), ">sent<") {
				t.Errorf("%s: no sent line in %s", tc.metric, f.Title)
			}
			if !strings.Contains(f.Caption, tc.caption) {
				t.Errorf("%s: caption %q, want %q", tc.metric, f.Caption, tc.caption)
			}
		}
		if !found {
			t.Fatal("no UDP figure")
		}
	}
}
