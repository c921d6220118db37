package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
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
		Tools: map[string][]string{"iperf3": {"tcp", "udp"}, "sockperf": {"tcp", "udp"}, "ab": {"tcp"}}}
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
				m[cpp.TotalMetric(unit)] = 155
			case w.Protocol == "udp":
				r, _ := study.ParseRate(w.Rate)
				m["offered_bps"], m[results.MetricBitrate], m["lost_percent"], m["jitter_ms"] = r, 0.8*r*f, 20, 0.2
			default:
				m[results.MetricBitrate] = 5e9 * f
				if k := w.BackgroundConnections(); k > 0 {
					m["background_bitrate_bps"], m["background_connections_count"] = float64(k)*10e6, float64(k)
				}
			}
			samples = append(samples, results.Sample{Cell: c, Trial: trial, Start: time.Unix(0, 0), End: time.Unix(4, 0), Metrics: m, Series: series})
		}
	}
	return s, samples
}

func TestWorkloadFigures(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	rows := analysis.Summarize(s, samples)
	figs := workloadFigures(s, rows, samples)
	want := []string{"UDP received vs offered", "UDP lost datagrams", "UDP jitter", "Bitrate per variant (flannel-vxlan / flows)",
		"Round-trip latency percentiles", "Round-trip latency CDF", "HTTP requests/s vs concurrency", "HTTP latency CDF",
		"Measured bitrate vs background connections", "CPU cost per packet by component"}
	for _, w := range want {
		found := false
		for _, f := range figs {
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
	if tb := workloadTable(s, rows); len(tb.Rows) != len(s.Variants()) {
		t.Errorf("workload table has %d rows, want %d", len(tb.Rows), len(s.Variants()))
	}
}

// The rps-rfs study (one plain TCP workload) gets no workload section.
func TestNoWorkloadFiguresForPlainStudy(t *testing.T) {
	_, samples := syntheticDir(t)
	s, err := study.Resolve("rps-rfs", study.Options{}, study.Catalog{Datapaths: []string{"calico-vxlan"}, Tools: map[string][]string{"iperf3": {"tcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	if figs := workloadFigures(s, analysis.Summarize(s, samples), samples); len(figs) != 0 {
		t.Errorf("%d workload figures for rps-rfs", len(figs))
	}
}

// TestCPPFigureUnit: the stacked CPP bars say the unit of the event the
// run sampled, in the title and on the axis, and never the other one.
func TestCPPFigureUnit(t *testing.T) {
	for unit, other := range map[string]string{cpp.UnitNs: cpp.UnitCycles, cpp.UnitCycles: cpp.UnitNs} {
		s, samples := syntheticWorkloadsCPP(t, unit)
		var cppFigs []figure
		for _, f := range workloadFigures(s, analysis.Summarize(s, samples), samples) {
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
		// The bar stacks to the total (155) with the four components.
		if !strings.Contains(svg, ">vxlan</text>") || !strings.Contains(svg, ">other</text>") {
			t.Errorf("%s: legend lacks components", unit)
		}
	}
}
