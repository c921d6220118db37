package ab

import (
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/workload"
)

// maxBadShare is the share of ab's completed requests that may be bad
// (Report.Bad) in a trial that counts: beyond it the server or the path
// broke during the test (nginx gone, every connection refused at 55,000
// a second), and ab's rate would be of failures.
const maxBadShare = 0.01

// checkGood fails a pair whose bad requests exceed maxBadShare.
func checkGood(r *Report) error {
	if r == nil || !(r.Bad() > maxBadShare*r.Complete) {
		return nil
	}
	return fmt.Errorf("ab: %v of %v completed requests were no good response (%v failed, %v non-2xx, %v write errors): "+
		"more than %.0f%%, so its rate would count failures", r.Bad(), r.Complete, r.Failed, r.Non2xx, r.WriteErrors, 100*maxBadShare)
}

// badWarning is the trial's warning when some requests were bad, within
// maxBadShare: the rate and the timing table count them.
const badWarning = "ab counted some failed or non-2xx requests as complete (errors_count in samples.jsonl): requests_per_s and the latencies include them"

// result turns the pairs' reports into the trial's metrics; target is
// the study's request count per client (0: time-bounded).
func result(reps []*Report, target int) workload.Result {
	res := workload.Result{Metrics: map[string]float64{}}
	if slices.ContainsFunc(reps, func(r *Report) bool { return r.Bad() > 0 }) {
		res.Warnings = []string{badWarning}
	}
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
