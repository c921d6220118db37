package advise

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// irq-spread advised "ethtool -L <dev> combined N" for every driver; one
// with separate receive and transmit channels (mlx4_en, sfc with
// separate_tx_channels) reports max combined 0 and refuses it. The form
// now follows ethtool -l's maximums, and says both where they are
// unknown.
func TestIRQSpreadChannelsForm(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ch   *inspect.Channels
		want string
	}{
		{&inspect.Channels{MaxCombined: 8, Combined: 8}, "ethtool -L eth2 combined 4, fewer"},
		{&inspect.Channels{MaxRX: 16, MaxTX: 16, RX: 8, TX: 8}, "ethtool -L eth2 rx 4 tx 4, fewer"},
		{&inspect.Channels{MaxRX: 16, RX: 8}, "ethtool -L eth2 rx 4, fewer"},
		{nil, "ethtool -L eth2 combined 4 (or rx 4 tx 4 where ethtool -l eth2 shows no combined channels), fewer"},
		{&inspect.Channels{}, "ethtool -L eth2 combined 4 (or rx 4 tx 4 where ethtool -l eth2 shows no combined channels), fewer"},
	} {
		in := queueNode(t, "0-3", "eth2-rx-0", "eth2-rx-1", "eth2-rx-2", "eth2-rx-3", "eth2-rx-4", "eth2-rx-5", "eth2-rx-6", "eth2-rx-7")
		in.NICs[0].Channels = c.ch
		got := Evaluate(rs[0], in)
		if got.Status != Candidate {
			t.Fatalf("%+v: %s %q", c.ch, got.Status, got.Why)
		}
		if a := got.Knobs[0].Params["affinity"]; !strings.Contains(a, "(8 receive queues on 4 cores: "+c.want) {
			t.Errorf("%+v: %s\nwant %s", c.ch, a, c.want)
		}
	}
}

// ethtoolL is `ethtool -l eth2` as ethtool prints it: maximums, then
// current settings, each RX, TX, Other, Combined.
func ethtoolL(t *testing.T, maxRX, maxTX, maxComb, rx, tx, comb int) *inspect.Channels {
	t.Helper()
	ch, err := inspect.ParseChannels([]byte(fmt.Sprintf("Channel parameters for eth2:\n"+
		"Pre-set maximums:\nRX:\t\t%d\nTX:\t\t%d\nOther:\t\t1\nCombined:\t%d\n"+
		"Current hardware settings:\nRX:\t\t%d\nTX:\t\t%d\nOther:\t\t1\nCombined:\t%d\n", maxRX, maxTX, maxComb, rx, tx, comb)))
	if err != nil {
		t.Fatal(err)
	}
	return &ch
}

// setChannels chose its form from the maximums alone and never looked
// at the current count: bnxt and qede report max combined and max rx/tx
// both, so a port set to rx/tx got "combined N" (refused, or leaving its
// rx/tx channels), qede's receive-only channels beside combined ones
// stayed, and a port already at N or fewer was told to lower to N. The
// form now follows the current settings; none is advised where they are
// at the cores' count already (8 receive interrupts, 4 cores).
func TestIRQSpreadChannelsCurrent(t *testing.T) {
	rs, err := Lookup("irq-spread")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		ch   *inspect.Channels
		want string // "" for no ethtool -L
	}{
		{"bnxt rx/tx", ethtoolL(t, 9, 9, 9, 8, 8, 0), "ethtool -L eth2 rx 4 tx 4"},
		{"bnxt combined", ethtoolL(t, 9, 9, 9, 0, 0, 8), "ethtool -L eth2 combined 4"},
		{"qede combined and rx-only", ethtoolL(t, 16, 16, 16, 2, 0, 6), "ethtool -L eth2 combined 4 rx 0"},
		{"ice combined, rx-only and tx-only", ethtoolL(t, 16, 16, 16, 1, 1, 7), "ethtool -L eth2 combined 4 rx 0 tx 0"},
		{"combined beyond its maximum", ethtoolL(t, 3, 3, 3, 3, 0, 3), "ethtool -L eth2 combined 3 rx 0"},
		{"combined at the cores' count", ethtoolL(t, 0, 0, 8, 0, 0, 4), ""},
		{"combined and rx-only at it", ethtoolL(t, 16, 16, 16, 1, 0, 3), ""},
		{"rx/tx below it", ethtoolL(t, 8, 8, 0, 2, 2, 0), ""},
		{"current unread", &inspect.Channels{MaxRX: 9, MaxTX: 9, MaxCombined: 9}, "ethtool -L eth2 combined 4"},
	} {
		in := queueNode(t, "0-3", "eth2-rx-0", "eth2-rx-1", "eth2-rx-2", "eth2-rx-3", "eth2-rx-4", "eth2-rx-5", "eth2-rx-6", "eth2-rx-7")
		in.NICs[0].Channels = c.ch
		got := Evaluate(rs[0], in)
		if got.Status != Candidate {
			t.Fatalf("%s: %s %q", c.what, got.Status, got.Why)
		}
		want := "over CPUs 0-3"
		if c.want != "" {
			want += " (8 receive queues on 4 cores: " + c.want + ", fewer queues than now, would give each queue a core of its own, as scaling.rst suggests)"
		}
		if a := got.Knobs[0].Params["affinity"]; !strings.HasSuffix(a, want) {
			t.Errorf("%s: %s\nwant %s", c.what, a, want)
		}
	}
}
