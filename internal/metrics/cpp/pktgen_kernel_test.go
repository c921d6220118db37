package cpp

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/workload/pktgen"
)

// TestPktgenSamplesCount samples a pktgen flow across a veth pair, as
// the pktgen sender offers a UDP workload's load: the generator threads
// (kpktgend_N, which also run the receive softirq veth queues) and the
// receiver's thread must both have counted samples, the generator's own
// functions under pktgen and the receive path's under ip_stack (veth's
// own functions are too small to be sampled every time, under emulation
// most of all), and, where the
// generator kept its schedule, its pacing spin (12.5 kpps: 80 us apart,
// under the 100 us below which pktgen spins on the clock) must be idle,
// not cost. Before, both threads' samples were left out and only
// ksoftirqd's remained. (The full-kernel VM runs it.)
func TestPktgenSamplesCount(t *testing.T) {
	kerneltest.RequireRoot(t)
	if err := probe.Pktgen(); err != nil {
		if os.Getenv("CNIBENCH_IN_VM") != "" {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
	if err := Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	ctx := context.Background()
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	a, b := kerneltest.Netns(t, j, id, "a"), kerneltest.Netns(t, j, id, "b")
	ipA, ipB := net.IPv4(192, 0, 2, 1), net.IPv4(192, 0, 2, 2)
	kerneltest.VethPair(t, a, b, ipA, ipB)
	dev, mac, err := pktgen.NextHopMAC(a, ipB)
	if err != nil {
		t.Fatal(err)
	}
	f := pktgen.Flow{Netns: a, Dev: dev, Src: ipA, Dst: ipB, DstMAC: mac, SrcPort: 5201, DstPort: 5201,
		Payload: 1000, Rate: 12500 * 8 * 1000, Duration: 6 * time.Second}
	rcv, err := pktgen.Listen(b, 5201, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Stop()
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{Map: m, Event: ChooseEvent(ctx, RunPerf), Ifaces: []netns.Iface{{Netns: b, Name: "b0"}}}
	defer rec.Close()
	sent := record(t, rec, f)
	prof, err := rec.report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rec.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u := res.Event.Unit
	t.Logf("sent %+v; total %.0f %s/packet over %v packets; idle %.3g excluded %.3g %s",
		sent, res.Metrics[TotalMetric(u)], u, res.Metrics[MetricPackets], res.Breakdown.Idle, res.Breakdown.Excluded, u)
	sum := 0.0
	for _, n := range m.Names() {
		sum += res.Metrics[MetricName(n, u)]
		t.Logf("  %-11s %8.1f %s/packet", n, res.Metrics[MetricName(n, u)], u)
	}
	if tot := res.Metrics[TotalMetric(u)]; math.Abs(sum-tot) > 1e-9*tot {
		t.Errorf("components add to %v, total %v", sum, tot)
	}
	for _, n := range []string{"pktgen", "ip_stack"} {
		if !(res.Breakdown.ByComponent[n] > 0) {
			t.Errorf("component %s has no counted samples", n)
		}
	}
	gen, recv := threadSamples(t, m, prof)
	if gen[""] == 0 || recv[""] == 0 {
		t.Errorf("samples: generator threads %v, receiver %v: want both", gen[""], recv[""])
	}
	kept := sent.Packets == f.Count() && sent.Elapsed < f.Duration+f.Duration/10
	if kept && gen[Idle] == 0 {
		t.Errorf("the generator kept its schedule (%v), yet none of its samples are pacing (idle)", sent.Elapsed)
	} else if !kept {
		t.Logf("the generator fell behind (%d of %d packets in %v): it did not spin, pacing not checked", sent.Packets, f.Count(), sent.Elapsed)
	}
}

// record runs flow f and samples 3.5 s of it with rec, from the moment
// the generator sends; it returns what the generator sent.
func record(t *testing.T, rec *Recorder, f pktgen.Flow) pktgen.Sent {
	t.Helper()
	ctx := context.Background()
	started := make(chan error, 1)
	type ran struct {
		sent []pktgen.Sent
		err  error
	}
	done := make(chan ran, 1)
	go func() {
		sent, err := pktgen.Run(ctx, []pktgen.Flow{f}, func(time.Time) { started <- rec.Start(ctx) })
		done <- ran{sent, err}
	}()
	select {
	case err := <-started:
		if err != nil {
			<-done
			t.Fatal(err)
		}
	case r := <-done:
		t.Fatalf("pktgen ended before it started: %v", r.err)
	}
	time.Sleep(3500 * time.Millisecond)
	stopErr := rec.Stop(ctx)
	r := <-done
	if r.err != nil || len(r.sent) != 1 {
		t.Fatalf("pktgen: %v (%d reports)", r.err, len(r.sent))
	}
	if stopErr != nil {
		t.Fatal(stopErr)
	}
	return r.sent[0]
}

// threadSamples sums the samples of the generator threads and of the
// receiver by component ("" is all of them), logs their busiest
// symbols, and checks that every one of those threads counts.
func threadSamples(t *testing.T, m *Map, p *Profile) (gen, recv map[string]float64) {
	t.Helper()
	gen, recv = map[string]float64{}, map[string]float64{}
	type hit struct {
		line string
		n    float64
	}
	var top []hit
	for k, n := range p.Samples {
		comm, sym := k[0], k[1]
		by := gen
		switch {
		case strings.HasPrefix(comm, "kpktgend_"):
		case comm == pktgen.ReceiverComm:
			by = recv
		default:
			continue
		}
		if !m.Counts(comm) {
			t.Errorf("samples of %s are left out", comm)
		}
		c := m.ClassifyIn(comm, sym)
		by[c] += n
		by[""] += n
		top = append(top, hit{fmt.Sprintf("%8.0f %-12s %-32s %s", n, comm, sym, c), n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n })
	lines := make([]string, 0, 20)
	for _, h := range top[:min(len(top), 20)] {
		lines = append(lines, h.line)
	}
	t.Logf("generator threads by component %v; receiver %v; busiest:\n%s", gen, recv, strings.Join(lines, "\n"))
	return gen, recv
}
