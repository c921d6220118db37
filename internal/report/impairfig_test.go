package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// flannel-backends quick on synthetic samples: a figure per workload
// variant and impairment metric it has, a verdict table with the paper's
// verdicts beside ours, and the Ethernet bound beside the saturated UDP
// cells, in report.html's model and summary.md.
func TestImpairmentReport(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan", "flannel-udp"}, Tools: registry.Tools()}
	s, err := study.Resolve("flannel-backends", study.Options{Profile: "quick"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, c := range s.Cells() {
		for trial := 1; trial <= 2; trial++ {
			m := map[string]float64{"bitrate": 900e6 + float64(trial)*1e6, "offered_bps": 1e9}
			if strings.HasPrefix(c.Workload, "udp") {
				m["offered_bps"], m["lost_percent"], m["jitter_ms"] = 1500e6, 20+float64(trial), 0.01
			} else {
				m["retransmits"] = 100 * float64(trial)
			}
			smp := results.Sample{Cell: c, Trial: trial, Metrics: m}
			if strings.HasPrefix(c.Workload, "tcp") {
				smp.Series = []map[string][]float64{{"bitrate_bps": {9e8, 8e8, 9e8}, "snd_cwnd_bytes": {1e5, 2e5, 1.5e5}}}
			}
			samples = append(samples, smp)
		}
	}
	m := analysis.Build(s, samples)
	figs := impairmentFigures(s, m.Rows)
	// udp: bitrate, jitter, lost; tcp: bitrate, retransmits.
	if len(figs) != 5 {
		t.Errorf("%d impairment figures, want 5", len(figs))
	}
	for _, f := range figs {
		if f.SVG == "" || !strings.Contains(string(f.SVG), "loss-low") {
			t.Errorf("%s: no SVG or no impairment on the axis", f.Title)
		}
	}
	series := seriesFigures(s, samples)
	if len(series) != 2 {
		t.Errorf("%d per-second figures, want 2 (throughput, cwnd of tcp@1G)", len(series))
	} else if series[0].Title != "TCP throughput per second (tcp@1G)" {
		t.Errorf("first per-second figure is %q", series[0].Title)
	}
	for _, f := range series {
		if !strings.Contains(string(f.SVG), "flannel-udp / loss-low") {
			t.Errorf("%s: no line for flannel-udp / loss-low", f.Title)
		}
	}
	vt := verdictTable(m)
	if len(vt.Rows) != 4 || len(vt.Head) != 2+len(s.Spec.Impairments) {
		t.Errorf("verdict table %dx%d, want 4 rows and %d columns", len(vt.Rows), len(vt.Head), 2+len(s.Spec.Impairments))
	}
	if !strings.Contains(strings.Join(vt.Rows[0], " "), "(paper ") {
		t.Errorf("no paper verdict beside ours: %v", vt.Rows[0])
	}
	bt := boundTable(m)
	if len(bt.Rows) != 2*len(s.Spec.Impairments) {
		t.Errorf("%d bound rows, want one per datapath and impairment", len(bt.Rows))
	}
	for _, r := range bt.Rows {
		if r[0] == "flannel-vxlan" && r[8] != "924.6" || r[0] == "flannel-udp" && r[8] != "938.0" || r[7] != "as offered" {
			t.Errorf("bound row %v", r)
		}
	}
}
