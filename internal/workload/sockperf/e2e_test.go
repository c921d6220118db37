package sockperf

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestPingPongAcrossNodes runs TCP and UDP ping-pong between two emulated
// nodes. Tolerance: with one message in flight, transactions/s x mean RTT
// is 1 up to the window edges and the time between a reply and the next
// request (client loop overhead), documented as 5%.
func TestPingPongAcrossNodes(t *testing.T) {
	if err := New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "sockperf", Protocol: proto, MessageSize: 64},
				Duration: 3 * time.Second, Warmup: time.Second, BasePort: 11111}
			var t0 time.Time
			tr.Started = func(t time.Time) { t0 = t }
			res, err := New().Run(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			t.Logf("%v", m)
			// Started is when the clients' tests began, so the trial ends
			// about its duration later (the clients' summaries and the
			// servers' stop after it); at the clients' start it would be
			// two seconds more, sockperf's sleep before its test.
			if t0.IsZero() {
				t.Error("Started not called")
			} else if took := time.Since(t0); took < tr.Duration-500*time.Millisecond || took > tr.Duration+1500*time.Millisecond {
				t.Errorf("the trial ended %v after Started, want its duration %v (+1.5 s at most)", took, tr.Duration)
			}
			if x := m[MetricTPS] * m[MetricMean] / 1e6; math.Abs(x-1) > 0.05 {
				t.Errorf("transactions/s %v x mean RTT %v us = %v, want 1 +- 5%%", m[MetricTPS], m[MetricMean], x)
			}
			if !(m[MetricMin] <= m[MetricP50] && m[MetricP50] <= m[MetricP90] && m[MetricP90] <= m[MetricP99] && m[MetricP99] <= m[MetricP999] && m[MetricP999] <= m[MetricMax]) {
				t.Errorf("percentiles out of order: %v", m)
			}
		})
	}
}
