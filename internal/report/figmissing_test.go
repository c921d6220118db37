package report

import (
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestMissingCellsInFigures: a cell without a value is no bar of 0 nor a
// point a line runs through. A bar chart writes "n/a" in its empty slot
// (the datapath figure also names the cell in its caption), where it
// marks measured values; a sweep's line breaks at a variant without one.
func TestMissingCellsInFigures(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rows := []analysis.Row{
		dpRow("bridge", "udp-inter", results.MetricBitrate, 1e9),
		dpRow("calico-vxlan", "udp-inter", results.MetricBitrate, 0.9e9),
		dpRow("calico-vxlan", "udp-inter", "lost_percent", 3),
		dpRow("bridge", "tcp-inter", "lost_percent", 1),
	}
	figs, _ := datapathFigures(s, analysis.Model{Rows: rows})
	var loss, rate figure
	for _, f := range figs {
		switch f.Title {
		case "lost_percent by datapath":
			loss = f
		case "bitrate by datapath":
			rate = f
		}
	}
	if !strings.Contains(string(loss.SVG), ">n/a<") {
		t.Errorf("loss figure draws no n/a at bridge's udp-inter and calico-vxlan's tcp-inter")
	}
	if !strings.Contains(loss.Caption, "No value for bridge × udp-inter, calico-vxlan × tcp-inter") {
		t.Errorf("loss caption %q, want the missing cells named", loss.Caption)
	}
	if strings.Contains(string(rate.SVG), ">n/a<") || strings.Contains(rate.Caption, "No value") {
		t.Errorf("bitrate figure has every cell, yet marks one missing")
	}
	// An empty slot is left empty where that is expected (Missing unset,
	// the baseline's own slot among ratios to it).
	b := &groupedBars{Groups: 2, Fill: 0.8, Series: []barSeries{{Mean: []float64{1, math.NaN()}, Lo: []float64{0.9, math.NaN()}, Hi: []float64{1.1, math.NaN()}}}}
	if svg := barsSVG(t, b); strings.Contains(svg, ">n/a<") {
		t.Error("n/a drawn without Missing")
	}
	b.Missing = missingMark
	if svg := barsSVG(t, b); !strings.Contains(svg, ">n/a<") || !b.anyMissing() {
		t.Error("no n/a in the empty slot")
	}

	// A sweep of 1, 2 and 4 streams whose 2 failed: two segments of one
	// point, no line from 1 to 4.
	sw := analysis.Sweep{Datapath: "bridge", Tuning: "baseline", Replicas: 1, Base: "flows",
		Variants: []study.Workload{{Name: "flows@P1", Parallel: 1}, {Name: "flows@P2", Parallel: 2}, {Name: "flows@P4", Parallel: 4}}}
	idx := analysis.Index([]analysis.Row{
		dpRow("bridge", "flows@P1", results.MetricBitrate, 1e9),
		dpRow("bridge", "flows@P4", results.MetricBitrate, 4e9),
	})
	x := func(v study.Workload) (float64, bool) { return float64(v.Parallel), true }
	cv := xyCI(sweepData{sw: sw, idx: idx}, x, results.MetricBitrate, 1e-9)
	if len(cv.pts) != 2 || len(cv.segs) != 2 || len(cv.segs[0]) != 1 || len(cv.segs[1]) != 1 {
		t.Errorf("points %v, segments %v: want 1 and 4 unjoined", cv.pts, cv.segs)
	}
	idx = analysis.Index(append([]analysis.Row{dpRow("bridge", "flows@P2", results.MetricBitrate, 2e9)},
		dpRow("bridge", "flows@P1", results.MetricBitrate, 1e9), dpRow("bridge", "flows@P4", results.MetricBitrate, 4e9)))
	if cv := xyCI(sweepData{sw: sw, idx: idx}, x, results.MetricBitrate, 1e-9); len(cv.segs) != 1 || len(cv.segs[0]) != 3 {
		t.Errorf("every variant measured: segments %v, want one line through the three", cv.segs)
	}
}

// barsSVG renders bars alone.
func barsSVG(t *testing.T, b *groupedBars) string {
	t.Helper()
	p := newPlot("bars", "x", "y")
	p.Add(b)
	f := render(figure{Title: "bars"}, p, newLegend(), figW, figH)
	if f.SVG == "" {
		t.Fatal(f.Missing)
	}
	return string(f.SVG)
}

// TestStackedFiguresSayN: the stacked CPP and pod set-up figures say how
// many trials their bars' means rest on and that they draw no interval,
// as the figures with whiskers say theirs.
func TestStackedFiguresSayN(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	found := false
	for _, f := range buildWorkloads(s, analysis.Build(s, samples), samples).Figures {
		if strings.HasPrefix(f.Title, "CPU cost per packet") {
			found = true
			if !strings.Contains(f.Caption, "n = 2 trials each") || !strings.Contains(f.Caption, "no interval is drawn") {
				t.Errorf("CPP caption %q, want its n and that no interval is drawn", f.Caption)
			}
		}
	}
	if !found {
		t.Fatal("no CPP figure")
	}
	bar := stackBar{label: "bridge", unit: stepsUnit, values: map[string]float64{"link": 1, "other": 0.5}, total: 1.5,
		totalRow: analysis.Row{SummaryRow: results.SummaryRow{Metric: mPodSetup, CPU: -1, N: 1, Mean: 1.5}}}
	if c := stepsFigure([]stackBar{bar}).Caption; !strings.Contains(c, "single trial (n = 1 trial each: no interval)") {
		t.Errorf("set-up caption %q, want a single trial's values without an interval", c)
	}
}
