package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// TestNormCellCounts: the normalized cell names what its decision rests
// on. Without the baseline's first trial, rfs at 1 replica has 2 complete
// pairs (too few for a paired interval) and is decided on Fieller's
// interval of its 3 trials against the baseline's 2; the report looks up
// the baseline's count rather than repeating the row's, and shows that
// interval once.
func TestNormCellCounts(t *testing.T) {
	var smp []results.Sample
	for _, x := range quickSamples() {
		if x.Cell.Replicas == 1 && x.Cell.Tuning == "baseline" && x.Trial == 1 {
			continue
		}
		smp = append(smp, x)
	}
	m := analysis.Build(quickStudy(t), smp)
	n := newNumbers(m)
	r, ok := n.row(results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}, results.MetricBitrate, -1)
	if !ok || r.VsBaseline == nil {
		t.Fatal("no rfs row compared with the baseline")
	}
	// The decision rests on the Fieller interval the cell starts with: the
	// cell prints it once, with its method and count.
	if got := n.normCell(r); !strings.Contains(got, "] fieller, n=3 vs baseline's 2; p=") || strings.Count(got, "[") != 1 ||
		!strings.Contains(got, "; better") {
		t.Errorf("cell %q, want its one interval, decided on 3 trials against 2: better", got)
	}
	// Decided by the controller at its look: that decision follows the
	// plain interval, which is still printed once, without a verdict.
	ratio, lo, hi := 1.09, 1.02, 1.16
	m.Stops = []results.Stop{{Cell: r.Cell, Metric: results.MetricBitrate, Status: "target", N: 3, Valid: 3,
		Decision: "better", Look: 3, Ratio: &ratio, Low: &lo, High: &hi, Method: "fieller", Confidence: 0.9875}}
	got := newNumbers(m).normCell(r)
	if !strings.Contains(got, "] fieller, n=3 vs baseline's 2; p=0.001; better at the look after 3 trials: 1.090 [1.020, 1.160] fieller (98.75%)") ||
		strings.Count(got, "[") != 2 || strings.Contains(got, "all trials") {
		t.Errorf("cell %q, want the plain interval once, then the decision at the look", got)
	}
}

func TestTrialsText(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int
		want   string
	}{
		{0, 0, "n per cell as measured"},
		{20, 20, "20 per cell planned"},
		{0, 20, "20 per cell planned"},
		{3, 10, "3 to 10 per cell, adaptive"},
	} {
		if got := trialsText(tc.lo, tc.hi); !strings.HasPrefix(got, tc.want) {
			t.Errorf("trialsText(%d, %d) = %q, want %q...", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestNormCellSequentialDecision: where the controller decided a cell at
// its looks (stops.json), the normalized cell shows that decision with
// its stricter interval, and the plain 95% comparison of all trials as
// numbers without a verdict of its own; a cell without a stop keeps the
// plain decision.
func TestNormCellSequentialDecision(t *testing.T) {
	m := analysis.Build(quickStudy(t), quickSamples())
	rfs := results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}
	ratio, lo, hi := 0.93, 0.81, 1.07
	m.Stops = []results.Stop{{Cell: rfs, Metric: results.MetricBitrate, Status: "budget", N: 3, Valid: 3,
		Decision: "undecided", Look: 3, Ratio: &ratio, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875}}
	n := newNumbers(m)
	r, _ := n.row(rfs, results.MetricBitrate, -1)
	got := n.normCell(r)
	if !strings.Contains(got, "; undecided at the look after 3 trials: 0.930 [0.810, 1.070] paired-t (98.75%); all trials at 95%: ") {
		t.Errorf("rfs cell %q, want the controller's decision and the plain interval after it", got)
	}
	if strings.Contains(got, "judged on") || strings.HasSuffix(strings.TrimSpace(got), "better") || strings.Contains(got, "pairs: ") {
		t.Errorf("rfs cell %q carries the plain comparison's own verdict", got)
	}
	// Stopped before the first look (the budget ran out at 2 trials): the
	// controller's reason, and only the plain interval, which the runner
	// also writes as the stop's (at 95%, Look 0).
	m.Stops[0] = results.Stop{Cell: rfs, Metric: results.MetricBitrate, Status: "budget", N: 2, Valid: 2,
		Decision: "undecided", DecisionReason: "no decision before 3 trials",
		Ratio: &ratio, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.95}
	if got := newNumbers(m).normCell(r); !strings.Contains(got, "; undecided (no decision before 3 trials); all trials at 95%: ") ||
		strings.Contains(got, "at the look") {
		t.Errorf("rfs cell before the first look %q", got)
	}
	two, _ := n.row(results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 2}, results.MetricBitrate, -1)
	if got := n.normCell(two); !strings.Contains(got, "judged on ") {
		t.Errorf("rfs at 2 replicas %q: without a stop, want the plain decision", got)
	}
}

// TestNText: a cell with another count of trials than planned says its
// n, except a cell of one trial, whose "(n=1, no CI)" says it already.
func TestNText(t *testing.T) {
	n := &numbers{Model: analysis.Model{TrialsPlanned: 3}}
	for _, tc := range []struct {
		n    int
		want string
	}{{0, ""}, {1, ""}, {2, " (n=2)"}, {3, ""}, {4, " (n=4)"}} {
		if got := n.nText(analysis.Row{SummaryRow: results.SummaryRow{N: tc.n}}); got != tc.want {
			t.Errorf("n=%d: %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := n.absCell(analysis.Row{SummaryRow: results.SummaryRow{Metric: "pod_setup_ms", N: 1, Mean: 2.1}}); strings.Count(got, "n=1") != 1 {
		t.Errorf("one trial: %q says its n other than once", got)
	}
}
