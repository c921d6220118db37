package iperf3

import (
	"math"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload/pktgen"
)

// A pair's streams are summed as iperf3 sums -P: offered is the rate
// times the streams, sent each stream's over its own run, received over
// the longest run, and the jitter is the receiver's.
func TestPktgenPairMetrics(t *testing.T) {
	sent := []pktgen.Sent{{Packets: 1000, Elapsed: time.Second}, {Packets: 900, Elapsed: 900 * time.Millisecond}}
	timed := pktgen.Received{Timed: 1500, Streams: 2, Jitter: 250 * time.Microsecond, OutOfOrder: 3}
	m, err := pktgenPairMetrics(timed, sent, 1500, 1000, 8e6)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{
		MetricOffered: 16e6, MetricSent: 16e6, results.MetricBitrate: 12e6, MetricPackets: 1900, MetricLost: 400,
		MetricJitter: 0.25, MetricOutOfOrder: 3,
	} {
		if math.Abs(m[k]-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if _, err := pktgenPairMetrics(timed, []pktgen.Sent{{Packets: 1}}, 1, 1000, 8e6); err == nil {
		t.Error("a generator that never ran accepted")
	}
	if m, _ := pktgenPairMetrics(pktgen.Received{Timed: 1}, sent, 1500, 1000, 8e6); m != nil {
		if _, ok := m[MetricJitter]; ok {
			t.Error("jitter without a stream of two timed packets")
		}
	}
}
