package impair

import (
	"fmt"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// Kernel tests: two throw-away namespaces joined by a veth pair
// (a0 10.231.0.1 <-> b0 10.231.0.2), journaled like every kernel test so
// a killed test is cleaned up by `cnibench cleanup`. They skip where the
// kernel lacks netem (this machine) and fail inside the full-kernel VM
// (CNIBENCH_IN_VM) when anything is missing or wrong.

var (
	ipA = net.IPv4(10, 231, 0, 1)
	ipB = net.IPv4(10, 231, 0, 2)
)

func requireKernel(t *testing.T, features ...string) {
	t.Helper()
	kerneltest.RequireKernel(t, append([]string{probe.Veth}, features...)...)
}

type pair struct{ a, b string }

// newPair creates the namespaces and the veth, with permanent neighbour
// entries so no ARP exchange (which netem would also delay or drop)
// takes part in a measurement.
func newPair(t *testing.T) pair {
	t.Helper()
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	p := pair{a: kerneltest.Netns(t, j, id, "a"), b: kerneltest.Netns(t, j, id, "b")}
	ha, hb := handle(t, p.a), handle(t, p.b)
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "a0"
	if err := ha.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "b0", PeerNamespace: netlink.NsFd(hb.NsFd())}); err != nil {
		t.Fatalf("ip link add a0 type veth peer b0: %v", err)
	}
	la, lb := up(t, ha, "a0", ipA), up(t, hb, "b0", ipB)
	kerneltest.WaitCarrier(t, ha, "a0")
	kerneltest.WaitCarrier(t, hb, "b0")
	for _, n := range []struct {
		h  *netns.NetlinkHandle
		l  netlink.Link
		ip net.IP
		hw net.HardwareAddr
	}{{ha, la, ipB, lb.Attrs().HardwareAddr}, {hb, lb, ipA, la.Attrs().HardwareAddr}} {
		err := n.h.NeighAdd(&netlink.Neigh{LinkIndex: n.l.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT, IP: n.ip, HardwareAddr: n.hw})
		if err != nil {
			t.Fatalf("ip neigh add %s: %v", n.ip, err)
		}
	}
	return p
}

func handle(t *testing.T, ns string) *netns.NetlinkHandle {
	t.Helper()
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func up(t *testing.T, h *netns.NetlinkHandle, dev string, ip net.IP) netlink.Link {
	t.Helper()
	l, err := h.LinkByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(24, 32)}}); err != nil {
		t.Fatalf("ip addr add %s dev %s: %v", ip, dev, err)
	}
	for _, d := range []string{"lo", dev} {
		x, err := h.LinkByName(d)
		if err == nil {
			err = h.LinkSetUp(x)
		}
		if err != nil {
			t.Fatalf("ip link set %s up: %v", d, err)
		}
	}
	// Read it again: the hardware address and state are final now.
	if l, err = h.LinkByName(dev); err != nil {
		t.Fatal(err)
	}
	return l
}

