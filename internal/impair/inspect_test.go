package impair

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
)

func tbfOptions(limit uint32) []byte {
	o := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	q := nl.TcTbfQopt{Limit: limit}
	o.AddRtAttr(nl.TCA_TBF_PARMS, q.Serialize())
	return o.Serialize()[4:]
}

// TestInspect: where netem goes and what revert restores, decided from
// the qdiscs a device has, without a kernel.
func TestInspect(t *testing.T) {
	root := uint32(netlink.HANDLE_ROOT)
	one := netlink.MakeHandle(1, 0)
	oneOne := netlink.MakeHandle(1, 1)
	tests := []struct {
		name string
		qs   []qdisc
		want Prev
	}{
		{"veth's noqueue", []qdisc{{Kind: "noqueue", Parent: root}},
			Prev{Kind: "noqueue", Default: true, Parent: root}},
		{"tun's default fq_codel", []qdisc{{Kind: "fq_codel", Parent: root}},
			Prev{Kind: "fq_codel", Default: true, Parent: root}},
		{"mq with its default children", []qdisc{{Kind: "mq", Parent: root}, {Kind: "fq_codel", Parent: netlink.MakeHandle(0, 1)}},
			Prev{Kind: "mq", Default: true, Parent: root}},
		{"default root beside an ingress qdisc", []qdisc{{Kind: "fq_codel", Parent: root}, {Kind: "ingress", Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_INGRESS}},
			Prev{Kind: "fq_codel", Default: true, Parent: root}},
		{"device never up", nil, Prev{Kind: "none", Default: true, Parent: root}},
		{"the engine's tbf shaper, hidden inner queue", []qdisc{{Kind: "tbf", Handle: one, Parent: root, Options: tbfOptions(2_500_000)}},
			Prev{Kind: "tbf", Handle: one, Parent: oneOne, Child: &Child{Kind: "bfifo", Limit: 2_500_000}}},
		{"tbf with the bfifo a previous revert left", []qdisc{
			{Kind: "tbf", Handle: one, Parent: root, Options: tbfOptions(2_500_000)},
			{Kind: "bfifo", Handle: RestoreHandle, Parent: oneOne, Options: u32s(2_500_000)}},
			Prev{Kind: "tbf", Handle: one, Parent: oneOne, Child: &Child{Kind: "bfifo", Handle: RestoreHandle, Limit: 2_500_000}}},
	}
	// The shaper's rate is kept for netem's queue (shaperLimit), from
	// the parms or, at 2^32 bytes/s and above, TCA_TBF_RATE64.
	withRate := func(rate uint64) []byte {
		o := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
		q := nl.TcTbfQopt{Limit: 3_000_000}
		q.Rate.Rate = uint32(min(rate, 1<<32-1))
		o.AddRtAttr(nl.TCA_TBF_PARMS, q.Serialize())
		if rate >= 1<<32 {
			o.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(rate))
		}
		return o.Serialize()[4:]
	}
	tests = append(tests,
		struct {
			name string
			qs   []qdisc
			want Prev
		}{"tbf at 1 Gbit/s", []qdisc{{Kind: "tbf", Handle: one, Parent: root, Options: withRate(125_000_000)}},
			Prev{Kind: "tbf", Handle: one, Parent: oneOne, Child: &Child{Kind: "bfifo", Limit: 3_000_000}, ShaperRate: 125_000_000}},
		struct {
			name string
			qs   []qdisc
			want Prev
		}{"tbf at 40 Gbit/s", []qdisc{{Kind: "tbf", Handle: one, Parent: root, Options: withRate(5_000_000_000)}},
			Prev{Kind: "tbf", Handle: one, Parent: oneOne, Child: &Child{Kind: "bfifo", Limit: 3_000_000}, ShaperRate: 5_000_000_000}})
	for _, tt := range tests {
		got, err := inspect("ns", "eth1", tt.qs)
		tt.want.Netns, tt.want.Dev = "ns", "eth1"
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if (got.Child == nil) != (tt.want.Child == nil) || got.Child != nil && *got.Child != *tt.want.Child {
			t.Errorf("%s: child %+v, want %+v", tt.name, got.Child, tt.want.Child)
		}
		got.Child, tt.want.Child = nil, nil
		if got != tt.want {
			t.Errorf("%s: %+v\nwant %+v", tt.name, got, tt.want)
		}
	}

	refused := []struct {
		name string
		qs   []qdisc
		want string
	}{
		{"htb root", []qdisc{{Kind: "htb", Handle: one, Parent: root}}, "root qdisc htb 1:, which cnibench cannot restore"},
		{"user's fq_codel with a handle", []qdisc{{Kind: "fq_codel", Handle: netlink.MakeHandle(0x8001, 0), Parent: root}}, "root qdisc fq_codel 8001:"},
		{"netem already there", []qdisc{{Kind: "netem", Handle: NetemHandle, Parent: root}}, "already has a netem root qdisc cb1: (left by a crashed run?"},
		// A user's own netem is no crashed run's: cleanup would not remove it.
		{"user's netem", []qdisc{{Kind: "netem", Handle: netlink.MakeHandle(1, 0), Parent: root}}, "already has a netem root qdisc 1:, not cnibench's; remove it or impair another device: "},
		{"tbf with an htb child", []qdisc{
			{Kind: "tbf", Handle: one, Parent: root, Options: tbfOptions(1000)},
			{Kind: "htb", Handle: netlink.MakeHandle(2, 0), Parent: oneOne}}, "tbf 1: has a htb child 2:, which cnibench does not restore: "},
		// A crashed run's netem under the link-rate tbf says so.
		{"tbf with cnibench's netem", []qdisc{
			{Kind: "tbf", Handle: one, Parent: root, Options: tbfOptions(1000)},
			{Kind: "netem", Handle: NetemHandle, Parent: oneOne}}, "tbf 1: has a netem child cb1:, which cnibench does not restore (left by a crashed run? `cnibench cleanup`)"},
		{"tbf without parameters", []qdisc{{Kind: "tbf", Handle: one, Parent: root}}, "without TCA_TBF_PARMS"},
		{"mq with an admin's fq on queue 1", []qdisc{{Kind: "mq", Parent: root},
			{Kind: "fq", Handle: netlink.MakeHandle(0x8001, 0), Parent: netlink.MakeHandle(0, 1)},
			{Kind: "fq_codel", Parent: netlink.MakeHandle(0, 2)}}, "default root mq has a fq child 8001: set on queue 0:1"},
	}
	for _, tt := range refused {
		_, err := inspect("ns", "eth1", tt.qs)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "device eth1 in netns ns") {
			t.Errorf("%s: %v, want %q naming the device", tt.name, err, tt.want)
		}
		if tt.name != "tbf without parameters" && !errors.Is(err, ErrUnrestorable) {
			t.Errorf("%s: %v does not wrap ErrUnrestorable", tt.name, err)
		}
		if strings.HasPrefix(tt.name, "user's") && err != nil && strings.Contains(err.Error(), "cnibench cleanup") {
			t.Errorf("%s: %v sends the user to cleanup, which leaves a qdisc not cnibench's", tt.name, err)
		}
	}
}

