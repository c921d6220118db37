package iperf3

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/pktgen"
)

// The sender pktgen (sender or ceilingSearch.sender): the search's
// probes and the measured trials offer load with the kernel's packet
// generator in each client pod (package pktgen; in each server pod with
// reverse, as iperf3 -R) instead of iperf3's sender, and what arrived is
// counted at the other pod's receiving device: loss is sent minus
// received over sent, whatever a reader keeps up with. Where pairs
// receive on one device (host-network pods are the node's namespace),
// its count is theirs together (shareReceived). A receiver on the
// pair's port (pktgen.Listen) there times the packets it reads for
// their jitter. There is no slow start to leave out, so the whole
// duration counts.

// pktgenRun offers rate (UDP payload bit/s per pair) from every client
// pod at once for dur and returns iperf3's metric names for it.
func (d *Driver) pktgenRun(ctx context.Context, t workload.Trial, p plan, rate float64, dur time.Duration, started func(time.Time)) (workload.Result, error) {
	payload, err := workload.PktgenPayload(p.length)
	if err != nil {
		return workload.Result{}, fmt.Errorf("pktgen sender: %w", err)
	}
	// Each pair sends p.parallel streams, each at rate (iperf3's -b is
	// per stream) from a source port of its own: flows[i*streams+j].
	streams := max(p.parallel, 1)
	flows := make([]pktgen.Flow, 0, len(t.Pairs)*streams)
	rx := make([]netns.Iface, len(t.Pairs))
	rxCPUs := make([]cpuset.Set, len(t.Pairs))
	for i, pr := range t.Pairs {
		f, err := pairFlow(pr, p, t.BasePort+i, payload, rate, dur)
		if err != nil {
			return workload.Result{}, fmt.Errorf("pktgen sender, pair %d: %w", i, err)
		}
		for j := range streams {
			f.SrcPort = streamPort(t.BasePort+i, j)
			flows = append(flows, f.Flow)
		}
		rx[i], rxCPUs[i] = f.rx, f.rxCPUs
	}
	rcv := make([]*pktgen.Receiver, len(rx))
	defer func() {
		for _, r := range rcv {
			if r != nil {
				_, _ = r.Stop() // again after a success: a no-op
			}
		}
	}()
	for i, dev := range rx {
		r, err := pktgen.Listen(dev.Netns, t.BasePort+i, rxCPUs[i])
		if err != nil {
			return workload.Result{}, fmt.Errorf("pktgen sender, pair %d: %w", i, err)
		}
		rcv[i] = r
	}
	devs, devOf := distinctIfaces(rx)
	before, err := rxPackets(devs)
	if err != nil {
		return workload.Result{}, err
	}
	runCtx, cancel := context.WithTimeout(ctx, dur+d.slack())
	defer cancel()
	sent, err := pktgen.Run(runCtx, flows, started)
	if err != nil {
		return workload.Result{}, err
	}
	after, err := settledRx(devs)
	if err != nil {
		return workload.Result{}, err
	}
	arrived := make([]uint64, len(devs))
	for k := range devs {
		arrived[k] = max(after[k], before[k]) - before[k]
	}
	timed := make([]pktgen.Received, len(t.Pairs))
	for i := range t.Pairs {
		if timed[i], err = rcv[i].Stop(); err != nil {
			return workload.Result{}, fmt.Errorf("pktgen sender, pair %d: %w", i, err)
		}
	}
	per, shared, err := pktgenPerPair(timed, sent, streams, devOf, arrived, payload, rate)
	if err != nil {
		return workload.Result{}, err
	}
	res := workload.Result{Metrics: trialMetrics(per), PerReplica: per}
	res.Warnings = pktgenWarnings(per, res.Metrics, rate*float64(streams), shared)
	return res, nil
}

