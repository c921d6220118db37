package ifstats

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/netns"
)

func TestDeltaAndWirePackets(t *testing.T) {
	a := Counters{RxPackets: 10, RxBytes: 1000, TxPackets: 5}
	b := Counters{RxPackets: 30, RxBytes: 1000 + 3001, TxPackets: 4, MTU: 1500}
	d := Delta(a, b)
	if d.RxPackets != 20 || d.RxBytes != 3001 || d.TxPackets != 0 {
		t.Errorf("%+v", d)
	}
	// 20 small packets (150 B each): each is one on the wire.
	if w := d.WirePackets(); w != 20 {
		t.Errorf("wire packets %v, want 20", w)
	}
	// 10 GRO'd skbs of 30 000 B: 200 packets of the 1500 B MTU.
	if w := (Counters{RxPackets: 10, RxBytes: 300_000, MTU: 1500}).WirePackets(); w != 200 {
		t.Errorf("GRO'd bulk: wire packets %v, want 200", w)
	}
	// 100 000 sockperf round trips of ~80 B frames: bytes / MTU would say
	// 5334 and inflate the cost per packet 19 times.
	if w := (Counters{RxPackets: 100_000, RxBytes: 8_000_000, MTU: 1500}).WirePackets(); w != 100_000 {
		t.Errorf("small packets: wire packets %v, want 100000", w)
	}
}

func TestReadLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create a network namespace")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "cnb-t" + hex.EncodeToString(b) + "-ifstats"
	if err := netns.Add(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.Delete(ns) })
	c, err := Read(netns.Iface{Netns: ns, Name: "lo"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MTU != 65536 {
		t.Errorf("lo mtu %d", c.MTU)
	}
	if _, err := Read(netns.Iface{Netns: ns, Name: "nosuch0"}); err == nil {
		t.Error("missing device read")
	}
}

// A device of this process's namespace (a node's own, which its agent
// reads) is named as ip would be asked for it, not "ip -n  link show".
func TestReadNamesTheCommand(t *testing.T) {
	_, err := Read(netns.Iface{Name: "cnbnosuch0"})
	if err == nil || !strings.HasPrefix(err.Error(), "ip link show cnbnosuch0: ") {
		t.Errorf("missing device of this namespace: %v", err)
	}
}