func TestPrevDeviceAndNames(t *testing.T) {
	if d := (Prev{Dev: "eth0"}).Device(); d != "eth0" {
		t.Errorf("Device() = %s", d)
	}
	if d := (Prev{Dev: "eth0", IFB: "cnbifb7"}).Device(); d != "cnbifb7" {
		t.Errorf("Device() = %s", d)
	}
	if n := IFBName(1234567890); len(n) > 15 {
		t.Errorf("IFBName %q is longer than IFNAMSIZ-1", n)
	}
	if handleString(NetemHandle) != "cb1:" || handleString(netlink.MakeHandle(1, 1)) != "1:1" || parentString(netlink.HANDLE_ROOT) != "root" {
		t.Error("handle rendering")
	}
	// Revert of nothing, or in a namespace that is gone, is success.
	if err := Revert(Prev{None: true}); err != nil {
		t.Error(err)
	}
	if err := Revert(Prev{Netns: "cnb-no-such-namespace", Dev: "eth0", Default: true}); err != nil {
		t.Errorf("Revert in a vanished namespace: %v", err)
	}
}

// TestShaperLimit: netem in a shaper's bfifo's place, with no limit
// given, holds the delay's packets at the shaper's rate and the bfifo's
// bytes, each in full-size frames (MTU + Ethernet header); tc's 1000
// would leave the 1 Gbit/s shaper (bfifo 3 MB, 24 ms) about 100 packets
// at delay-low.
func TestShaperLimit(t *testing.T) {
	const rate, bfifo = 125_000_000, 3_000_000 // 1 Gbit/s, wire/shape.go's bfifo
	for _, c := range []struct {
		name string
		s    Spec
		want uint32
	}{
		// 3e6 / 1514 = 1981.5 -> 1982; 125e6 x 11 ms / 1514 = 908.2 -> 909.
		{"delay-low", Spec{Delay: 10 * time.Millisecond, Jitter: time.Millisecond}, 1982 + 909},
		// 125e6 x 550 ms / 1514 = 45 409.5 -> 45 410.
		{"delay-high", Spec{Delay: 500 * time.Millisecond, Jitter: 50 * time.Millisecond}, 1982 + 45410},
		{"loss alone", Spec{Loss: 5}, 1982},
	} {
		if got := shaperLimit(c.s, bfifo, rate, 1500); got != c.want {
			t.Errorf("%s: limit %d, want %d", c.name, got, c.want)
		}
	}
}

// TestPrevInstalled: what a netem gets where Apply found Prev, its queue
// limit said: the one cnibench set under a shaper, else the Spec's own,
// else tc's default; what the run records in env.json.
func TestPrevInstalled(t *testing.T) {
	low := Spec{Delay: 10 * time.Millisecond, Jitter: time.Millisecond, DelayCorrelation: 25}
	for _, c := range []struct {
		name string
		p    Prev
		s    Spec
		want string
	}{
		{"default root", Prev{Default: true}, low, "delay 10ms 1ms 25% limit 1000"},
		{"under the shaper", Prev{Kind: "tbf", Child: &Child{Kind: "bfifo", Limit: 3_000_000}, Limit: 2891}, low, "delay 10ms 1ms 25% limit 2891"},
		{"a limit given", Prev{Default: true}, Spec{Loss: 5, Limit: 5000}, "loss 5% limit 5000"},
		{"nothing installed", Prev{None: true}, Spec{}, "none"},
	} {
		if got := c.p.Installed(c.s).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