// pktgenWarnings are a trial's warnings: a pair behind its schedule
// (asked is each pair's rate), packets its device refused (in the
// trial's metrics), pairs sharing one receiving device.
func pktgenWarnings(per []map[string]float64, trial map[string]float64, asked float64, shared bool) []string {
	var out []string
	if fellBehind(per, MetricSent, asked) {
		out = append(out, pktgenBehind)
	}
	if trial[MetricRefused] > 0 {
		out = append(out, pktgenRefused)
	}
	if shared {
		out = append(out, pktgenShared)
	}
	return out
}

// pktgenPerPair is each pair's metrics (pktgenPairMetrics): pair i's
// receiver timed timed[i], its streams sent sent[i*streams:(i+1)*streams],
// and its packets arrived on device devOf[i], which counted
// arrived[devOf[i]] (shared says that pairs shared one: shareReceived,
// in proportion to the packets each pair's device took: those it
// refused never reached the receiving one).
func pktgenPerPair(timed []pktgen.Received, sent []pktgen.Sent, streams int, devOf []int, arrived []uint64, payload int, rate float64) ([]map[string]float64, bool, error) {
	out := make([]uint64, len(timed))
	for i := range timed {
		for _, s := range sent[i*streams : (i+1)*streams] {
			out[i] += s.Packets
		}
	}
	got, shared := shareReceived(devOf, arrived, out)
	per := make([]map[string]float64, len(timed))
	for i := range timed {
		var err error
		if per[i], err = pktgenPairMetrics(timed[i], sent[i*streams:(i+1)*streams], got[i], payload, rate); err != nil {
			return nil, false, fmt.Errorf("pktgen sender, pair %d: %w", i, err)
		}
	}
	return per, shared, nil
}

// pktgenShared says that some pairs' loss is their receiving device's,
// shared out (shareReceived).
const pktgenShared = "pktgen sender: pairs received on one device (a host-network datapath runs every server pod in the server node's namespace, " +
	"so each pair's packets arrive on the node's device), whose counter cannot tell their packets apart: " +
	"their loss is counted once over those pairs together (sent summed against received), and each pair's lost_count and bitrate are its share " +
	"of what arrived, in proportion to what it sent; the trial's loss and bitrate sum are exact, the pairs' spread in loss is not measured"

// distinctIfaces is each receiving device once, and for each pair the
// index of its own among them. Pairs of a host-network datapath share the
// server node's namespace and address, so every pair's route ends at one
// device: read once per pair, its counter gave each pair every pair's
// packets.
func distinctIfaces(rx []netns.Iface) (devs []netns.Iface, devOf []int) {
	devOf = make([]int, len(rx))
	for i, ifc := range rx {
		k := slices.Index(devs, ifc)
		if k < 0 {
			k = len(devs)
			devs = append(devs, ifc)
		}
		devOf[i] = k
	}
	return devs, devOf
}

// shareReceived is what each pair received: its device's packets
// (arrived, by device; devOf gives each pair's device), or, where pairs
// share a device (shared), that device's packets divided among them in
// proportion to the packets each sent (out), in whole packets that sum
// to the device's (largest remainders). A device's counter cannot say
// whose packets it counted, so the pairs on it get their loss rate
// together: summed received over summed sent, the one figure that is
// measured.
func shareReceived(devOf []int, arrived, out []uint64) (got []uint64, shared bool) {
	got = make([]uint64, len(devOf))
	for k, n := range arrived {
		var on []int
		var sum uint64
		for i, d := range devOf {
			if d == k {
				on = append(on, i)
				sum += out[i]
			}
		}
		if len(on) > 1 {
			shared = true
		}
		apportion(got, on, n, out, sum)
	}
	return got, shared
}

