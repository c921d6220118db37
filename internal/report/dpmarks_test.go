package report

import (
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// TestDatapathTableMarks: a datapath table's cell whose decision rests on
// widely spread trials, or on trials counted though disturbed (its own
// or the first datapath's), carries the glance's marks, and the caption
// says what they mean; a run without such trials has neither.
func TestDatapathTableMarks(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	host := map[int]float64{1: 10e9, 2: 10.1e9, 3: 9.9e9}
	slow := map[int]float64{1: 8e9, 2: 8.1e9, 3: 7.9e9}
	rows := []analysis.Row{
		dpRow("host", "tcp", results.MetricBitrate, 10e9),
		dpRow("vxlan", "tcp", results.MetricBitrate, 8e9),
		dpRow("geneve", "tcp", results.MetricBitrate, 8e9),
	}
	for _, i := range []int{1, 2} {
		rows[i].VsFirstDatapath = analysis.UnpairedOf("host", slow, host, 0.02, stats.HigherIsBetter)
	}
	plain := analysis.Model{Rows: rows}
	if got := datapathTables(s, plain)[0].Rows[1][1]; strings.HasSuffix(got, ")") {
		t.Errorf("an unmarked cell %q", got)
	}
	if c := datapathCaption(s, plain); strings.Contains(c, "wide spread") || strings.Contains(c, "\"disturbed\"") {
		t.Errorf("caption with no mark in its tables has their legend: %q", c)
	}

	rows[1].Wide = &analysis.WideSpread{Values: []float64{6e9, 8e9, 10e9}}
	m := analysis.Model{Rows: rows}
	tb := datapathTables(s, m)[0]
	if got := tb.Rows[1][1]; !strings.HasSuffix(got, "3: worse (wide spread)") {
		t.Errorf("vxlan's wide cell %q, want its decision marked \"wide spread\"", got)
	}
	if got := tb.Rows[2][1]; strings.Contains(got, "wide spread") {
		t.Errorf("geneve's cell %q is not wide", got)
	}
	if c := datapathCaption(s, m); !strings.Contains(c, "\"wide spread\" mark a cell") || !strings.Contains(c, "its decision rests on") ||
		strings.Contains(c, "\"disturbed\"") {
		t.Errorf("caption %q, want the spread legend alone", c)
	}

	// A trial of the first datapath counted though disturbed: every
	// decision against it rests on it.
	m.Marked = []analysis.Marked{{Cell: rows[0].Cell, Trial: 2, Attempt: 2, Counted: true}}
	tb = datapathTables(s, m)[0]
	for i, want := range []string{" (disturbed)", "3: worse (wide spread, disturbed)", "3: worse (disturbed)"} {
		if got := tb.Rows[i][1]; !strings.HasSuffix(got, want) {
			t.Errorf("%s's cell %q, want it to end %q", tb.Rows[i][0], got, want)
		}
	}
	if c := datapathCaption(s, m); !strings.Contains(c, strings.TrimSpace(disturbedLegend)) {
		t.Errorf("caption %q lacks the disturbed legend", c)
	}
	// The page and summary.md show that caption.
	if md := markdownOf(t, s, m); !strings.Contains(md, "\"disturbed\" marks one whose trials") {
		t.Error("summary.md's datapath caption lacks the legend")
	}
}

// TestDatapathCaptionOneTrial: in a run of one trial per cell the
// side-by-side caption says its cells hold the single trial's value, not
// "mean [95% CI] over trials", which it says once a cell has an interval.
func TestDatapathCaptionOneTrial(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rows := []analysis.Row{dpRow("host", "tcp", results.MetricBitrate, 10e9), dpRow("vxlan", "tcp", results.MetricBitrate, 8e9)}
	if c := datapathCaption(s, analysis.Model{Rows: rows}); !strings.Contains(c, "; mean [95% CI] over trials; ") {
		t.Errorf("caption with intervals %q", c)
	}
	for i := range rows {
		rows[i].N, rows[i].CI95Low, rows[i].CI95High = 1, math.NaN(), math.NaN()
	}
	c := datapathCaption(s, analysis.Model{Rows: rows})
	if strings.Contains(c, "95% CI") || !strings.Contains(c, "the value of its single trial") {
		t.Errorf("one-trial caption %q", c)
	}
}
