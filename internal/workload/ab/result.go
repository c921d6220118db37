package ab

import "github.com/cnibench/cnibench/internal/workload"

// result turns the pairs' reports into the trial's metrics; target is
// the study's request count per client (0: time-bounded).
func result(reps []*Report, target int) workload.Result {
	res := workload.Result{Metrics: map[string]float64{}}
	for _, r := range reps {
		m := map[string]float64{}
		if target > 0 {
			m[MetricTarget] = float64(target)
		}
		for k, v := range map[string]float64{
			MetricRPS: r.RequestsPerSec, MetricTransfer: r.TransferBps, MetricMean: r.MeanMs,
			MetricErrors: r.Errors(), MetricTimeouts: r.Timeouts, MetricRequests: r.Complete,
			MetricBody: r.DocumentBytes, MetricConc: r.Concurrency,
		} {
			// A timed-out run has no transfer rate or mean latency
			// (NaN): left out rather than averaged in as a number.
			if workload.Finite(v) {
				m[k] = v
			}
		}
		// ab prints an all-zero table when (almost) no request finished
		// within -t (e.g. 5 MB bodies at concurrency 500 for a few
		// seconds); that is no distribution, so it is left out.
		if r.Percent[100] > 0 {
			for name, pc := range map[string]int{MetricP50: 50, MetricP90: 90, MetricP99: 99} {
				if v, ok := r.Percent[pc]; ok {
					m[name] = v
				}
			}
			var xs, fs []float64
			for _, pt := range r.CDF() {
				xs, fs = append(xs, pt[0]), append(fs, pt[1])
			}
			res.Series = append(res.Series, map[string][]float64{SeriesCDFMs: xs, SeriesCDFFrac: fs})
		} else {
			res.Series = append(res.Series, nil)
		}
		res.PerReplica = append(res.PerReplica, m)
	}
	// Counters are summed; the rest is the mean over the pairs that have
	// the metric.
	count := map[string]float64{}
	for _, m := range res.PerReplica {
		for k, v := range m {
			res.Metrics[k] += v
			count[k]++
		}
	}
	for k := range res.Metrics {
		if k != MetricErrors && k != MetricTimeouts && k != MetricRequests && k != MetricTarget {
			res.Metrics[k] /= count[k]
		}
	}
	return res
}