// apportion divides n among pairs on, in proportion to their weights w
// (summing to sum; evenly when it is 0), into got: each its floor, the
// rest one each to the largest remainders (ties to the earlier pair).
func apportion(got []uint64, on []int, n uint64, w []uint64, sum uint64) {
	if len(on) == 0 {
		return
	}
	share := func(i int) (whole, rem float64) {
		x := float64(n) / float64(len(on))
		if sum > 0 {
			x = float64(n) * float64(w[i]) / float64(sum)
		}
		return math.Floor(x), x - math.Floor(x)
	}
	left := n
	for _, i := range on {
		whole, _ := share(i)
		got[i] = min(uint64(whole), left)
		left -= got[i]
	}
	byRem := slices.Clone(on)
	slices.SortStableFunc(byRem, func(a, b int) int {
		_, ra := share(a)
		_, rb := share(b)
		return cmp.Compare(rb, ra)
	})
	for j := 0; left > 0; j = (j + 1) % len(byRem) {
		got[byRem[j]]++
		left--
	}
}

// pktgenPairMetrics is iperf3's names for a pair's trial: what its receiver
// timed, and its streams together (each asked for rate) against what its
// receiving device got of them (got: shareReceived). Sent is each stream's pace over its own run,
// summed, as a generator that keeps its schedule sends its rate however
// late its thread woke to the start: it is what says a stream fell
// behind. Received is over the window the streams were sending together
// (pktgen.Window), as iperf3 sums its -P streams over one interval: over
// the longest single run, streams whose threads started apart showed
// more received than a shaper lets through.
//
// A packet its device refused (pktgen's errors: pktgen_xmit counts a
// driver's NET_XMIT_DROP or _CN there, not in pkts-sofar, and sends on
// until pkts-sofar reaches its count) was offered and lost, at the
// path's first hop: a veth refuses when its peer's backlog is full. It
// took its slot of the schedule (the generator waits for the next slot
// after it as after a sent one), so it counts in the pace too; counted
// in neither, such a loss read as ~0% lost and a sender behind its
// schedule, and a ceiling search blamed the sender for it.
func pktgenPairMetrics(timed pktgen.Received, sent []pktgen.Sent, got uint64, payload int, rate float64) (map[string]float64, error) {
	m := receivedMetrics(timed)
	var passed, refused, sentBps float64
	for _, s := range sent {
		if s.Elapsed <= 0 {
			return nil, fmt.Errorf("a generator ran for %v", s.Elapsed)
		}
		if s.Packets+s.Errors == 0 {
			// Not a sender that does not say: one that sent nothing,
			// whose zero bitrate would pass for a measurement.
			return nil, fmt.Errorf("a generator sent nothing in %v (pkts-sofar 0, errors 0)", s.Elapsed)
		}
		passed += float64(s.Packets)
		refused += float64(s.Errors)
		sentBps += float64(s.Packets+s.Errors) * float64(payload) * 8 / s.Elapsed.Seconds()
	}
	m[results.MetricBitrate] = min(float64(got), passed) * float64(payload) * 8 / pktgen.Window(sent).Seconds()
	m[MetricOffered] = rate * float64(len(sent))
	m[MetricSent] = sentBps
	m[MetricPackets] = passed + refused
	m[MetricLost] = max(passed-float64(got), 0) + refused
	m[MetricRefused] = refused
	return m, nil
}

// streamPort is the source port of a pair's stream j: the pair's port
// (5201 + pair) for its first, as before parallel streams, then ports
// from IANA's dynamic range as an iperf3 client's streams would have.
// They need be distinct only within the pair: its receiver tells its
// streams apart by them.
func streamPort(port, j int) int {
	if j == 0 {
		return port
	}
	return 49152 + j
}

// receivedMetrics is iperf3's names for what a pair's receiver timed:
// jitter needs a stream with two timed packets.
func receivedMetrics(r pktgen.Received) map[string]float64 {
	m := map[string]float64{MetricOutOfOrder: float64(r.OutOfOrder)}
	if r.Streams > 0 {
		m[MetricJitter] = r.Jitter.Seconds() * 1e3
	}
	return m
}

// sentFlow is a pair's flow, with the device that receives it and the
// CPUs its receiver reads on.
type sentFlow struct {
	pktgen.Flow
	rx     netns.Iface
	rxCPUs cpuset.Set
}

