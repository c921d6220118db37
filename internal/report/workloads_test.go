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
// workloads study (quick profile) with plausible numbers.
func syntheticWorkloads(t *testing.T) (*study.Study, []results.Sample) {
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
				m[cpp.MetricName("vxlan")], m[cpp.MetricName("bridge")], m[cpp.MetricName("veth")], m[cpp.MetricName("other")] = 30, 15, 10, 100
				m[cpp.MetricTotal] = 155
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

// A node with a hardware cycle counter gives cycles per packet: the CPP
// figure is drawn in cycles and says so.
func TestCPPFigureInCycles(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	for i := range samples {
		m := samples[i].Metrics
		for k, v := range m {
			if c, u, ok := cpp.ComponentOf(k); ok && u == cpp.UnitNs {
				m[cpp.MetricFor(c, cpp.UnitCycles)] = 3 * v
				delete(m, k)
			}
		}
		if v, ok := m[cpp.MetricTotal]; ok {
			m[cpp.MetricTotalCycles] = 3 * v
			delete(m, cpp.MetricTotal)
		}
	}
	rows := analysis.Summarize(s, samples)
	var f *figure
	for _, fig := range workloadFigures(s, rows, samples) {
		if strings.HasPrefix(fig.Title, "CPU cost per packet") {
			f = &fig
		}
	}
	if f == nil || f.SVG == "" {
		t.Fatal("no CPP figure in cycles")
	}
	if !strings.Contains(f.Caption, "CPU cycles per MTU-sized packet") || !strings.Contains(string(f.SVG), "cycles / packet") {
		t.Errorf("figure does not say cycles: %s", f.Caption)
	}
	for _, r := range rows {
		if r.Metric == cpp.MetricTotalCycles && r.Unit != "cycles/packet" {
			t.Errorf("unit of %s: %q", r.Metric, r.Unit)
		}
	}
}
