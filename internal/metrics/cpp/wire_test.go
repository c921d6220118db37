package cpp

import (
	"net"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
)

// Bulk TCP at MTU 1500 carries 1448 B of payload per packet, and a GRO'd
// skb one set of headers for all its segments: 10 skbs of 40 segments
// are 400 packets on the wire, where bytes / MTU said 387 (3.5% too
// few, every cost per packet 3.6% high). Small packets are each one, as
// before.
func TestWirePacketsTakesHeadersOff(t *testing.T) {
	const skbs, segs = 10, 40
	bulk := ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 52 + segs*1448), MTU: 1500}
	if got := wirePackets(bulk, segment{}, false); got != skbs*segs {
		t.Errorf("bulk TCP: %v packets, want %d (bytes / MTU says %v)", got, skbs*segs, bulk.WirePackets())
	}
	// Flannel's MTU 1450: 1398 B per segment.
	fl := ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 52 + segs*1398), MTU: 1450}
	if got := wirePackets(fl, segment{}, false); got != skbs*segs {
		t.Errorf("bulk TCP at MTU 1450: %v packets, want %d", got, skbs*segs)
	}
	// 1-byte request/response: 67 B frames, one packet each.
	rr := ifstats.Counters{RxPackets: 100_000, RxBytes: 100_000 * 67, MTU: 1500}
	if got := wirePackets(rr, segment{SndMSS: 1448, RcvMSS: 1448, PathMTU: 1500}, false); got != 100_000 {
		t.Errorf("small packets: %v, want 100000", got)
	}
	// Unmerged full-sized segments: one packet each, not more.
	full := ifstats.Counters{RxPackets: 500, RxBytes: 500 * 1514, MTU: 1500}
	if got := wirePackets(full, segment{}, false); got != 500 {
		t.Errorf("unmerged segments: %v, want 500", got)
	}
	if got := wirePackets(ifstats.Counters{RxPackets: 7, RxBytes: 9000}, segment{}, false); got != 7 {
		t.Errorf("no MTU: %v, want the skb count", got)
	}
}

// The segment size is the connection's MSS, not the device MTU - 52:
// real Cilium pods have eth0 at 1500 and 1450 on the route (1398 B
// segments, 3.5% more packets than 1448 B ones), and with TCP
// timestamps off a segment carries 1460 B.
func TestWirePacketsUsesMSS(t *testing.T) {
	const skbs, segs = 10, 40
	cilium := ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 52 + segs*1398), MTU: 1500}
	cases := []struct {
		name string
		d    ifstats.Counters
		seg  segment
		tx   bool
	}{
		{"cilium, receiving: rcv_mss", cilium, segment{SndMSS: 1398, RcvMSS: 1398, PathMTU: 1450}, false},
		{"cilium, sending: snd_mss", cilium, segment{SndMSS: 1398, RcvMSS: 536, PathMTU: 1450}, true},
		{"cilium, no connection: route MTU", cilium, segment{PathMTU: 1450}, false},
		{"cilium, route unread: MSS alone", cilium, segment{RcvMSS: 1398}, false},
		{"timestamps off", ifstats.Counters{RxPackets: skbs, RxBytes: skbs * (14 + 40 + segs*1460), MTU: 1500},
			segment{SndMSS: 1460, RcvMSS: 1460, PathMTU: 1500}, false},
	}
	for _, c := range cases {
		if got := wirePackets(c.d, c.seg, c.tx); got != skbs*segs {
			t.Errorf("%s: %v packets, want %d", c.name, got, skbs*segs)
		}
	}
}

