package seen

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// overlay: in a run of datapaths that encapsulate (a tunnel device) and
// datapaths that do not, each encapsulating datapath's inter-node cells
// against the same cells of the study's first datapath without a tunnel,
// on the metric each cell was judged on (its stop), decided as the
// report decides (analysis.Between), each decided cell named with its
// interval's level and n (cells of fewer than minTrials trials on either
// side are left out). Intra-node cells are left out: their packets never
// reach the tunnel.
func overlay(run *results.Run, s *study.Study) found {
	if s == nil {
		return found{}
	}
	overlays, tunnel, native := encapsulating(s)
	if native == "" || len(overlays) == 0 {
		return found{}
	}
	var all tally // every overlay's decisions: the sighting's lean
	inter := map[string]bool{}
	for _, v := range s.Variants() {
		inter[v.Name] = !v.IntraNode()
	}
	var parts []string
	var shown []results.Cell
	for _, o := range overlays {
		var tl tally
		var named []string
		for _, st := range run.Stops {
			c := st.Cell
			if c.Datapath != o || st.Metric == "" || !inter[c.Workload] {
				continue
			}
			ref := c
			ref.Datapath = native
			p := analysis.Between(s, run.Samples, c, ref, st.Metric)
			na, nb := valuesOf(run, c, st.Metric), valuesOf(run, ref, st.Metric)
			if p == nil || min(na, nb) < minTrials {
				continue
			}
			v := p.Decision.Verdict
			tl.add(string(v))
			all.add(string(v))
			shown = append(shown, c)
			if v != stats.Undecided && len(named) < mostNamed {
				n := fmt.Sprint(na)
				if nb != na {
					n = fmt.Sprintf("%d and %d of %s", na, nb, native)
				}
				// Between's intervals are at stats.Confidence.
				named = append(named, decided(strings.TrimPrefix(report.CellName(c), c.Datapath+" "), st.Metric, p.Chosen.Ratio,
					&p.Chosen.Low, &p.Chosen.High, stats.Confidence, n))
			}
		}
		if tl.empty() {
			continue
		}
		p := fmt.Sprintf("%s (tunnel %s) against %s: %s of its inter-node cells", o, tunnel[o], native, tl)
		if len(named) > 0 {
			p += " (" + strings.Join(named, "; ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return found{}
	}
	// An overlay worse than the datapath without one is a reason for the
	// rules that cut its cost; equal or better is against them (an
	// overlay that costs nothing here is no reason to route natively).
	return found{text: strings.Join(parts, "; "), cells: shown, lean: leanOf(all, string(stats.Worse), string(stats.Better))}
}

// valuesOf counts a cell's trials with a value of metric.
func valuesOf(run *results.Run, c results.Cell, metric string) int {
	n := 0
	for _, smp := range run.Samples {
		if _, ok := smp.Metrics[metric]; ok && smp.Cell == c {
			n++
		}
	}
	return n
}

// encapsulating sorts the study's datapaths by what their catalog
// datapath does between nodes: those with a tunnel device (with it), in
// study order, and the first one that carries pod traffic without one
// (routed or on the underlay's L2; host networking has no pod network
// and is neither).
func encapsulating(s *study.Study) (overlays []string, tunnel map[string]string, native string) {
	tunnel = map[string]string{}
	for _, d := range s.Spec.Datapaths {
		dp, err := catalog.Lookup(d.Type)
		if err != nil || datapath.IsHostNetwork(dp) {
			continue
		}
		if t := dp.Tunnel(); t != "" {
			overlays = append(overlays, d.Name)
			tunnel[d.Name] = t
		} else if native == "" {
			native = d.Name
		}
	}
	return overlays, tunnel, native
}
