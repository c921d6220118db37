package prove

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

func TestVerdict(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cell := func(dec string, ratio float64) advise.ProofCell {
		return advise.ProofCell{Decision: dec, Ratio: f(ratio)}
	}
	for _, c := range []struct {
		cells []advise.ProofCell
		want  string
	}{
		{[]advise.ProofCell{cell("better", 1.08), cell("equal", 1.01)}, advise.Accepted},
		{[]advise.ProofCell{cell("better", 1.015)}, advise.Rejected}, // significant, not beyond the 2% margin
		{[]advise.ProofCell{cell("better", 1.2), cell("worse", 0.9)}, advise.Rejected},
		{[]advise.ProofCell{cell("equal", 1.0), cell("undecided", 1.1)}, advise.Rejected},
		{[]advise.ProofCell{cell("undecided", 1.1), cell("undecided", 0.9)}, advise.Undecided},
		{nil, advise.Undecided},
	} {
		if got := verdict(c.cells, 0.02, stats.HigherIsBetter); got != c.want {
			t.Errorf("%+v: %s, want %s", c.cells, got, c.want)
		}
	}
	// Latency: better is a ratio below 1, beyond the margin below
	// 1/1.02.
	for _, c := range []struct {
		cells []advise.ProofCell
		want  string
	}{
		{[]advise.ProofCell{cell("better", 0.80)}, advise.Accepted},
		{[]advise.ProofCell{cell("better", 0.99)}, advise.Rejected},
		{[]advise.ProofCell{cell("worse", 1.2)}, advise.Rejected},
	} {
		if got := verdict(c.cells, 0.02, stats.LowerIsBetter); got != c.want {
			t.Errorf("latency %+v: %s, want %s", c.cells, got, c.want)
		}
	}
	p := &advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Margin: 0.02,
		Cells: []advise.ProofCell{{Workload: "tcp", Replicas: 4, N: 6, Ratio: f(0.9), Low: f(0.85), High: f(0.95), Method: "paired-t", Confidence: 0.9875, Decision: "worse"}}}
	if got := measured(p); !strings.Contains(got, "rfs/baseline") || !strings.Contains(got, "0.900 [0.850, 0.950] paired-t 98.75%, n=6, worse") {
		t.Errorf("measured %q", got)
	}
}

// The built-in A/B study is valid as it is, adaptive, and needs two
// tunings or datapaths from the rule.
func TestDefaultStudy(t *testing.T) {
	if !strings.Contains(string(DefaultStudy), "trials: {min: 3, max: 10}") {
		t.Error("the default A/B is not adaptive")
	}
	s := &study.Study{Spec: study.Spec{Tunings: []study.Tuning{{Name: "baseline"}}, Datapaths: []study.Datapath{{Name: "x"}}}}
	for _, dp := range []bool{false, true} {
		if _, _, err := sides(s, dp); err == nil {
			t.Errorf("one tuning and one datapath (datapath A/B %v): want an error, there is no A/B", dp)
		}
	}
	s.Spec.Datapaths = append(s.Spec.Datapaths, study.Datapath{Name: "y"})
	if a, b, err := sides(s, true); err != nil || a != "x" || b != "y" {
		t.Errorf("sides %s %s %v", a, b, err)
	}
	// A datapath rule over a study with several tunings (--study rps-rfs)
	// compares the datapaths, not the tunings.
	s.Spec.Tunings = append(s.Spec.Tunings, study.Tuning{Name: "rps"})
	if a, b, err := sides(s, true); err != nil || a != "x" || b != "y" {
		t.Errorf("datapath A/B with two tunings: sides %s %s %v, want x y", a, b, err)
	}
	if a, b, err := sides(s, false); err != nil || a != "baseline" || b != "rps" {
		t.Errorf("tuning A/B: sides %s %s %v", a, b, err)
	}
}
