package impair

import (
	"errors"
	"strings"
	"testing"

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
