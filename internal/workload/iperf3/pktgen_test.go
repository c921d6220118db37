package iperf3

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/pktgen"
)

// A pair's streams are summed as iperf3 sums -P: offered is the rate
// times the streams, sent each stream's pace over its own run, received
// over the window they were sending together (the second started 250 ms
// after the first and ran 100 ms longer), and the jitter is the
// receiver's.
func TestPktgenPairMetrics(t *testing.T) {
	start := 500 * time.Second
	sent := []pktgen.Sent{
		{Packets: 1000, Elapsed: time.Second, Started: start, Stopped: start + time.Second},
		{Packets: 900, Elapsed: 1100 * time.Millisecond, Started: start + 250*time.Millisecond, Stopped: start + 1350*time.Millisecond},
	}
	timed := pktgen.Received{Timed: 1500, Streams: 2, Jitter: 250 * time.Microsecond, OutOfOrder: 3}
	m, err := pktgenPairMetrics(timed, sent, 1500, 1000, 8e6)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{
		MetricOffered: 16e6, MetricSent: 8e6 + 900*8000/1.1, results.MetricBitrate: 12e6 / 1.35, MetricPackets: 1900, MetricLost: 400,
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

// pinnedPod is a pod of a node pinned to CPUs, as the local engine's.
type pinnedPod struct {
	fakePod
	cpus cpuset.Set
}

func (p *pinnedPod) CPUs() cpuset.Set { return p.cpus }

// pktgen's generator and receiver run where iperf3's client and server
// would: on the pinned CPU list, else on the pod's node's CPUs, else
// anywhere.
func TestRunsOn(t *testing.T) {
	node := &pinnedPod{cpus: cpuset.Set{2, 3}}
	for _, c := range []struct {
		pod  engine.Pod
		pin  string
		want cpuset.Set
	}{
		{node, "1", cpuset.Set{1}},
		{node, "", cpuset.Set{2, 3}},
		{&fakePod{}, "", nil},
		{&fakePod{}, "0,2-3", cpuset.Set{0, 2, 3}},
	} {
		got, err := runsOn(c.pod, c.pin)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("pin %q on %T: %v (%v), want %v", c.pin, c.pod, got, err, c.want)
		}
	}
	if _, err := runsOn(node, "x"); err == nil {
		t.Error("pin x accepted")
	}
}

// The generator runs in the client pod on the client's pin and the
// receiver in the server pod on the server's, or, with reverse (iperf3
// -R), the other way round: each end keeps its own pin.
func TestEnds(t *testing.T) {
	cli, srv := &fakePod{name: "cli"}, &fakePod{name: "srv"}
	pr := workload.Pair{Server: srv, Client: cli}
	for _, c := range []struct {
		reverse bool
		want    string
	}{
		{false, "cli on 0 > srv on 1"},
		{true, "srv on 1 > cli on 0"},
	} {
		from, to, pinFrom, pinTo := ends(pr, plan{reverse: c.reverse, pinClient: "0", pinServer: "1"})
		got := fmt.Sprintf("%s on %s > %s on %s", from.Name(), pinFrom, to.Name(), pinTo)
		if got != c.want {
			t.Errorf("reverse %v: %s, want %s", c.reverse, got, c.want)
		}
	}
}