// shape returns dev's qdiscs as (kind, handle, parent) lines, sorted.
func shape(t *testing.T, ns, dev string) []string {
	t.Helper()
	idx, err := ifindex(ns, dev)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := dumpQdiscs(ns, idx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range qs {
		out = append(out, fmt.Sprintf("%s %s %s %x", q.Kind, handleString(q.Handle), parentString(q.Parent), q.Options))
	}
	sort.Strings(out)
	return out
}

// TestPresetsInstallExactly: every preset (and a Spec using every field)
// installs exactly its parameters, read back by this package's decoder
// and, for the fields it knows, by vishvananda/netlink's; the Prev is
// handed to the recorder before the change; Revert restores the veth's
// default root qdisc exactly.
func TestPresetsInstallExactly(t *testing.T) {
	requireKernel(t, probe.Netem)
	p := newPair(t)
	before := shape(t, p.a, "a0")
	specs := []Spec{{
		Delay: 20 * ms, Jitter: 2 * ms, DelayCorrelation: 10, Distribution: Normal,
		Duplicate: 1, DuplicateCorrelation: 2, Reorder: 25, ReorderCorrelation: 50, Gap: 3,
		Corrupt: 0.5, CorruptCorrelation: 3, GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1},
		Rate: 8 * (1<<32 + 8), Limit: 5000,
	}, {Delay: MaxDelay, Jitter: MaxJitter, Distribution: Pareto}, {Delay: ms, Jitter: ms, Distribution: ParetoNormal}}
	names := []string{"every field", "largest delay and jitter", "paretonormal"}
	for _, pr := range Presets() {
		specs, names = append(specs, pr.Spec), append(names, pr.Name)
	}
	h := handle(t, p.a)
	for i, s := range specs {
		var recorded []Prev
		prev, err := Apply(p.a, "a0", s, func(p Prev) error {
			// Nothing has changed yet when the recorder runs.
			if got := shape(t, p.Netns, "a0"); !slices.Equal(got, before) {
				t.Errorf("%s: qdiscs changed before the recorder ran: %v", names[i], got)
			}
			recorded = append(recorded, p)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: Apply: %v", names[i], err)
		}
		if s.IsZero() {
			if !prev.None || len(recorded) != 0 || !slices.Equal(shape(t, p.a, "a0"), before) {
				t.Errorf("none: %+v, recorded %v; want nothing installed", prev, recorded)
			}
			continue
		}
		if len(recorded) != 1 || recorded[0] != prev || !prev.Default || prev.Kind != "noqueue" {
			t.Errorf("%s: recorded %+v, returned %+v; want the veth's default noqueue once", names[i], recorded, prev)
		}
		got, err := ReadBack(p.a, "a0")
		if err != nil {
			t.Fatalf("%s: ReadBack: %v", names[i], err)
		}
		if !s.Matches(got) {
			t.Errorf("%s: installed\n%+v\nread back\n%+v", names[i], s.Kernel(), got.Kernel())
		}
		checkNetlinkView(t, names[i], h, s)
		// (No assertion on the counters: the kernel's own IPv6 packets may
		// sit in a 274 s delay.)
		if _, err := QdiscStats(p.a, "a0"); err != nil {
			t.Errorf("%s: QdiscStats: %v", names[i], err)
		}
		if err := Revert(prev); err != nil {
			t.Fatalf("%s: Revert: %v", names[i], err)
		}
		if got := shape(t, p.a, "a0"); !slices.Equal(got, before) {
			t.Errorf("%s: after Revert %v, before %v", names[i], got, before)
		}
		if err := Revert(prev); err != nil {
			t.Errorf("%s: a second Revert: %v", names[i], err)
		}
	}
}

// checkNetlinkView compares what vishvananda/netlink parses from the
// dump with the values Apply meant to install.
func checkNetlinkView(t *testing.T, name string, h *netns.NetlinkHandle, s Spec) {
	t.Helper()
	l, err := h.LinkByName("a0")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := netns.Dump(func() ([]netlink.Qdisc, error) { return h.QdiscList(l) })
	if err != nil {
		t.Fatal(err)
	}
	k := s.Kernel()
	for _, q := range qs {
		n, ok := q.(*netlink.Netem)
		if !ok || n.Handle != NetemHandle {
			continue
		}
		checks := []struct {
			field     string
			got, want uint64
		}{
			{"Latency ticks", uint64(n.Latency), uint64(ticks(k.Latency))},
			{"Jitter ticks", uint64(n.Jitter), uint64(ticks(k.Jitter))},
			{"Limit", uint64(n.Limit), uint64(k.Limit)},
			{"Loss", uint64(n.Loss), uint64(k.Loss)},
			{"LossCorr", uint64(n.LossCorr), uint64(k.LossCorr)},
			{"DelayCorr", uint64(n.DelayCorr), uint64(k.DelayCorr)},
			{"Duplicate", uint64(n.Duplicate), uint64(k.Duplicate)},
			{"DuplicateCorr", uint64(n.DuplicateCorr), uint64(k.DuplicateCorr)},
			{"ReorderProb", uint64(n.ReorderProb), uint64(k.ReorderProb)},
			{"ReorderCorr", uint64(n.ReorderCorr), uint64(k.ReorderCorr)},
			{"CorruptProb", uint64(n.CorruptProb), uint64(k.CorruptProb)},
			{"CorruptCorr", uint64(n.CorruptCorr), uint64(k.CorruptCorr)},
			{"Gap", uint64(n.Gap), uint64(k.Gap)},
			{"Rate64", n.Rate64, k.Rate},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: netlink reads %s = %d, want %d", name, c.field, c.got, c.want)
			}
		}
		return
	}
	t.Errorf("%s: netlink finds no netem cb1: on a0 in %v", name, qs)
}

