package iperf3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/wire"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

// shapedPath builds client -- router -- server in throw-away namespaces
// and shapes the router's egress towards the server with tbf at rate
// bit/s. The shaper sits on a forwarding hop, as the local engine's
// link-rate shaper sits on the underlay between nodes: a qdisc on the
// sender's own device would hold the socket's buffers and slow the
// sender down (no loss, whatever the offered rate), which is not a link
// that loses what it cannot carry.
//
//	ip netns add C; ip netns add R; ip netns add S
//	ip -n C link add eth0 type veth peer name rc netns R   (and S/rs)
//	tc -n R qdisc add dev rs root tbf rate RATE burst 16k limit 48k
//
// The queue is kept short on purpose: a probe cannot see an excess the
// bottleneck's queue absorbs for the whole probe (limit x 8 / probe
// seconds bit/s: 192 kbit/s here with 2 s probes, but 640 kbit/s with a
// 160 KB queue, which made a probe pass half a step above the bound). It
// still holds 8 ms of traffic, so a sender descheduled for a few ms on a
// busy machine does not lose its catch-up burst.
func shapedPath(t *testing.T, rate uint64) (client, server nsPod) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating network namespaces needs root")
	}
	if err := New().Check(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if err := probe.Require(probe.Veth, probe.TBF); err != nil {
		t.Skipf("skipping: %v", err)
	}
	b := make([]byte, 4)
	rand.Read(b)
	base := "cnbtest-" + hex.EncodeToString(b)
	client = nsPod{ns: base + "-c", ip: net.IPv4(10, 253, 1, 1)}
	server = nsPod{ns: base + "-s", ip: net.IPv4(10, 253, 2, 1)}
	router := base + "-r"
	for _, ns := range []string{client.ns, server.ns, router} {
		if err := netns.Add(ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := netns.Delete(ns); err != nil {
				t.Error(err)
			}
		})
	}
	hr, err := netns.Handle(router)
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Close()
	for i, e := range []struct {
		pod  nsPod
		peer string
	}{{client, "rc"}, {server, "rs"}} {
		h, err := netns.Handle(e.pod.ns)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		la := netlink.NewLinkAttrs()
		la.Name = "eth0"
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: e.peer, PeerNamespace: netlink.NsFd(hr.NsFd())}); err != nil {
			t.Fatalf("ip link add eth0 type veth peer name %s: %v", e.peer, err)
		}
		gw := net.IPv4(10, 253, byte(i+1), 254)
		l, err := h.LinkByName("eth0")
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.AddrAdd(h, l, e.pod.ip, 24); err != nil {
			t.Fatal(err)
		}
		if _, err := wire.Up(h, "eth0"); err != nil {
			t.Fatal(err)
		}
		if _, err := wire.Up(h, "lo"); err != nil {
			t.Fatal(err)
		}
		if err := h.RouteAdd(&netlink.Route{LinkIndex: l.Attrs().Index, Gw: gw}); err != nil {
			t.Fatalf("ip route add default via %s: %v", gw, err)
		}
		rl, err := hr.LinkByName(e.peer)
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.AddrAdd(hr, rl, gw, 24); err != nil {
			t.Fatal(err)
		}
		if _, err := wire.Up(hr, e.peer); err != nil {
			t.Fatal(err)
		}
	}
	if err := wire.Sysctl(router, "net/ipv4/ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	rs, err := hr.LinkByName("rs")
	if err != nil {
		t.Fatal(err)
	}
	const burst = 16 << 10
	q := &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: rs.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       rate / 8, Limit: 3 * burst, Buffer: netlink.Xmittime(rate/8, burst),
	}
	if err := hr.QdiscAdd(q); err != nil {
		t.Fatalf("tc qdisc add dev rs root tbf rate %d: %v", rate, err)
	}
	return client, server
}

