package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// TestBetween: any two cells of a run are compared as the report
// compares its rows: datapaths in shared rounds by round (the drift
// cancels), one after another unpaired (the drift stays noise), two
// tunings of one datapath by round against the tuning; latencies with
// lower better; nothing where a side has no value.
func TestBetween(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	drift := []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15}
	cell := func(dp, tn string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	sample := func(c results.Cell, trial int, at time.Duration, v float64) results.Sample {
		return results.Sample{Cell: c, Trial: trial, Start: t0.Add(at),
			Metrics: map[string]float64{results.MetricBitrate: v, "latency_mean_us": 1e11 / v}}
	}
	vx, rt, rfs := cell("calico-vxlan", "baseline"), cell("calico-routed", "baseline"), cell("calico-vxlan", "rfs")
	var shared, oneAfter []results.Sample
	for i, d := range drift {
		k := i + 1
		shared = append(shared, sample(rt, k, time.Duration(3*i)*time.Minute, 10e9*d),
			sample(vx, k, time.Duration(3*i+1)*time.Minute, 8e9*d), sample(rfs, k, time.Duration(3*i+2)*time.Minute, 8.8e9*d))
		oneAfter = append(oneAfter, sample(rt, k, time.Duration(i)*time.Minute, 10e9*d),
			sample(vx, k, time.Duration(10+i)*time.Minute, 8e9*d))
	}
	s := &study.Study{}
	p := Between(s, shared, vx, rt, results.MetricBitrate)
	if p == nil || p.Against != "calico-routed" || p.Paired.N != 6 || p.Chosen.Method != stats.MethodPairedT ||
		p.Decision.Verdict != stats.Worse || math.Abs(p.Chosen.Ratio-0.8) > 1e-9 {
		t.Fatalf("shared rounds: %+v, want worse by 0.8 on 6 pairs", p)
	}
	if p := Between(s, shared, vx, rt, "latency_mean_us"); p == nil || p.Decision.Verdict != stats.Worse || p.Chosen.Ratio < 1.2 {
		t.Errorf("latency 1/0.8 of the reference's: %+v, want worse (lower is better)", p)
	}
	if p := Between(s, oneAfter, vx, rt, results.MetricBitrate); p == nil || p.Paired.N != 0 || p.Chosen.Method != stats.MethodFieller ||
		p.Chosen.High-p.Chosen.Low < 0.2 {
		t.Errorf("one after another: %+v, want unpaired, the drift in its width", p)
	}
	if p := Between(s, shared, rfs, vx, results.MetricBitrate); p == nil || p.Against != "baseline" || p.Paired.N != 6 ||
		p.Decision.Verdict != stats.Better {
		t.Errorf("rfs against the baseline: %+v, want better on 6 pairs", p)
	}
	if p := Between(s, shared, vx, cell("bridge", "baseline"), results.MetricBitrate); p != nil {
		t.Errorf("a reference cell without values compared: %+v", p)
	}
}

// TestComponentShares: a component's share is its mean over the cell's
// trials with a total (a trial without the component counts zero, as
// the collector writes only what its samples hit), in the unit the cell
// was sampled in; cells without a cost per packet are not listed.
func TestComponentShares(t *testing.T) {
	ns, cyc := cpp.UnitNs, cpp.UnitCycles
	nf := func(u string) string { return cpp.MetricName("netfilter", u) }
	a := results.Cell{Datapath: "calico-wp-ipip", Tuning: "baseline", Workload: "cpp-inter", Replicas: 1}
	b := a
	b.Datapath = "cilium"
	samples := []results.Sample{
		{Cell: a, Trial: 1, Metrics: map[string]float64{cpp.TotalMetric(ns): 1000, nf(ns): 300}},
		{Cell: a, Trial: 2, Metrics: map[string]float64{cpp.TotalMetric(ns): 1000}},
		{Cell: b, Trial: 1, Metrics: map[string]float64{cpp.TotalMetric(cyc): 4000, nf(cyc): 200}},
		{Cell: results.Cell{Datapath: "cilium", Workload: "tcp"}, Trial: 1, Metrics: map[string]float64{results.MetricBitrate: 1}},
	}
	got := ComponentShares(samples, "netfilter")
	if len(got) != 2 {
		t.Fatalf("shares %+v, want two cells", got)
	}
	if g := got[0]; g.Cell != a || g.Unit != ns || g.N != 2 || g.Part != 150 || g.Total != 1000 || g.Fraction() != 0.15 {
		t.Errorf("%+v, want 150 of 1000 ns over 2 trials", g)
	}
	if g := got[1]; g.Cell != b || g.Unit != cyc || g.N != 1 || g.Fraction() != 0.05 {
		t.Errorf("%+v, want 5%% in cycles", g)
	}
}

// Two replica counts of one datapath are separate blocks, run one after
// another: their trial k share no round, and Between compares them
// unpaired, the drift in the interval's width, as it does two datapaths
// run one after another.
func TestBetweenReplicaCountsUnpaired(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	drift := []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15}
	one := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	four := one
	four.Replicas = 4
	var samples []results.Sample
	for b, c := range []results.Cell{one, four} {
		for i, d := range drift {
			samples = append(samples, results.Sample{Cell: c, Trial: i + 1, Start: t0.Add(time.Duration(10*b+i) * time.Minute),
				Metrics: map[string]float64{results.MetricBitrate: 10e9 * float64(c.Replicas) * d}})
		}
	}
	p := Between(&study.Study{}, samples, four, one, results.MetricBitrate)
	if p == nil || p.Against != "baseline" || p.Paired.N != 0 || p.Paired.Reason != notPairedReplicas ||
		p.Chosen.Method != stats.MethodFieller || p.Chosen.High-p.Chosen.Low < 1 {
		t.Errorf("4 replicas against 1: %+v, want unpaired, the drift in its width", p)
	}
}