// TestUnderTBFRestoresExactly: on a device shaped by tbf (as the local
// engine's underlay), netem becomes tbf's inner queue and leaves tbf's
// parameters byte for byte; revert puts back a bfifo of tbf's limit, and
// a second apply/revert cycle returns to exactly that state.
func TestUnderTBFRestoresExactly(t *testing.T) {
	requireKernel(t, probe.Netem, probe.TBF)
	p := newPair(t)
	h := handle(t, p.a)
	l, err := h.LinkByName("a0")
	if err != nil {
		t.Fatal(err)
	}
	const rate, burst, limit = 125_000_000, 500_000, 2_500_000 // 1 Gbit/s
	tbf := &netlink.Tbf{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate: rate, Limit: limit, Buffer: netlink.Xmittime(rate, burst)}
	if err := h.QdiscAdd(tbf); err != nil {
		t.Fatalf("tc qdisc add dev a0 root handle 1: tbf: %v", err)
	}
	tbfLine := func(lines []string) string {
		for _, x := range lines {
			if strings.HasPrefix(x, "tbf 1: root ") {
				return x
			}
		}
		t.Fatalf("no tbf 1: root in %v", lines)
		return ""
	}
	before := shape(t, p.a, "a0")
	prev, err := Apply(p.a, "a0", mustPreset(t, "delay-loss-low").Spec, nil)
	if err != nil {
		t.Fatalf("Apply under tbf: %v", err)
	}
	// Prev says the queue limit it set (none was given), for env.json.
	want := Prev{Netns: p.a, Dev: "a0", Kind: "tbf", Handle: netlink.MakeHandle(1, 0), Parent: netlink.MakeHandle(1, 1), ShaperRate: rate,
		Limit: shaperLimit(mustPreset(t, "delay-loss-low").Spec, limit, rate, l.Attrs().MTU)}
	if prev.Child == nil || *prev.Child != (Child{Kind: "bfifo", Limit: limit}) {
		t.Errorf("Child = %+v, want tbf's hidden bfifo of %d bytes", prev.Child, limit)
	}
	prev2 := prev
	prev2.Child = nil
	if prev2 != want {
		t.Errorf("Prev = %+v, want %+v", prev2, want)
	}
	during := shape(t, p.a, "a0")
	if tbfLine(during) != tbfLine(before) {
		t.Errorf("tbf changed: %s, was %s", tbfLine(during), tbfLine(before))
	}
	// No limit given: netem's holds the delay's packets and the bfifo's.
	spec := mustPreset(t, "delay-loss-low").Spec
	spec.Limit = shaperLimit(spec, limit, rate, l.Attrs().MTU)
	if got, err := ReadBack(p.a, "a0"); err != nil || !spec.Matches(got) || got.Limit <= DefaultLimit || !prev.Installed(mustPreset(t, "delay-loss-low").Spec).Matches(got) {
		t.Errorf("ReadBack under tbf = %+v, %v; want limit %d", got, err, spec.Limit)
	}
	if err := Revert(prev); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	after := shape(t, p.a, "a0")
	if tbfLine(after) != tbfLine(before) {
		t.Errorf("tbf after revert: %s, was %s", tbfLine(after), tbfLine(before))
	}
	wantChild := fmt.Sprintf("bfifo cb2: parent 1:1 %x", u32s(limit))
	if !slices.Contains(after, wantChild) || len(after) != len(before)+1 {
		t.Errorf("after revert %v, want %v plus %q", after, before, wantChild)
	}
	// Traffic flows again (tbf's queue is not a noop qdisc).
	if _, err := rtts(t, p, 3); err != nil {
		t.Errorf("after revert: %v", err)
	}
	prev, err = Apply(p.a, "a0", mustPreset(t, "loss-low").Spec, nil)
	if err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if prev.Child == nil || prev.Child.Handle != RestoreHandle {
		t.Errorf("second Apply found child %+v, want the restored bfifo cb2:", prev.Child)
	}
	if err := Revert(prev); err != nil {
		t.Fatal(err)
	}
	if got := shape(t, p.a, "a0"); !slices.Equal(got, after) {
		t.Errorf("second revert left %v, first left %v", got, after)
	}
}

