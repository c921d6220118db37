package impair

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/probe"
)

// TestDelayAddsRTT: 20 ms of netem delay on a0's egress adds 20 ms to
// every round trip: netem never sends a packet early, so no RTT may be
// below 20 ms; the median may exceed the undelayed median by 20 ms plus
// at most 5 ms of timer and scheduling slack (an emulated VM's timers).
func TestDelayAddsRTT(t *testing.T) {
	requireKernel(t, probe.Netem)
	p := newPair(t)
	const delay = 20 * ms
	checkAdded(t, p, 50, delay, func() func() {
		prev, err := Apply(p.a, "a0", Spec{Delay: delay}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := Revert(prev); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestIngressThroughIFB: the same 20 ms on what b0 receives, through an
// ifb device; revert leaves neither the ifb nor the ingress qdisc.
func TestIngressThroughIFB(t *testing.T) {
	requireKernel(t, probe.Netem, probe.IFB)
	p := newPair(t)
	before := shape(t, p.b, "b0")
	const delay = 20 * ms
	s := Spec{Delay: delay}
	checkAdded(t, p, 30, delay, func() func() {
		prev, err := ApplyIngress(p.b, "b0", s, nil)
		if err != nil {
			t.Fatalf("ApplyIngress: %v", err)
		}
		if prev.IFB == "" || prev.Device() != prev.IFB {
			t.Errorf("Prev = %+v, want an ifb", prev)
		}
		if got, err := ReadBack(p.b, prev.Device()); err != nil || !s.Matches(got) {
			t.Errorf("ReadBack on %s = %+v, %v", prev.IFB, got, err)
		}
		return func() {
			if st, err := QdiscStats(p.b, prev.Device()); err != nil || st.Packets < 30 {
				t.Errorf("ifb's netem passed %d packets (%v), want the 30 requests", st.Packets, err)
			}
			checkIngressReverted(t, p, prev, before)
		}
	})
}

// checkAdded measures n round trips undelayed, then n with the delay
// that impair installs (it returns the delay's removal), and checks that
// no delayed RTT is below delay and that the medians differ by delay ..
// delay+5 ms. The medians come from two phases, and a loaded machine can
// slow either for a while (the delayed one waits on netem's timer), so
// the difference gets up to three tries, each measuring both phases; a
// netem that delays by the wrong amount misses on every try. Every try
// must keep every RTT at or above delay.
func checkAdded(t *testing.T, p pair, n int, delay time.Duration, impair func() (remove func())) {
	t.Helper()
	for try := 1; ; try++ {
		base, err := rtts(t, p, n)
		if err != nil {
			t.Fatal(err)
		}
		remove := impair()
		delayed, err := rtts(t, p, n)
		remove()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(base)
		slices.Sort(delayed)
		added := delayed[len(delayed)/2] - base[len(base)/2]
		t.Logf("try %d: median RTT %v undelayed, %v delayed (min %v): added %v", try, base[len(base)/2], delayed[len(delayed)/2], delayed[0], added)
		if delayed[0] < delay {
			t.Errorf("an RTT of %v is below the %v netem delay", delayed[0], delay)
		}
		if added >= delay && added <= delay+5*ms {
			return
		}
		if try == 3 {
			t.Errorf("added median RTT %v, want %v .. %v", added, delay, delay+5*ms)
			return
		}
	}
}

// rtts measures n UDP round trips from a to an echo in b.
func rtts(t *testing.T, p pair, n int) ([]time.Duration, error) {
	t.Helper()
	srv := listen(t, p.b, ipB)
	go func() {
		buf := make([]byte, 64)
		for {
			k, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			srv.WriteToUDP(buf[:k], from)
		}
	}()
	c := dial(t, p.a, srv.LocalAddr().(*net.UDPAddr))
	out := make([]time.Duration, 0, n)
	buf := make([]byte, 64)
	for i := range n {
		msg := fmt.Appendf(nil, "rtt %d", i)
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		k, err := c.Read(buf)
		if err != nil {
			return nil, fmt.Errorf("round trip %d: %w", i, err)
		}
		if string(buf[:k]) != string(msg) {
			return nil, fmt.Errorf("round trip %d: echo %q", i, buf[:k])
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}
