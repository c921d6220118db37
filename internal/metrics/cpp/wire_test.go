package cpp

import (
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/ifstats"
)

// Bulk TCP at MTU 1500 carries 1448 B of payload per packet, and a GRO'd
// skb one set of headers for all its segments: 10 skbs of 40 segments
// are 400 packets on the wire, where bytes / MTU said 387 (3.5% too
// few, every cost per packet 3.6% high). Small packets are each one, as
// before.
func TestWirePacketsTakesHeadersOff(t *testing.T) {
	const skbs, segs = 10, 40
	bulk := ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 52 + segs*1448), MTU: 1500}
	if got := wirePackets(bulk); got != skbs*segs {
		t.Errorf("bulk TCP: %v packets, want %d (bytes / MTU says %v)", got, skbs*segs, bulk.WirePackets())
	}
	// Flannel's MTU 1450: 1398 B per segment.
	fl := ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 52 + segs*1398), MTU: 1450}
	if got := wirePackets(fl); got != skbs*segs {
		t.Errorf("bulk TCP at MTU 1450: %v packets, want %d", got, skbs*segs)
	}
	// 1-byte request/response: 67 B frames, one packet each.
	rr := ifstats.Counters{RxPackets: 100_000, RxBytes: 100_000 * 67, MTU: 1500}
	if got := wirePackets(rr); got != 100_000 {
		t.Errorf("small packets: %v, want 100000", got)
	}
	// Unmerged full-sized segments: one packet each, not more.
	full := ifstats.Counters{RxPackets: 500, RxBytes: 500 * 1514, MTU: 1500}
	if got := wirePackets(full); got != 500 {
		t.Errorf("unmerged segments: %v, want 500", got)
	}
	if got := wirePackets(ifstats.Counters{RxPackets: 7, RxBytes: 9000}); got != 7 {
		t.Errorf("no MTU: %v, want the skb count", got)
	}
}
