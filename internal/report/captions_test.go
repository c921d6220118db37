package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// A figure's caption says how many trials its points rest on and how
// its whiskers were computed; the normalized figure says its whiskers
// are the plain 95% interval, and in a run that decided cells at its
// looks that the decisions rest on the look's interval instead.
func TestFigureCaptionsNameNAndInterval(t *testing.T) {
	s, samples := pinStudy(t)
	m := analysis.Build(s, samples)
	figs, _ := datapathFigures(s, m)
	if len(figs) == 0 {
		t.Fatal("no datapath figure")
	}
	for _, f := range figs {
		if !strings.Contains(f.Caption, "(n = 3 trials each), whiskers are 95% Student t intervals of the mean") {
			t.Errorf("datapath figure %q: caption %q", f.Title, f.Caption)
		}
	}
	norm := func(m analysis.Model) string {
		for _, g := range analysis.Groups(m.Rows) {
			return normalizedFigure(g, results.MetricBitrate, newNumbers(m)).Caption
		}
		return ""
	}
	if got := norm(m); !strings.Contains(got, "(n = 3 trials each); whiskers are the plain 95% interval over all of each cell's trials (Fieller's") ||
		strings.Contains(got, "at that look") {
		t.Errorf("normalized figure of a fixed run: %q", got)
	}
	ratio, low, high := 1.0, 0.98, 1.02
	m.Stops = []results.Stop{{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: "busy", Workload: "far", Replicas: 1}, Metric: results.MetricBitrate,
		Status: "target", N: 3, Decision: "equal", Versus: "baseline", Look: 1, Confidence: 0.9875, Ratio: &ratio, Low: &low, High: &high}}
	if got := norm(m); !strings.Contains(got, "the decision rests on the interval at that look, at its stricter confidence") {
		t.Errorf("normalized figure of an adaptive run: %q", got)
	}
	if got := figureN([]analysis.Row{{SummaryRow: results.SummaryRow{Metric: "x", N: 3}}, {SummaryRow: results.SummaryRow{Metric: "x", N: 10}}}, "x"); got != "n = 3 to 10 trials each" {
		t.Errorf("figureN over 3 and 10 trials: %q", got)
	}
}
