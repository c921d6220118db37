package analysis

import (
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// HeadlineMetrics are the key numbers of each kind of workload, in the
// order workload tables show them (those a workload has): each workload
// tool's headline metrics as its driver describes them (spec.Tool), tools
// in registry order, then CPU cost per packet, which every tool may carry.
var HeadlineMetrics = append(registry.Headline(), cpp.MetricTotal, cpp.MetricTotalCycles)

// SweptVariants names the variants (NAME@VALUE) of the study's swept
// workloads: cells the report shows in a sweep's table and figures, not
// in sections of their own.
func SweptVariants(s *study.Study) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	for _, w := range s.Spec.Workloads {
		if vs := w.Variants(); len(vs) > 1 {
			for _, v := range vs {
				out[v.Name] = true
			}
		}
	}
	return out
}

// SweepTable is a sweep's compact table (report.html and summary.md):
// one row per swept value with the headline metrics the sweep has, mean
// [95% CI] over trials.
type SweepTable struct {
	Title, Caption string
	Head           []string
	Rows           [][]string
}

// SweepSummary builds sw's table. When the study also varies tunings or
// replica counts, each value gets a row per tuning and count (with those
// columns), so nothing per-variant sections would show is hidden;
// normally there is one of each.
func SweepSummary(s *study.Study, sw Sweep, rows []results.SummaryRow) SweepTable {
	var base study.Workload
	for _, w := range s.Spec.Workloads {
		if w.Name == sw.Base {
			base = w
		}
	}
	param := SweptParam(base)
	v := SweepTable{Title: fmt.Sprintf("%s / %s: %s sweep", sw.Datapath, sw.Base, param)}
	names := map[string]bool{}
	for _, vr := range sw.Variants {
		names[vr.Name] = true
	}
	var mine []results.SummaryRow
	for _, r := range rows {
		if r.Datapath == sw.Datapath && names[r.Workload] && r.CPU < 0 {
			mine = append(mine, r)
		}
	}
	dims := DimsOf(mine)
	idx := Index(mine)
	var shown []string
	for _, m := range HeadlineMetrics {
		for _, r := range mine {
			if r.Metric == m && r.N > 0 {
				shown = append(shown, m)
				break
			}
		}
	}
	if len(shown) == 0 {
		v.Caption = "No samples for any value of this sweep."
		return v
	}
	multi := len(dims.Tunings) > 1 || len(dims.Replicas) > 1
	v.Head = []string{param}
	if multi {
		v.Head = append(v.Head, "tuning", "replicas")
	}
	for _, m := range shown {
		v.Head = append(v.Head, m+" ("+Display(m).Unit+")")
	}
	for _, vr := range sw.Variants {
		for _, tn := range dims.Tunings {
			for _, reps := range dims.Replicas {
				row := []string{SweptValue(base, vr)}
				if multi {
					row = append(row, tn, strconv.Itoa(reps))
				}
				c := results.Cell{Datapath: sw.Datapath, Tuning: tn, Workload: vr.Name, Replicas: reps}
				for _, m := range shown {
					r, ok := idx[Key{Cell: c, Metric: m, CPU: -1}]
					if !ok {
						row = append(row, "missing")
						continue
					}
					row = append(row, Display(m).MeanCI(r))
				}
				v.Rows = append(v.Rows, row)
			}
		}
	}
	where := fmt.Sprintf("at tuning %s and %d replica%s", sw.Tuning, sw.Replicas, plural(sw.Replicas))
	if multi {
		where = "per tuning and replica count"
	}
	v.Caption = fmt.Sprintf("One row per value of %s %s: mean [95%% CI] over trials. "+
		"Each value is its own cell (%s@VALUE) in summary.csv.", param, where, sw.Base)
	return v
}

// SweptParam names what a workload sweeps, as a reader knows it.
func SweptParam(w study.Workload) string {
	switch {
	case len(w.Lengths) > 0:
		return "write length"
	case len(w.Rates) > 0:
		return "rate per stream"
	case len(w.Parallels) > 0:
		return "parallel streams"
	case len(w.MessageSizes) > 0:
		return "message size"
	case len(w.Concurrency) > 1:
		return "concurrency"
	case w.Background != nil && len(w.Background.Connections) > 1:
		return "background connections"
	}
	return "variant"
}

// SweptValue is a variant's swept value without the variant-name prefix
// ("50", not "c50").
func SweptValue(base, v study.Workload) string {
	switch {
	case len(base.Lengths) > 0:
		return v.Length
	case len(base.Rates) > 0:
		return v.Rate
	case len(base.Parallels) > 0:
		return strconv.Itoa(v.Parallel)
	case len(base.MessageSizes) > 0:
		return strconv.Itoa(v.MessageSize) + " B"
	case len(base.Concurrency) > 1:
		return strconv.Itoa(v.Concurrent())
	case base.Background != nil && len(base.Background.Connections) > 1:
		return strconv.Itoa(v.BackgroundConnections())
	}
	if v.Param != "" {
		return v.Param
	}
	return v.Name
}
