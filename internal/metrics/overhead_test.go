package metrics_test

import (
	"context"
	"math"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestSamplingOverhead is the measurement behind docs/workloads.md's
// overhead note, not a pass/fail timing test: it alternates iperf3 trials
// with and without cnibench's per-second CPU sampler running and logs the
// mean bitrates and their difference. Run it on purpose:
//
//	CNIBENCH_OVERHEAD=10 go test -run SamplingOverhead -v ./internal/metrics/
//
// (the value is the number of trial pairs).
func TestSamplingOverhead(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CNIBENCH_OVERHEAD"))
	if n <= 0 {
		t.Skip("skipped: set CNIBENCH_OVERHEAD=N (trial pairs) to measure the sampler's overhead")
	}
	if err := iperf3.New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	run := func(sample bool) float64 {
		tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "iperf3", Protocol: "tcp", Length: "128K"},
			Duration: 6 * time.Second, Warmup: time.Second, BasePort: 5201}
		// Both sides get the same Started callback; only the sampler
		// differs.
		var s *metrics.Sampler
		if sample {
			s = metrics.NewSampler("", time.Second)
		}
		tr.Started = func(time.Time) {
			time.Sleep(time.Second)
			if s != nil {
				if err := s.Start(); err != nil {
					t.Error(err)
				}
			}
		}
		res, err := iperf3.New().Run(context.Background(), tr)
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			if _, err := s.Stop(); err != nil {
				t.Error(err)
			}
		}
		return res.Metrics[results.MetricBitrate]
	}
	var with, without []float64
	for i := range n {
		// Alternate the order so drift does not favour one side.
		if i%2 == 0 {
			with, without = append(with, run(true)), append(without, run(false))
		} else {
			without, with = append(without, run(false)), append(with, run(true))
		}
	}
	ratios := make([]float64, n)
	for i := range n {
		ratios[i] = with[i] / without[i]
	}
	sort.Float64s(ratios)
	t.Logf("per pair with/without: median %.4f, quartiles %.4f..%.4f", ratios[n/2], ratios[n/4], ratios[(3*n)/4])
	mw, sw := meanSD(with)
	mo, so := meanSD(without)
	t.Logf("with sampling:    mean %.3f Gbit/s sd %.3f (n=%d)", mw/1e9, sw/1e9, n)
	t.Logf("without sampling: mean %.3f Gbit/s sd %.3f (n=%d)", mo/1e9, so/1e9, n)
	t.Logf("difference: %+.2f%%", 100*(mw-mo)/mo)
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		v /= float64(len(xs) - 1)
	}
	return m, math.Sqrt(v)
}
