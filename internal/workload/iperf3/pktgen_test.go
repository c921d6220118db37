package iperf3

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
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

// On a host-network datapath every server pod is the server node's
// namespace, so four pairs' packets arrive on one device: 1000 sent by
// each, 2800 arrived in all. Read once per pair, the device gave each
// pair all 2800 (no loss, bitrate = sent, and a loss ceiling that passed
// every rate); counted once and shared, the trial lost 30% and so did
// each pair. A pair on a device of its own keeps its own count.
func TestPktgenSharedReceiver(t *testing.T) {
	dev := netns.Iface{Netns: "cnb-srv", Name: "eth1"}
	devs, devOf := distinctIfaces([]netns.Iface{dev, dev, dev, dev})
	if len(devs) != 1 || !slices.Equal(devOf, []int{0, 0, 0, 0}) {
		t.Fatalf("devices %v, pairs on %v; want one device", devs, devOf)
	}
	start := 10 * time.Second
	one := pktgen.Sent{Packets: 1000, Elapsed: time.Second, Started: start, Stopped: start + time.Second}
	sent := []pktgen.Sent{one, one, one, one}
	timed := make([]pktgen.Received, 4)
	per, shared, err := pktgenPerPair(timed, sent, 1, devOf, []uint64{2800}, 1000, 8e6)
	if err != nil {
		t.Fatal(err)
	}
	if !shared {
		t.Error("pairs on one device not said to share it")
	}
	for i, m := range per {
		if m[MetricLost] != 300 || m[MetricPackets] != 1000 || m[results.MetricBitrate] != 700*8000 {
			t.Errorf("pair %d: lost %v of %v at %v bit/s, want 300 of 1000 at 5.6e6", i, m[MetricLost], m[MetricPackets], m[results.MetricBitrate])
		}
	}
	if m := trialMetrics(per); m[MetricLostPct] != 30 || m[results.MetricBitrateSum] != 2800*8000 {
		t.Errorf("trial lost %v%% at %v bit/s in all, want 30%% at 2.24e7", m[MetricLostPct], m[results.MetricBitrateSum])
	}

	// Two pairs on their own devices, two sharing a third.
	other := netns.Iface{Netns: "cnb-srv-1", Name: "eth0"}
	_, devOf = distinctIfaces([]netns.Iface{other, dev, dev, {Netns: "cnb-srv-2", Name: "eth0"}})
	if !slices.Equal(devOf, []int{0, 1, 1, 2}) {
		t.Fatalf("pairs on %v, want [0 1 1 2]", devOf)
	}
	got, shared := shareReceived(devOf, []uint64{990, 1500, 1000}, []uint64{1000, 2000, 1000, 1000})
	if !shared || !slices.Equal(got, []uint64{990, 1000, 500, 1000}) {
		t.Errorf("received %v (shared %v), want [990 1000 500 1000] shared", got, shared)
	}
	if got, shared := shareReceived([]int{0, 1}, []uint64{5, 7}, []uint64{9, 9}); shared || !slices.Equal(got, []uint64{5, 7}) {
		t.Errorf("devices of their own: received %v (shared %v), want [5 7] unshared", got, shared)
	}
}

// A shared device's count is divided in whole packets that add up to it:
// the remainder goes to the largest fractions, and with nothing sent the
// count is split evenly.
func TestApportion(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		w    []uint64
		want []uint64
	}{
		{10, []uint64{1, 1, 1}, []uint64{4, 3, 3}},
		{10, []uint64{1, 2, 2}, []uint64{2, 4, 4}},
		{7, []uint64{0, 0}, []uint64{4, 3}},
		{3, []uint64{100, 1}, []uint64{3, 0}},
		{0, []uint64{5, 5}, []uint64{0, 0}},
	} {
		var sum uint64
		on := make([]int, len(c.w))
		for i, x := range c.w {
			sum += x
			on[i] = i
		}
		got := make([]uint64, len(c.w))
		apportion(got, on, c.n, c.w, sum)
		if !slices.Equal(got, c.want) {
			t.Errorf("%d by %v: %v, want %v", c.n, c.w, got, c.want)
		}
	}
}

// A generator whose device refused 30% of its packets (pktgen's errors:
// veth_xmit's NET_XMIT_DROP when the peer's backlog is full) kept its
// schedule and sent on until its count of sent packets, stopped 1% + 100
// ms past its second: 777 sent and 333 refused in 1.11 s, 777 arrived.
// The refused packets were offered and lost at the first hop: 30% lost,
// sent at the rate asked, the trial warns that the device refused
// packets and not that the generator fell behind, and a ceiling probe
// like it fails on its loss instead of passing as sender-bound at what
// passed. Counting only pkts-sofar read 0% lost and a sender behind.
func TestPktgenRefusedCountAsLost(t *testing.T) {
	start := 5 * time.Second
	run := 1110 * time.Millisecond
	sent := []pktgen.Sent{{Packets: 777, Errors: 333, Elapsed: run, Started: start, Stopped: start + run}}
	per, shared, err := pktgenPerPair(make([]pktgen.Received, 1), sent, 1, []int{0}, []uint64{777}, 1000, 8e6)
	if err != nil {
		t.Fatal(err)
	}
	m := trialMetrics(per)
	for k, want := range map[string]float64{
		MetricPackets: 1110, MetricLost: 333, MetricLostPct: 30, MetricRefused: 333,
		MetricSent: 8e6, results.MetricBitrate: 777 * 8000 / 1.11,
	} {
		if math.Abs(m[k]-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	warns := pktgenWarnings(per, m, 8e6, shared)
	if !slices.Equal(warns, []string{pktgenRefused}) {
		t.Errorf("warnings %q, want only the refusal's", warns)
	}
	o, err := probeOutcome(m, MetricSent, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := (ceiling.Step{Rate: 8e6, LossPct: o.LossPct, Sent: o.Sent}); st.Behind() || o.LossPct < 3 {
		t.Errorf("probe %+v: behind %v, loss %v%%; want a failing probe that kept its rate", o, st.Behind(), o.LossPct)
	}
}

// A generator that sent nothing, neither passed nor refused, is not a
// sender that does not say: its trial fails rather than report a bitrate
// of 0 with no loss and no warning.
func TestPktgenSentNothingFails(t *testing.T) {
	sent := []pktgen.Sent{{Packets: 1000, Elapsed: time.Second}, {Elapsed: 1110 * time.Millisecond}}
	if m, err := pktgenPairMetrics(pktgen.Received{}, sent, 1000, 1000, 8e6); err == nil {
		t.Errorf("a stream that sent nothing accepted: %v", m)
	}
	if _, err := pktgenPairMetrics(pktgen.Received{}, []pktgen.Sent{{Errors: 10, Elapsed: time.Second}}, 0, 1000, 8e6); err != nil {
		t.Errorf("a stream whose every packet was refused: %v, want 100%% lost", err)
	}
}