// searchShaped runs the loss-ceiling search with sender over the shaped
// path (0.5% ceiling, 20M..80M in 1M steps, 2 s probes, a 3 s measured
// trial of 1400-byte payloads), logs its probes and returns the trial's
// metrics and the rates the probes offered and their losses; nothing may
// be left running. A probe's offered rate is what its sender says it sent
// where it says (pktgen, SeriesProbeSent: it falls behind its schedule on
// a stalled vCPU, and its loss is of what it sent), else the rate asked.
func searchShaped(t *testing.T, client, server nsPod, sender string) (m map[string]float64, offered, losses []float64) {
	t.Helper()
	tr := trial(workload.Pair{Server: server, Client: client})
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Length: "1400", LossCeiling: "0.5%",
		CeilingSearch: &study.CeilingSearch{Low: "20M", High: "80M", Step: "1M", Probe: study.Duration{Duration: 2 * time.Second}, Sender: sender}}
	tr.Duration, tr.Warmup = 3*time.Second, time.Second
	res, err := New().Run(context.Background(), tr)
	checkNoProcesses(t, client, server)
	if err != nil {
		t.Fatal(err)
	}
	steps := res.Series[0]
	sent := steps[SeriesProbeSent]
	if len(sent) != len(steps[SeriesProbeRate]) {
		t.Errorf("%s probes: %d sent rates for %d probes", sender, len(sent), len(steps[SeriesProbeRate]))
	}
	offered = slices.Clone(steps[SeriesProbeRate])
	behind := false
	for i := range offered {
		if i < len(sent) && sent[i] > 0 {
			offered[i] = sent[i]
			behind = behind || (ceiling.Step{Rate: steps[SeriesProbeRate][i], Sent: sent[i]}).Behind()
		}
		t.Logf("%s probe %d: %.2f Mbit/s asked, %.2f offered, loss %.3f%%", sender, i, steps[SeriesProbeRate][i]/1e6, offered[i]/1e6, steps[SeriesProbeLoss][i])
	}
	// A probe or the measured trial (one pair) that sent less than it
	// was asked for is said once.
	sentMetric := MetricSenderBitrate
	if sender == study.SenderPktgen {
		sentMetric = MetricSent
	}
	behind = behind || fellBehind([]map[string]float64{res.Metrics}, sentMetric, res.Metrics[MetricOffered])
	if behind != slices.Contains(res.Warnings, behindWarning(sender)) {
		t.Errorf("a probe fell behind: %v; warnings %q", behind, res.Warnings)
	}
	return res.Metrics, offered, steps[SeriesProbeLoss]
}

// An iperf3 sender asked for 100 Gbit/s of 1400-byte datagrams sends
// what its core can (hundreds of Mbit/s to a few Gbit/s): the probe says
// what it sent, the run warns, and where the probe passed the ceiling is
// what it sent, marked sender-bound, and the measured trial is asked for
// that rate, not the 100 Gbit/s it could not offer. (Before, the sample
// said 100 Gbit/s offered and "the path was not saturated".)
func TestLossCeilingSenderBound(t *testing.T) {
	client, server := podPair(t)
	tr := trial(workload.Pair{Server: server, Client: client})
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Length: "1400", LossCeiling: "3%",
		CeilingSearch: &study.CeilingSearch{Low: "10M", High: "100G", Step: "1G", Probe: study.Duration{Duration: time.Second}}}
	tr.Duration, tr.Warmup = 3*time.Second, time.Second
	res, err := New().Run(context.Background(), tr)
	checkNoProcesses(t, client, server)
	if err != nil {
		t.Fatal(err)
	}
	m, steps := res.Metrics, res.Series[0]
	sent, rates := steps[SeriesProbeSent], steps[SeriesProbeRate]
	t.Logf("probes asked %v, sent %v, lost %v%%; found %.0f (at high %v, sender-bound %v); measured offered %.0f, sent %.0f, received %.0f bit/s",
		rates, sent, steps[SeriesProbeLoss], m[MetricCeilingRate], m[MetricCeilingAtHigh], m[MetricCeilingSenderBound], m[MetricOffered], m[MetricSenderBitrate], m["bitrate"])
	if len(sent) == 0 || !(ceiling.Step{Rate: rates[0], Sent: sent[0]}).Behind() {
		t.Fatalf("the 100 Gbit/s probe did not say it sent less: sent %v", sent)
	}
	if !slices.Contains(res.Warnings, iperf3Behind) {
		t.Errorf("no warning that iperf3 fell behind: %q", res.Warnings)
	}
	if !(m[MetricCeilingRate] < ceiling.BehindShare*100e9) {
		t.Errorf("ceiling %.0f bit/s: the sender never offered that", m[MetricCeilingRate])
	}
	if m[MetricCeilingAtHigh] == 1 {
		// The high probe passed behind its rate: the answer is what it sent.
		if m[MetricCeilingSenderBound] != 1 || m[MetricCeilingRate] != sent[0] {
			t.Errorf("high passed sending %.0f: ceiling %.0f, sender-bound %v; want what it sent, marked", sent[0], m[MetricCeilingRate], m[MetricCeilingSenderBound])
		}
		if math.Abs(m[MetricOffered]-sent[0]) > 1 {
			t.Errorf("measured trial asked for %.0f bit/s, want the %.0f the probe sent", m[MetricOffered], sent[0])
		}
	}
}

