package report

import (
	"fmt"
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
			m := map[string]float64{"bitrate": 900e6 + float64(trial)*1e6, "offered_bps": 1500e6}
			if strings.HasPrefix(c.Workload, "udp") {
				m["offered_bps"], m["lost_percent"], m["jitter_ms"] = 1500e6, 20+float64(trial), 0.01
			} else {
				m["retransmits"] = 100 * float64(trial)
			}
			smp := results.Sample{Cell: c, Trial: trial, Metrics: m}
			if strings.HasPrefix(c.Workload, "tcp") {
				smp.Series = []map[string][]float64{{"bitrate_bps": {9e8, 8e8, 9e8}, "sender_bitrate_bps": {9e8, 8e8, 9e8}, "snd_cwnd_bytes": {1e5, 2e5, 1.5e5}}}
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
	if len(series) != 6 {
		t.Errorf("%d per-second figures, want 6 (sender and receiver throughput, cwnd of tcp@1500M on each datapath)", len(series))
	} else if series[0].Title != "TCP sender throughput per second (tcp@1500M) on flannel-vxlan" {
		t.Errorf("first per-second figure is %q", series[0].Title)
	}
	for _, f := range series {
		if !strings.Contains(string(f.SVG), "loss-low") {
			t.Errorf("%s: no line for loss-low", f.Title)
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

// The per-second figures of flannel-backends run at two tunings: one
// figure per datapath and series, at the baseline tuning and smallest
// replica count (the caption says so), one line per impairment, no two
// lines of a figure with the same label or the same colour and dashes.
func TestSeriesFiguresOneLineEach(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel-vxlan", "flannel-udp"}, Tools: registry.Tools()}
	s, err := study.Resolve("flannel-backends", study.Options{Profile: "quick", Set: []string{"tunings=[baseline, rps]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, c := range s.Cells() {
		if strings.HasPrefix(c.Workload, "tcp") {
			samples = append(samples, results.Sample{Cell: c, Trial: 1, Metrics: map[string]float64{"bitrate": 9e8},
				Series: []map[string][]float64{{"bitrate_bps": {9e8, 8e8, 9e8}, "sender_bitrate_bps": {9.5e8, 7e8, 9e8}, "snd_cwnd_bytes": {1e5, 2e5, 1.5e5}}}})
		}
	}
	figs := seriesFigures(s, samples)
	if len(figs) != 6 {
		t.Fatalf("%d per-second figures, want 6 (sender and receiver throughput, congestion window, per datapath)", len(figs))
	}
	for _, f := range figs {
		if !strings.Contains(f.Caption, "one line per impairment, at tuning baseline and 1 replica") {
			t.Errorf("%s: caption %q does not say the restriction", f.Title, f.Caption)
		}
		// Fig 8 is the sender's: the receiver's figure must not claim it.
		fig8 := strings.HasSuffix(f.Caption, "(the paper's Fig 8).")
		if receiver := strings.Contains(f.Title, "receiver throughput"); fig8 == receiver {
			t.Errorf("%s: caption %q", f.Title, f.Caption)
		}
	}
	tuning, reps, dps, byDP := firstTrials(s, samples, "tcp@1500M")
	if tuning != "baseline" || reps != 1 || len(dps) != 2 {
		t.Fatalf("first trials of %s at %d replicas on %v", tuning, reps, dps)
	}
	for _, dp := range dps {
		lines := seriesLines(s, byDP[dp], "bitrate_bps", 1e-6)
		if len(lines) != len(s.Spec.Impairments) {
			t.Errorf("%s: %d lines, want one per impairment (%d)", dp, len(lines), len(s.Spec.Impairments))
		}
		labels, styles := map[string]bool{}, map[string]bool{}
		for _, l := range lines {
			style := fmt.Sprint(l.Color, l.Dashes)
			if labels[l.Label] || styles[style] {
				t.Errorf("%s: line %s repeats a label or a colour and dashes (%s)", dp, l.Label, style)
			}
			labels[l.Label], styles[style] = true, true
		}
	}
	// The full profile's 16 impairments, and more: no two of the first
	// 24 lines share colour and dashes.
	styles := map[string]int{}
	for i := range 24 {
		c, d, _ := lineStyle(i)
		if j, dup := styles[fmt.Sprint(c, d)]; dup {
			t.Errorf("lines %d and %d share colour and dashes", j, i)
		}
		styles[fmt.Sprint(c, d)] = i
	}
}
