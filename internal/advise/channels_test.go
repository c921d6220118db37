package advise

import (
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