// TestLossRateMatches sends N = 20000 UDP datagrams over a0 with 10%
// loss. The count lost is binomial(N, 0.1): sd = sqrt(N*0.1*0.9) = 42.4
// datagrams (0.21 points), and the test allows 5 sd (±1.06 points; a
// correct netem fails with probability 6e-7). Datagrams go in rounds of
// 250, each drained before the next, far below the veth's backlog (1000)
// and the receiver's buffer, so netem is the only place they are lost;
// netem's own drop counter must account for every missing datagram.
func TestLossRateMatches(t *testing.T) {
	requireKernel(t, probe.Netem)
	p := newPair(t)
	const n, round, rate = 20000, 250, 0.10
	recv := listen(t, p.b, ipB)
	send := dial(t, p.a, recv.LocalAddr().(*net.UDPAddr))
	var got atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := recv.Read(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	prev, err := Apply(p.a, "a0", Spec{Loss: rate * 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Revert(prev); err != nil {
			t.Error(err)
		}
	})
	for sent := 0; sent < n; sent += round {
		for range round {
			if _, err := send.Write([]byte("cnibench")); err != nil {
				t.Fatal(err)
			}
		}
		quiet(&got, 30*time.Millisecond)
	}
	st := settled(t, p, &got, n)
	lost := n - int(got.Load())
	measured := float64(lost) / n
	sd := math.Sqrt(n * rate * (1 - rate))
	t.Logf("sent %d, received %d: loss %.3f%% (netem loss 10%%, 5 sd = %.2f points)", n, got.Load(), 100*measured, 500*sd/n)
	if math.Abs(float64(lost)-n*rate) > 5*sd {
		t.Errorf("measured loss %.3f%% is more than 5 sd (%.2f points) from 10%%", 100*measured, 500*sd/n)
	}
	// Drops may also count the odd IPv6 packet the kernel sends on its
	// own; they may not be fewer than the datagrams that went missing.
	if int(st.Drops) < lost || int(st.Drops) > lost+50 {
		t.Errorf("netem dropped %d packets, %d datagrams went missing: lost elsewhere, or counters wrong (%+v)", st.Drops, lost, st)
	}
}

// listen opens a UDP socket inside ns (a socket stays in the namespace it
// was created in) with a receive buffer large enough for a round.
func listen(t *testing.T, ns string, ip net.IP) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	err := netns.Do(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
		})
	}
	return c
}

func dial(t *testing.T, ns string, to *net.UDPAddr) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	err := netns.Do(ns, func() (err error) {
		c, err = net.DialUDP("udp4", nil, to)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// quiet waits until the counter has not moved for window (at most 10 s).
func quiet(n *atomic.Int64, window time.Duration) {
	last, since := n.Load(), time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && time.Since(since) < window; {
		time.Sleep(5 * time.Millisecond)
		if v := n.Load(); v != last {
			last, since = v, time.Now()
		}
	}
}

// settled waits until each of the n datagrams was either received or
// dropped by netem, and returns netem's counters then. A quiet spell
// cannot tell the end: on a loaded machine the receiver can be starved
// for longer, and what it has not read yet would count as loss. A
// datagram lost elsewhere is in neither count; after 10 s the checks
// say so.
func settled(t *testing.T, p pair, got *atomic.Int64, n int) Stats {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := QdiscStats(p.a, "a0")
		if err != nil {
			t.Fatal(err)
		}
		if got.Load()+int64(st.Drops) >= int64(n) || time.Now().After(deadline) {
			return st
		}
	}
}

func mustPreset(t *testing.T, name string) Preset {
	t.Helper()
	p, err := LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
