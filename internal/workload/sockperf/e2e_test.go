package sockperf

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
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
			cli := &startTimed{Pod: pairs[0].Client}
			tr := workload.Trial{Pairs: []workload.Pair{{Server: pairs[0].Server, Client: cli}},
				Spec:     study.Workload{Tool: "sockperf", Protocol: proto, MessageSize: 64},
				Duration: 3 * time.Second, Warmup: time.Second, BasePort: 11111}
			var t0 time.Time
			tr.Started = func(t time.Time) { t0 = t }
			res, err := New().Run(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			t.Logf("%v", m)
			// Started is when the clients' tests began: two seconds after
			// the client started (sockperf's sleep before its test), and
			// about the duration before the trial ends (the clients'
			// summaries and the servers' stop after it, which a loaded
			// machine or the emulated VM can stretch by seconds).
			if t0.IsZero() {
				t.Error("Started not called")
			} else if after := t0.Sub(cli.started()); after < 1500*time.Millisecond {
				t.Errorf("Started %v after the client started, want its test's start two seconds in", after)
			} else if took := time.Since(t0); took < tr.Duration-500*time.Millisecond || took > tr.Duration+5*time.Second {
				t.Errorf("the trial ended %v after Started, want its duration %v (+5 s at most)", took, tr.Duration)
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

// startTimed is a client pod that records when it last started a
// program, watched as the pod it wraps (engine.StartWatched).
type startTimed struct {
	engine.Pod
	mu sync.Mutex
	at time.Time
}

func (p *startTimed) StartWatched(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	p.mu.Lock()
	p.at = time.Now()
	p.mu.Unlock()
	proc, _, err := engine.StartWatched(ctx, p.Pod, argv, line)
	return proc, err
}

func (p *startTimed) started() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}
