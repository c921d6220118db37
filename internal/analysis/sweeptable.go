package analysis

import (
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

// SweepSummary is a swept workload at one datapath as the summary shows
// it: one point per swept value (per tuning and replica count when the
// study varies those too) and the headline metrics the sweep has. The
// numbers are the model's rows of each point's cell.
type SweepSummary struct {
	Datapath string `json:"datapath"`
	// Workload is the study workload that expands into the variants.
	Workload string `json:"workload"`
	Param    string `json:"param"`
	// Tuning and Replicas are where the figures show the sweep.
	Tuning   string `json:"tuning"`
	Replicas int    `json:"replicas"`
	// Impairment is the sweep's impairment ("" none).
	Impairment string `json:"impairment,omitempty"`
	// PerTuning: the points include tunings or replica counts besides
	// Tuning and Replicas.
	PerTuning bool         `json:"per_tuning"`
	Metrics   []string     `json:"metrics"`
	Points    []SweepPoint `json:"points"`
}

// SweepPoint is one swept value in one cell.
type SweepPoint struct {
	Value string       `json:"value"`
	Cell  results.Cell `json:"cell"`
}

// SweepSummaryOf describes sw's points. When the study also varies
// tunings or replica counts, each value gets a point per tuning and count,
// so nothing per-variant sections would show is hidden; normally there is
// one of each.
func SweepSummaryOf(s *study.Study, sw Sweep, rows []Row) SweepSummary {
	var base study.Workload
	for _, w := range s.Spec.Workloads {
		if w.Name == sw.Base {
			base = w
		}
	}
	v := SweepSummary{Datapath: sw.Datapath, Workload: sw.Base, Param: SweptParam(base), Tuning: sw.Tuning, Replicas: sw.Replicas, Impairment: sw.Impairment}
	names := map[string]bool{}
	for _, vr := range sw.Variants {
		names[vr.Name] = true
	}
	var mine []Row
	for _, r := range rows {
		if r.Datapath == sw.Datapath && r.Impairment == sw.Impairment && names[r.Workload] && r.CPU < 0 {
			mine = append(mine, r)
		}
	}
	for _, m := range HeadlineMetrics {
		for _, r := range mine {
			if r.Metric == m && r.N > 0 {
				v.Metrics = append(v.Metrics, m)
				break
			}
		}
	}
	if len(v.Metrics) == 0 {
		return v
	}
	dims := DimsOf(mine)
	v.PerTuning = len(dims.Tunings) > 1 || len(dims.Replicas) > 1
	for _, vr := range sw.Variants {
		for _, tn := range dims.Tunings {
			for _, reps := range dims.Replicas {
				c := results.Cell{Datapath: sw.Datapath, Tuning: tn, Workload: vr.Name, Replicas: reps, Impairment: sw.Impairment}
				v.Points = append(v.Points, SweepPoint{Value: SweptValue(base, vr), Cell: c})
			}
		}
	}
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
	case len(w.MSSes) > 0:
		return "TCP MSS"
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
	case len(base.MSSes) > 0:
		return strconv.Itoa(v.MSS) + " B"
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

// SweptAxis is the numeric x axis a sweep's figures place its variants
// on: the swept parameter with its unit, and each variant's value in it.
// Placed by value, not evenly by position, a figure shows how a metric
// grows with the parameter (seed 001: throughput "nearly proportional to
// the flow numbers" over 1 to 16 flows). ok is false for a workload that
// does not sweep a number.
func SweptAxis(base study.Workload) (title string, x func(v study.Workload) (float64, bool), ok bool) {
	num := func(f func(v study.Workload) int) func(study.Workload) (float64, bool) {
		return func(v study.Workload) (float64, bool) { return float64(f(v)), true }
	}
	switch {
	case len(base.Lengths) > 0:
		return "write length (KiB)", func(v study.Workload) (float64, bool) {
			n, ok := study.ParseBytes(v.Length)
			return float64(n) / 1024, ok
		}, true
	case len(base.Rates) > 0:
		return "rate per stream (Mbit/s)", func(v study.Workload) (float64, bool) {
			r, ok := study.ParseRate(v.Rate)
			return r / 1e6, ok
		}, true
	case len(base.Parallels) > 0:
		return "parallel streams", num(func(v study.Workload) int { return v.Parallel }), true
	case len(base.MessageSizes) > 0:
		return "message size (B)", num(func(v study.Workload) int { return v.MessageSize }), true
	case len(base.MSSes) > 0:
		return "TCP MSS (B)", num(func(v study.Workload) int { return v.MSS }), true
	case len(base.Concurrency) > 1:
		return "concurrency", num(study.Workload.Concurrent), true
	case base.Background != nil && len(base.Background.Connections) > 1:
		return "background connections", num(study.Workload.BackgroundConnections), true
	}
	return "", nil, false
}