// On a link shaped to 50 Mbit/s the search finds the shaper's bound.
// tbf charges whole frames (payload 1400 + UDP 8 + IPv4 20 + Ethernet 14
// = 1442 B), so the payload bound is b = 50M x 1400/1442 = 48.5 Mbit/s.
// Above b tbf drops the excess, loss (r-b)/r, so with a 0.5% ceiling a
// rate passes up to b/(1-0.005) = 48.8 Mbit/s, 0.24 Mbit/s above b; the
// queue hides at most 0.19 Mbit/s more (see shapedPath): both less than
// the 1 Mbit/s step. The rate found must be within one step of b
// (47.5 .. 49.5 Mbit/s) and its loss under 0.5%.
//
// A busy machine (other tests, 2 CPUs, or a VM's vCPU preempted by its
// host) can lose packets below the bound for a moment: the receiver or
// the sender is descheduled, and a sender that keeps a schedule (pktgen
// does: its next send time advances by the interval whether or not it
// was on time) then catches up in a burst larger than the shaper's
// queue. That only ever lowers the rate found; so the search is tried up
// to three times and the best kept, and no try may end above the bound
// plus one step or with its loss over the ceiling. Where the host stole
// more than maxSteal of the machine's CPU time over the tries, the best
// must reach stolenFloor of the bound instead, as in the emulated VM.
func TestLossCeilingOnShapedLink(t *testing.T) {
	client, server := shapedPath(t, shaper)
	bestOfThree(t, client, server, study.SenderIperf3, bound-step)
}

// The same shaped link with the kernel's packet generator as the sender
// (ceilingSearch.sender pktgen, seed 001's): the probes and the measured
// trial send from the client's namespace past its sockets, and the
// server's device counts what the shaper let through. Where the kernel
// has no pktgen the test is skipped (this machine); the full-kernel VM
// has it, and that VM is emulated (QEMU without KVM): on a busy host its
// vCPUs stall for tens of milliseconds, pktgen's catch-up bursts
// overflow the shaper's queue, and probes lose packets well below the
// bound (one CI run: 0.5-1% at 38.75 Mbit/s in all three tries, 37.8
// found). So here the rate found must be at least 70% of the bound, not
// within one step; what the test holds exact does not depend on the
// VM's speed: no probe above the bound passes, each loses at least the
// excess the shaper drops of what pktgen sent (a stalled vCPU also makes
// pktgen fall behind its schedule: one CI run's 80 Mbit/s probe sent
// less and lost 30%, not the 39% of 80), and the measured trial runs at
// the rate found.
// The iperf3 twin above checks the bound to one step on the host.
func TestLossCeilingPktgenOnShapedLink(t *testing.T) {
	requirePktgen(t)
	client, server := shapedPath(t, shaper)
	bestOfThree(t, client, server, study.SenderPktgen, 0.7*bound)
}

