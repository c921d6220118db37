package cpp

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestFlannelVXLANBreakdown samples a 4 s TCP transfer between two
// emulated nodes on flannel-vxlan, with the event ChooseEvent picks on
// this machine (cpu-clock where hardware cycles are not countable). Flannel's inter-node path crosses the
// pod veths, the cni0 bridge and the flannel.1 VXLAN device on both
// nodes, so those components must show up; the components must add up to
// the total (tolerance 1e-9 relative: they are sums of the same samples,
// only float rounding differs).
func TestFlannelVXLANBreakdown(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if err := iperf3.New().Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	c, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	srv := c.Server().(*local.Node)
	ev := ChooseEvent(context.Background(), RunPerf)
	t.Logf("event %s: %s", ev.Name, ev.Reason)
	rec := &Recorder{Map: m, Event: ev, Ifaces: []netns.Iface{srv.PodIface(pairs[0].Server)}}
	tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "iperf3", Protocol: "tcp"},
		Duration: 5 * time.Second, Warmup: time.Second, BasePort: 5201}
	startErr := make(chan error, 1)
	tr.Started = func(time.Time) {
		time.Sleep(time.Second)
		startErr <- rec.Start(context.Background())
	}
	done := make(chan error, 1)
	go func() { _, err := iperf3.New().Run(context.Background(), tr); done <- err }()
	if err := <-startErr; err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	err = rec.Stop(context.Background())
	if rerr := <-done; rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := rec.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := res.Breakdown
	u := ev.Unit
	if res.Event.Unit != u {
		t.Fatalf("recorded %s, chose %s", res.Event.Name, ev.Name)
	}
	t.Logf("total %.0f %s/packet over %v packets (%v skbs); idle %.3g excluded %.3g %s",
		res.Metrics[TotalMetric(u)], u, res.Metrics[MetricPackets], res.Metrics[MetricSKBs], b.Idle, b.Excluded, u)
	sum := 0.0
	for _, n := range m.Names() {
		v := res.Metrics[MetricName(n, u)]
		t.Logf("  %-10s %8.1f %s/packet", n, v, u)
		sum += v
	}
	if tot := res.Metrics[TotalMetric(u)]; math.Abs(sum-tot) > 1e-9*tot {
		t.Errorf("components add to %v, total %v", sum, tot)
	}
	for _, n := range []string{"vxlan", "bridge", "veth"} {
		if !(res.Metrics[MetricName(n, u)] > 0) {
			t.Errorf("component %s has no samples", n)
		}
	}
	// The sockets' count of the window's data segments agrees with the
	// device's (its counters count them on this datapath), so it is not
	// the one divided by, and it checks the device's.
	if p, s := res.Metrics[MetricPackets], res.Metrics[MetricSocketSegments]; !(s > 0.9*p && s < 1.1*p) {
		t.Errorf("sockets counted %v data segments, the device %v packets: more than 10%% apart", s, p)
	}
	for _, other := range Units {
		if _, ok := res.Metrics[TotalMetric(other)]; ok && other != u {
			t.Errorf("%s metrics from a %s recording", other, ev.Name)
		}
	}
}
