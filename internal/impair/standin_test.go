package impair

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/cnibench/cnibench/internal/probe"
)

// The tests in this file run on kernels without netem (this machine's):
// a pfifo stands in for the netem at cb1:, so everything around netem
// (the raw dumps, where the qdisc goes, the flags that graft it under
// tbf, revert, statistics, the ifb redirection) meets a real kernel
// here, not only in the VM.

func standIn(t *testing.T) *nl.RtAttr {
	t.Helper()
	netemKind = "pfifo"
	t.Cleanup(func() { netemKind = "netem" })
	return nl.NewRtAttr(nl.TCA_OPTIONS, u32s(1000)) // struct tc_fifo_qopt
}

func TestStandInRootAndTBF(t *testing.T) {
	requireKernel(t, probe.TBF)
	opts := standIn(t)
	p := newPair(t)
	idx, err := ifindex(p.a, "a0")
	if err != nil {
		t.Fatal(err)
	}

	// The veth's default root.
	before := shape(t, p.a, "a0")
	prev, err := Inspect(p.a, "a0")
	if err != nil || !prev.Default || prev.Kind != "noqueue" || prev.Parent != netlink.HANDLE_ROOT {
		t.Fatalf("Inspect = %+v, %v; want the default noqueue root", prev, err)
	}
	if err := addQdisc(p.a, idx, prev.Parent, netemKind, opts); err != nil {
		t.Fatalf("add stand-in at root: %v", err)
	}
	if got := shape(t, p.a, "a0"); !slices.Contains(got, fmt.Sprintf("pfifo cb1: root %x", u32s(1000))) {
		t.Errorf("after add: %v", got)
	}
	if err := addQdisc(p.a, idx, prev.Parent, netemKind, opts); err == nil {
		t.Error("a second qdisc at cb1: was accepted; EXCL should refuse it")
	}
	if _, err := rtts(t, p, 5); err != nil {
		t.Fatal(err)
	}
	if st, err := QdiscStats(p.a, "a0"); err != nil || st.Packets < 5 || st.Bytes == 0 {
		t.Errorf("QdiscStats = %+v, %v; want the 5 requests counted", st, err)
	}
	if err := Revert(prev); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if got := shape(t, p.a, "a0"); !slices.Equal(got, before) {
		t.Errorf("after Revert %v, before %v", got, before)
	}
	if err := Revert(prev); err != nil {
		t.Errorf("second Revert: %v", err)
	}

	// Under the link-rate shaper.
	h := handle(t, p.a)
	const rate, burst, limit = 125_000_000, 500_000, 2_500_000
	tbf := &netlink.Tbf{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate: rate, Limit: limit, Buffer: netlink.Xmittime(rate, burst)}
	if err := h.QdiscAdd(tbf); err != nil {
		t.Fatalf("tc qdisc add dev a0 root handle 1: tbf: %v", err)
	}
	withTBF := shape(t, p.a, "a0")
	prev, err = Inspect(p.a, "a0")
	if err != nil || prev.Kind != "tbf" || prev.Parent != netlink.MakeHandle(1, 1) || prev.Child == nil || *prev.Child != (Child{Kind: "bfifo", Limit: limit}) {
		t.Fatalf("Inspect = %+v (child %+v), %v; want tbf's hidden bfifo of %d", prev, prev.Child, err, limit)
	}
	if err := addQdisc(p.a, idx, prev.Parent, netemKind, opts); err != nil {
		t.Fatalf("add stand-in under tbf: %v", err)
	}
	during := shape(t, p.a, "a0")
	if !slices.Contains(during, fmt.Sprintf("pfifo cb1: parent 1:1 %x", u32s(1000))) || !slices.Contains(during, withTBF[0]) {
		t.Errorf("under tbf: %v (tbf was %v)", during, withTBF)
	}
	if _, err := rtts(t, p, 3); err != nil {
		t.Fatal(err)
	}
	if err := Revert(prev); err != nil {
		t.Fatalf("Revert under tbf: %v", err)
	}
	after := shape(t, p.a, "a0")
	want := append(slices.Clone(withTBF), fmt.Sprintf("bfifo cb2: parent 1:1 %x", u32s(limit)))
	slices.Sort(want)
	if !slices.Equal(after, want) {
		t.Errorf("after revert %v\nwant %v", after, want)
	}
	if _, err := rtts(t, p, 3); err != nil {
		t.Fatalf("traffic after revert under tbf: %v", err)
	}
	// The next trial finds the restored bfifo, replaces it, and puts it
	// back as it was.
	prev, err = Inspect(p.a, "a0")
	if err != nil || prev.Child == nil || prev.Child.Handle != RestoreHandle || prev.Child.Limit != limit {
		t.Fatalf("second Inspect = %+v, %v", prev, err)
	}
	if err := addQdisc(p.a, idx, prev.Parent, netemKind, opts); err != nil {
		t.Fatalf("add stand-in over the restored bfifo: %v", err)
	}
	if got := shape(t, p.a, "a0"); slices.Contains(got, want[0]) && strings.Contains(strings.Join(got, "\n"), "bfifo") {
		t.Errorf("bfifo still there after replacing it: %v", got)
	}
	if err := Revert(prev); err != nil {
		t.Fatal(err)
	}
	if got := shape(t, p.a, "a0"); !slices.Equal(got, after) {
		t.Errorf("second revert left %v, first left %v", got, after)
	}
}

func TestStandInIngress(t *testing.T) {
	requireKernel(t, probe.IFB)
	opts := standIn(t)
	p := newPair(t)
	before := shape(t, p.b, "b0")
	var recorded []Prev
	prev, err := ingress(p.b, "b0", func(p Prev) error { recorded = append(recorded, p); return nil },
		func(ifb string, idx int) error { return addQdisc(p.b, idx, netlink.HANDLE_ROOT, netemKind, opts) })
	if err != nil {
		t.Fatalf("ingress: %v", err)
	}
	if len(recorded) != 1 || recorded[0] != prev || prev.IFB == "" {
		t.Errorf("recorded %v, returned %+v", recorded, prev)
	}
	if _, err := rtts(t, p, 5); err != nil {
		t.Fatalf("through the ifb: %v", err)
	}
	// The requests went through the ifb's qdisc.
	if st, err := QdiscStats(p.b, prev.Device()); err != nil || st.Packets < 5 {
		t.Errorf("ifb's stand-in passed %+v (%v), want the 5 requests", st, err)
	}
	if _, err := ingress(p.b, "b0", nil, func(string, int) error { return nil }); err == nil || !strings.Contains(err.Error(), "already has qdisc ingress on its ingress hook (left by a crashed run? `cnibench cleanup`)") {
		t.Errorf("second ingress = %v, want a refusal", err)
	}
	checkIngressReverted(t, p, prev, before)
	if err := Revert(prev); err != nil {
		t.Errorf("second Revert: %v", err)
	}
}

// checkIngressReverted reverts an ingress impairment of p's b0 and checks that
// it left b0's qdiscs as before and no ifb behind.
func checkIngressReverted(t *testing.T, p pair, prev Prev, before []string) {
	t.Helper()
	if err := Revert(prev); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if got := shape(t, p.b, "b0"); !slices.Equal(got, before) {
		t.Errorf("b0 after revert %v, before %v", got, before)
	}
	if _, err := handle(t, p.b).LinkByName(prev.IFB); err == nil {
		t.Errorf("%s left behind", prev.IFB)
	}
}