// requirePktgen skips without the kernel's packet generator, and fails
// in the full-kernel VM, which has it.
func requirePktgen(t *testing.T) {
	t.Helper()
	if err := probe.Pktgen(); err != nil {
		if os.Getenv("CNIBENCH_IN_VM") != "" {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// The shaped link's rate and the search's step, and the payload bound
// the search must find (see TestLossCeilingOnShapedLink).
const (
	shaper = 50_000_000
	step   = 1e6
	bound  = shaper * 1400.0 / 1442.0
)

// bestOfThree runs the search with sender up to three times, until one
// finds a rate within one step of the bound; every try must stay at or
// below the bound plus one step with its loss under the ceiling, every
// probe that offered more must fail with at least the loss the shaper
// makes ((r-b)/r of the rate r it offered, less a point for the queue),
// and the measured trial must run
// within 3% of the rate found. The best rate must reach floor.
func bestOfThree(t *testing.T, client, server nsPod, sender string, floor float64) {
	t.Helper()
	var best float64
	before, stealRead := cpuTotal()
	for try := 1; try <= 3 && best < bound-step; try++ {
		m, rates, losses := searchShaped(t, client, server, sender)
		found := m[MetricCeilingRate]
		t.Logf("%s try %d: found %.2f Mbit/s (loss %.3f%%) in %v probes; bound %.2f Mbit/s, passing up to %.2f; measured %.2f Mbit/s of %.0f packets, loss %.3f%%",
			sender, try, found/1e6, m[MetricCeilingLoss], m[MetricCeilingProbes], bound/1e6, bound/0.995/1e6, m["bitrate"]/1e6, m[MetricPackets], m[MetricLostPct])
		if found > bound+step {
			t.Errorf("found %.2f Mbit/s, more than one step above the bound %.2f Mbit/s", found/1e6, bound/1e6)
		}
		if !(m[MetricCeilingLoss] < 0.5) {
			t.Errorf("loss at the found rate %.3f%%, want under 0.5%%", m[MetricCeilingLoss])
		}
		if m[MetricCeilingAtHigh] != 0 {
			t.Error("the 80M high passed a 50M link")
		}
		for i, r := range rates {
			if want := 100*(r-bound)/r - 1; r > bound+step && i < len(losses) && losses[i] < want {
				t.Errorf("probe at %.2f Mbit/s lost %.2f%%, want at least %.2f%%: the shaper drops the excess over %.2f", r/1e6, losses[i], want, bound/1e6)
			}
		}
		// The measured trial offers the rate found and sends it; what
		// arrives may be less where a stalled vCPU made pktgen catch up
		// in a burst (one VM run: 45.27 of 48.12 Mbit/s, 5.9% lost).
		sentKey := MetricSenderBitrate
		if sender == study.SenderPktgen {
			sentKey = MetricSent
		}
		if m[MetricPackets] <= 0 || m[MetricOffered] != found || !(math.Abs(m[sentKey]-found) <= 0.03*found) || m["bitrate"] > m[sentKey]*1.01 {
			t.Errorf("the measured trial offered %.2f Mbit/s, sent %.2f and received %.2f (%v packets), want the rate found %.2f offered, sent within 3%%, received at most that (+1%%)",
				m[MetricOffered]/1e6, m[sentKey]/1e6, m["bitrate"]/1e6, m[MetricPackets], found/1e6)
		}
		best = max(best, found)
	}
	// A host that steals the vCPUs stalls sender and receiver as the
	// emulated VM does (one CI run on 2026-12-04, steal 20-40% from a
	// neighbour: 46.25, 41.56 and 39.69 Mbit/s found): the VM twin's floor.
	if after, ok := cpuTotal(); ok && stealRead {
		if st := stealPct(before, after); st > maxSteal && floor > stolenFloor*bound {
			t.Logf("the host stole %.1f%% of the machine's CPU time during the tries (over %g%%): accepting down to %.0f%% of the bound",
				st, maxSteal, 100*stolenFloor)
			floor = stolenFloor * bound
		}
	}
	switch {
	case best < floor:
		t.Errorf("best rate found %.2f Mbit/s in three tries, want at least %.2f Mbit/s (bound %.2f)", best/1e6, floor/1e6, bound/1e6)
	case best < bound-step:
		t.Logf("best rate found %.2f Mbit/s is more than one step below the bound %.2f: the sender could not hold its rate here (accepted down to %.2f)", best/1e6, bound/1e6, floor/1e6)
	}
}

// maxSteal is the steal, in percent of the machine's CPU time over the
// tries, above which bestOfThree accepts stolenFloor of the bound.
const (
	maxSteal    = 5.0
	stolenFloor = 0.7
)

// cpuTotal is /proc/stat's cpu line; ok is false where it cannot be read.
func cpuTotal() (procfs.CPUStat, bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return procfs.CPUStat{}, false
	}
	st, err := fs.Stat()
	if err != nil {
		return procfs.CPUStat{}, false
	}
	return st.CPUTotal, true
}

// stealPct is the steal share of all CPU time between two readings.
func stealPct(a, b procfs.CPUStat) float64 {
	total := func(c procfs.CPUStat) float64 {
		return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	}
	dt := total(b) - total(a)
	if dt <= 0 {
		return 0
	}
	return 100 * (b.Steal - a.Steal) / dt
}

// The pktgen sender at set rates (sender: pktgen with rate), as a sweep
// of offered loads runs it: below the 50 Mbit/s shaper the trial carries
// what it was asked for; above it the shaper drops the excess, and the
// loss is at least that share of what pktgen sent. At 100 Gbit/s, which
// no CPU sends over a veth pair, pktgen falls behind and is stopped at
// the trial's end (before, its count of rate x duration packets ran on
// until the trial's deadline failed it): it says what it sent, and the
// run warns. Each trial reports the jitter the server pod's receiver
// timed.
func TestPktgenAtRatesOnShapedLink(t *testing.T) {
	requirePktgen(t)
	client, server := shapedPath(t, shaper)
	// Two streams share the pair's load as iperf3 -P 2 does, each at the
	// rate (under the bound together, then over it). Reversed, the pair's
	// server sends, as iperf3 -R: the pair is swapped round so that its
	// server's packets cross the shaper (sent client to server, they
	// would arrive whole at 80 Mbit/s).
	for _, c := range []struct {
		rate    string
		streams int
		reverse bool
	}{{"30M", 1, false}, {"80M", 1, false}, {"100G", 1, false}, {"15M", 2, false}, {"40M", 2, false}, {"30M", 1, true}, {"80M", 1, true}} {
		rate := c.rate
		tr := trial(workload.Pair{Server: server, Client: client})
		if c.reverse {
			tr = trial(workload.Pair{Server: client, Client: server})
		}
		tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Length: "1400", Rate: rate, Sender: study.SenderPktgen, Parallel: c.streams, Reverse: c.reverse}
		tr.Duration, tr.Warmup = 3*time.Second, time.Second
		res, err := New().Run(context.Background(), tr)
		checkNoProcesses(t, client, server)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Metrics
		asked, _ := study.ParseRate(rate)
		asked *= float64(c.streams)
		rate = fmt.Sprintf("%s x %d", rate, c.streams)
		if c.reverse {
			rate += " reversed"
		}
		t.Logf("pktgen at %s: sent %.2f Mbit/s (%.0f packets), received %.2f, loss %.3f%%, jitter %.3f ms, %.0f out of order; bound %.2f", rate, m[MetricSent]/1e6, m[MetricPackets], m["bitrate"]/1e6, m[MetricLostPct], m[MetricJitter], m[MetricOutOfOrder], bound/1e6)
		if j, ok := m[MetricJitter]; !ok || !(j >= 0 && j < 20) {
			t.Errorf("%s: jitter %v ms (reported: %v), want the receiver's timing of the packets, under 20 ms", rate, j, ok)
		}
		// Each stream numbers its own packets: told apart by source port,
		// few are out of order (interleaved as one, about half would be).
		// Not none: with two streams on two CPUs, whichever CPU runs the
		// router's shaper hands packets on to its own backlog, so one
		// stream's packets can pass each other (0-2 under the bound and
		// 108-170 of 21430 over it in the guest; one stream: none).
		if ooo := m[MetricOutOfOrder]; c.streams > 1 && !(ooo < 0.05*m[MetricPackets]) {
			t.Errorf("%s: %v of %v packets out of order, want the streams ordered each on its own", rate, ooo, m[MetricPackets])
		}
		if m[MetricOffered] != asked || !(m[MetricPackets] > 0) || m[MetricSent] > 1.01*asked {
			t.Errorf("%s: offered %v, sent %v bit/s in %v packets: want offered the rate asked and sent at most 1%% above it", rate, m[MetricOffered], m[MetricSent], m[MetricPackets])
		}
		behind := ceiling.Behind(m[MetricSent], asked)
		if behind != slices.Contains(res.Warnings, pktgenBehind) || (asked >= 100e9 && !behind) {
			t.Errorf("%s: sent %.2f Mbit/s (behind: %v), warnings %q", rate, m[MetricSent]/1e6, behind, res.Warnings)
		}
		if m["bitrate"] > bound+step || m["bitrate"] > m[MetricSent] {
			t.Errorf("%s: received %.2f Mbit/s, more than the bound %.2f or than was sent %.2f", rate, m["bitrate"]/1e6, bound/1e6, m[MetricSent]/1e6)
		}
		// The shaper passes the bound over the window the streams were
		// sending together. Each stream's thread notices the start on
		// its own 100 ms poll (pktgen_thread_worker waits HZ/10 for
		// T_RUN; pktgen_run_all_threads wakes none), so two streams'
		// window may be that much longer than their runs, and their
		// loss that much below the excess over one run (CI, emulated
		// guest: 38.27% of 80 Mbit/s through 48.54, 1.05 points under).
		stagger := 0.0
		if c.streams > 1 {
			stagger = 0.1
		}
		secs := tr.Duration.Seconds()
		switch sent := m[MetricSent]; {
		case asked < bound && !(m[MetricLostPct] < 5):
			t.Errorf("%s under a %.2f Mbit/s bound lost %.3f%%", rate, bound/1e6, m[MetricLostPct])
		case sent > bound+step && m[MetricLostPct] < 100*(1-bound*(secs+stagger)/(sent*secs))-1:
			t.Errorf("%s: sent %.2f Mbit/s through a %.2f bound and lost %.3f%%, want at least the excess %.2f%% (over %.1f s)",
				rate, sent/1e6, bound/1e6, m[MetricLostPct], 100*(1-bound*(secs+stagger)/(sent*secs)), secs+stagger)
		}
	}
}
