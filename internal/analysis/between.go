package analysis

import (
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// Between compares cell a with cell b on one metric as the report
// compares a tuning with the baseline or a datapath with the first, for
// any two cells of one run (advise --run's overlay against native
// routing): paired by round where both ran in the same rounds (cells of
// one datapath at one replica count always; two datapaths at one
// replica count where SharedRounds says so; a round a resume cut is no
// pair, resumed.go), else Fieller's unpaired interval: two replica
// counts are separate blocks, run one after another in a study of one
// datapath, whose trial k share no round. Decided with the study's
// margin in the metric's direction. Against names b's datapath, or its
// tuning when the datapaths are the same. nil when either cell has no
// value of metric.
func Between(s *study.Study, samples []results.Sample, a, b results.Cell, metric string) *Pair {
	x, ref := map[int]float64{}, map[int]float64{}
	for _, smp := range samples {
		v, ok := smp.Metrics[metric]
		switch {
		case !ok || !Finite(v):
		case smp.Cell == a:
			x[smp.Trial] = v
		case smp.Cell == b:
			ref[smp.Trial] = v
		}
	}
	if len(x) == 0 || len(ref) == 0 {
		return nil
	}
	dir := stats.DirectionOf(metric)
	if d, ok := comparedMetric(metric, decidedMetrics(s)); ok {
		dir = d
	}
	apart := partsOf(samples).apart(a, b)
	against := b.Datapath
	if a.Datapath == b.Datapath {
		against = b.Tuning
	}
	switch {
	case a.Replicas != b.Replicas:
		return unpairedOf(against, notPairedReplicas, x, ref, MarginOf(s), dir)
	case a.Datapath == b.Datapath || SharedRounds(samples)[a.Replicas]:
		return pairApart(against, x, ref, apart, MarginOf(s), dir)
	}
	return UnpairedOf(against, x, ref, MarginOf(s), dir)
}

// notPairedReplicas is the paired reason of Between's cells at two
// replica counts.
const notPairedReplicas = "not paired: two replica counts are separate blocks, whose trial k need not share a round"

// Share is one cell's CPU cost per packet in one kernel component beside
// its total: means over the cell's trials with a total, in the unit the
// run sampled (cpp.UnitNs or cpp.UnitCycles).
type Share struct {
	Cell        results.Cell
	Unit        string
	Part, Total float64
	N           int
}

// Fraction is the component's part of the total.
func (s Share) Fraction() float64 { return s.Part / s.Total }

// ComponentShares returns, for each cell that measured the CPU cost per
// packet, the component's share of it, in the order the cells first
// appear in samples. A trial with a total but no value for the component
// counts it as zero: the collector writes only the components its
// samples hit (cpp.Breakdown.PerPacket), so a missing one cost nothing.
func ComponentShares(samples []results.Sample, component string) []Share {
	var out []Share
	at := map[results.Cell]int{}
	for _, smp := range samples {
		for _, u := range cpp.Units {
			tot, ok := smp.Metrics[cpp.TotalMetric(u)]
			if !ok || !Finite(tot) {
				continue
			}
			part := smp.Metrics[cpp.MetricName(component, u)]
			if !Finite(part) {
				continue
			}
			i, seen := at[smp.Cell]
			if !seen {
				i = len(out)
				at[smp.Cell] = i
				out = append(out, Share{Cell: smp.Cell, Unit: u})
			}
			if out[i].Unit != u {
				continue // a cell is sampled in one unit; never mix them
			}
			out[i].Part += part
			out[i].Total += tot
			out[i].N++
			break
		}
	}
	for i := range out {
		out[i].Part /= float64(out[i].N)
		out[i].Total /= float64(out[i].N)
	}
	return out
}