// A timed workload's connections are read at Start (open for sure after
// the warm-up); Stop reads again only a device with no MSS yet (a task's
// connection may open after Start), and a later failure does not erase
// the path MTU read before.
func TestReadSegmentsKeepsStartMSS(t *testing.T) {
	reads := []segment{{SndMSS: 1398, RcvMSS: 1398, PathMTU: 1450}, {}}
	r := &Recorder{Ifaces: []netns.Iface{{Name: "eth0"}}}
	r.segmentOf = func(netns.Iface) (segment, error) {
		s := reads[0]
		reads = reads[1:]
		return s, nil
	}
	r.segs = make([]segment, 1)
	r.readSegments()
	r.readSegments()
	if r.segs[0].RcvMSS != 1398 || len(reads) != 1 {
		t.Errorf("segment %+v after %d reads, want Start's, read once", r.segs[0], 2-len(reads))
	}
	reads = []segment{{PathMTU: 1450}, {}, {RcvMSS: 1410, PathMTU: 1450}}
	r.segs = make([]segment, 1)
	r.readSegments()
	r.readSegments()
	if r.segs[0].PathMTU != 1450 {
		t.Errorf("an empty second read erased the path MTU: %+v", r.segs[0])
	}
	r.readSegments()
	if r.segs[0].RcvMSS != 1410 {
		t.Errorf("a task's MSS read at Stop was not kept: %+v", r.segs[0])
	}
}

// Cilium's bpf_redirect_peer left a pod's eth0 RX counters at about 0
// before Linux 6.8: a receiving server's busier direction was then its
// ACKs (one per GRO'd skb), and every cost per packet was divided by
// them, 20 to 45 times too high. The sockets on the device count the
// data segments whatever its counters say, and their count is the one
// where it is more than 1.5 times the device's; elsewhere the device's
// stands (a control connection, ARP and ACKs make the two differ a
// little, and a task's closed connections are not seen).
func TestSocketsCountWhatTheDeviceMissed(t *testing.T) {
	const segs, acks = 45_000, 1_000
	before := flows{"a": {acked: 100, received: 10_000 * 1398, snd: 1398, rcv: 1398}}
	after := flows{
		"a": {acked: 100 + 5, received: (10_000 + segs) * 1398, snd: 1398, rcv: 1398},
		// iperf3's control connection, new in the window.
		"ctl": {acked: 300, received: 200, snd: 1398, rcv: 536},
		// A connection gone by the end is not seen; one whose counts
		// went back (a reused 4-tuple) counts nothing.
		"reused": {acked: 10, received: 10, snd: 1398, rcv: 1398},
	}
	before["reused"] = conn{acked: 1e9, received: 1e9}
	s := after.segmentsSince(before)
	if s != segs+1 {
		t.Errorf("sockets: %v segments, want %d (the bulk flow's and the control connection's one)", s, segs+1)
	}
	// The device counted only the ACKs the server sent.
	ackOnly := ifstats.Counters{TxPackets: acks, TxBytes: acks * 66, MTU: 1450}
	ackOnly.RxBytes, ackOnly.RxPackets = ackOnly.TxBytes, ackOnly.TxPackets
	dev := wirePackets(ackOnly, segment{SndMSS: 1398, RcvMSS: 1398, PathMTU: 1450}, true)
	if got := packetsOf(dev, s); got != s {
		t.Errorf("device %v (ACKs), sockets %v: counted %v, want the sockets'", dev, s, got)
	}
	if got := packetsOf(segs, segs*1.2); got != segs {
		t.Errorf("sockets 1.2 times the device's: counted %v, want the device's %d", got, segs)
	}
	if got := (flows{}).segmentsSince(nil); got != 0 {
		t.Errorf("no flows read: %v", got)
	}
}

// A connection to the device's own address goes over the loopback (both
// pods of a host-network node, Cilium's socket balancer sending a pod to
// itself): counted, its 64 KB segments made a plausible cost per
// packet where the device, rightly, counted none.
func TestFlowsCrossTheDevice(t *testing.T) {
	pod, peer := net.ParseIP("10.0.0.2"), net.ParseIP("10.0.1.2")
	addrs := []net.IP{pod}
	for _, c := range []struct {
		name string
		c    conn
		want bool
	}{
		{"to the peer", conn{local: pod, remote: peer, snd: 1398, rcv: 1398}, true},
		{"to itself", conn{local: pod, remote: pod, snd: 1398, rcv: 1398}, false},
		{"loopback segments", conn{local: pod, remote: peer, snd: 65483, rcv: 65483}, false},
		{"another address", conn{local: peer, remote: pod, snd: 1398, rcv: 1398}, false},
	} {
		if got := crosses(c.c, addrs, 1450); got != c.want {
			t.Errorf("%s: crosses %v, want %v", c.name, got, c.want)
		}
	}
}
