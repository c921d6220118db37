package iperf3

import (
	"context"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestUDPAcrossNodes offers 200 Mbit/s of UDP between two emulated nodes
// (flannel-vxlan) and checks the numbers are consistent: the receiver
// cannot get more than was offered (1% slack for interval edges), and the
// loss % is exactly lost/total.
func TestUDPAcrossNodes(t *testing.T) {
	if err := New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	tr := workload.Trial{
		Pairs:    pairs,
		Spec:     study.Workload{Tool: "iperf3", Protocol: "udp", Rate: "200M", Length: "1400"},
		Duration: 4 * time.Second, Warmup: time.Second, BasePort: 5201,
	}
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("metrics %v", m)
	if got := m[MetricOffered]; got != 200e6 {
		t.Errorf("offered %v", got)
	}
	if br := m[results.MetricBitrate]; !(br > 0) || br > 200e6*1.01 {
		t.Errorf("received %v bit/s with 200M offered", br)
	}
	if m[MetricPackets] <= 0 {
		t.Fatalf("no datagrams counted: %v", m)
	}
	if want := 100 * m[MetricLost] / m[MetricPackets]; m[MetricLostPct] != want {
		t.Errorf("loss %v%%, lost/total = %v%%", m[MetricLostPct], want)
	}
	if j := m[MetricJitter]; !(j >= 0 && j < 100) {
		t.Errorf("jitter %v ms", j)
	}
	// 1400 B datagrams at 200 Mbit/s for ~3 s: ~53k datagrams.
	if p := m[MetricPackets]; p < 20e3 || p > 80e3 {
		t.Errorf("%v datagrams, want about 53k", p)
	}
}

// TestTCPParallelReverseAcrossNodes runs -P 2 -R and checks cwnd and RTT
// series come back from the sending server.
func TestTCPParallelReverseAcrossNodes(t *testing.T) {
	if err := New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	tr := workload.Trial{
		Pairs:    pairs,
		Spec:     study.Workload{Tool: "iperf3", Protocol: "tcp", Parallel: 2, Reverse: true},
		Duration: 3 * time.Second, Warmup: time.Second, BasePort: 5201,
	}
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("metrics %v", m)
	if !(m[results.MetricBitrate] > 0) || !(m[MetricCwnd] > 0) || !(m[MetricRTT] > 0) {
		t.Errorf("metrics %v", m)
	}
	if len(res.Series) != 1 || len(res.Series[0][MetricRTT]) == 0 {
		t.Errorf("series %v", res.Series)
	}
}

// TestBackgroundAcrossNodes runs 5 connections capped at 10 Mbit/s over
// two background pairs beside one measured pair.
func TestBackgroundAcrossNodes(t *testing.T) {
	if err := New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 3)
	tr := workload.Trial{
		Pairs: pairs[:1], Background: pairs[1:],
		Spec: study.Workload{Tool: "iperf3", Protocol: "tcp",
			Background: &study.Background{Connections: []int{5}, Pairs: 2, Rate: "10M"}},
		Duration: 3 * time.Second, Warmup: time.Second, BasePort: 5201,
	}
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("metrics %v", m)
	if m[MetricBackgroundConns] != 5 {
		t.Errorf("background connections %v", m[MetricBackgroundConns])
	}
	// 5 x 10 Mbit/s capped: the background sends about 50 Mbit/s.
	if bg := m[MetricBackgroundBitrate]; bg < 30e6 || bg > 55e6 {
		t.Errorf("background bitrate %v, want about 50M", bg)
	}
	if !(m[results.MetricBitrate] > 100e6) {
		t.Errorf("measured bitrate %v", m[results.MetricBitrate])
	}
}

func TestStreamsPerPair(t *testing.T) {
	got := streamsPerPair(5, 3)
	if got[0] != 2 || got[1] != 2 || got[2] != 1 {
		t.Errorf("%v", got)
	}
}