// pairFlow is pair pr's flow: from its client to its server, or back
// with reverse (iperf3 -R: the server sends), each end on the CPUs its
// iperf3 would run on.
func pairFlow(pr workload.Pair, p plan, port, payload int, rate float64, dur time.Duration) (sentFlow, error) {
	from, to, pinFrom, pinTo := ends(pr, p)
	var out sentFlow
	var err error
	if out.Flow, out.rx, err = pktgenFlow(from, to, port, payload, rate, dur); err != nil {
		return out, err
	}
	if out.CPUs, err = runsOn(from, pinFrom); err != nil {
		return out, err
	}
	out.rxCPUs, err = runsOn(to, pinTo)
	return out, err
}

// ends are the pod that sends and the one that receives, each with the
// pin its iperf3 would have: the client's and the server's, or with
// reverse the server's and the client's.
func ends(pr workload.Pair, p plan) (from, to engine.Pod, pinFrom, pinTo string) {
	if p.reverse {
		return pr.Server, pr.Client, p.pinServer, p.pinClient
	}
	return pr.Client, pr.Server, p.pinClient, p.pinServer
}

// pktgenFlow is the flow from pod from toward pod to (the client to the
// server, or back with reverse) and to's device that receives it. The
// flow addresses to as its clients would: a Fronted server at its
// front. Pods must be namespaces of this machine (the local engine's).
func pktgenFlow(from, to engine.Pod, port, payload int, rate float64, dur time.Duration) (pktgen.Flow, netns.Iface, error) {
	src, ok1 := from.(interface{ Netns() string })
	dst, ok2 := to.(interface{ Netns() string })
	if !ok1 || !ok2 {
		return pktgen.Flow{}, netns.Iface{}, errors.New("the pods are not network namespaces of this machine: pktgen runs on the local engine only")
	}
	addr := engine.AddrIP(to)
	dev, mac, err := pktgen.NextHopMAC(src.Netns(), addr)
	if err != nil {
		return pktgen.Flow{}, netns.Iface{}, err
	}
	rdev, err := pktgen.RouteDev(dst.Netns(), from.IP())
	if err != nil {
		return pktgen.Flow{}, netns.Iface{}, err
	}
	f := pktgen.Flow{Netns: src.Netns(), Dev: dev, Src: from.IP(), Dst: addr, DstMAC: mac,
		SrcPort: port, DstPort: port, Payload: payload, Rate: rate, Duration: dur}
	return f, netns.Iface{Netns: dst.Netns(), Name: rdev}, nil
}

// runsOn is where iperf3 would run in pod: on the pinned CPU list, else
// on the CPUs of the pod's node (a local pod says them; pinned nodes
// have some), else anywhere (nil).
func runsOn(pod engine.Pod, pin string) (cpuset.Set, error) {
	if pin != "" {
		return cpuset.Parse(pin)
	}
	if p, ok := pod.(interface{ CPUs() cpuset.Set }); ok {
		return p.CPUs(), nil
	}
	return nil, nil
}

// rxPackets reads the receive counters of the devices.
func rxPackets(ifs []netns.Iface) ([]uint64, error) {
	out := make([]uint64, len(ifs))
	for i, ifc := range ifs {
		c, err := ifstats.Read(ifc)
		if err != nil {
			return nil, fmt.Errorf("pktgen sender: counters of %s: %w", ifc.Name, err)
		}
		out[i] = c.RxPackets
	}
	return out, nil
}

// settledRx reads the receive counters once they stop growing: packets
// still queued on the path when the generators stop (a shaper's queue
// holds milliseconds of traffic) are not lost. It waits at most a
// second.
func settledRx(ifs []netns.Iface) ([]uint64, error) {
	prev, err := rxPackets(ifs)
	for deadline := time.Now().Add(time.Second); err == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		var cur []uint64
		if cur, err = rxPackets(ifs); err == nil && slices.Equal(cur, prev) {
			return cur, nil
		}
		prev = cur
	}
	return prev, err
}
