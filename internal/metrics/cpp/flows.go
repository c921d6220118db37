package cpp

import (
	"math"
	"net"
	"slices"

	"github.com/cnibench/cnibench/internal/netns"
)

// Why the sockets are counted too: a device's counters can miss the
// packets that cross it. Cilium hands a pod its packets with
// bpf_redirect_peer, which before Linux 6.8 (commit 024ee930cb3c, "bpf:
// Fix dev's rx stats for bpf_redirect_peer traffic"; cilium/cilium#21496)
// left the pod's eth0 RX counters at about 0. The busier direction of a
// receiving server's eth0 was then its ACKs, and every cost per packet
// was divided by one ACK per GRO'd skb: 20 to 45 times too high, with
// nothing to say so. The TCP sockets on the device's addresses count
// what they sent and received whatever the device's counters say.

// flows are the data byte counts of the TCP connections on a device's
// addresses, by connection.
type flows map[string]conn

// readFlows reads ifc's flows: the connections on its addresses that
// cross it, not those to one of its own addresses (over the loopback:
// both pods in a host-network node, Cilium's socket balancer sending a
// pod to itself), whose segments are the loopback's (an MSS above what
// the path's MTU carries). Any error, a dump cut short by a change of
// the table included, leaves no flows: a connection missing at the
// window's start would count its whole life as the window's.
func readFlows(ifc netns.Iface) (flows, error) {
	mtu, addrs, err := deviceFacts(ifc)
	if err != nil {
		return nil, err
	}
	conns, err := tcpConns(ifc)
	if err != nil {
		return nil, err
	}
	out := flows{}
	for _, c := range conns {
		if crosses(c, addrs, mtu) {
			out[c.id] = c
		}
	}
	return out, nil
}

// crosses says whether connection c crosses a device of addresses addrs
// (none: any) and path MTU mtu (0: unknown): it is on one of them, to
// none of them, with segments the path carries.
func crosses(c conn, addrs []net.IP, mtu int) bool {
	mine := len(addrs) == 0 || slices.ContainsFunc(addrs, c.local.Equal)
	loop := slices.ContainsFunc(addrs, c.remote.Equal) || mtu > 0 && max(c.snd, c.rcv) > mtu-minHeaders
	return mine && !loop
}

// segmentsSince is how many data segments the flows carried since
// before (the same device's flows at the window's start; a connection
// new since then counts whole, one gone by then is not seen) in the
// busier direction, each connection's bytes over its own MSS: the
// device's wirePackets as the sockets see it. 0 where either end was
// not read (nil).
func (f flows) segmentsSince(before flows) float64 {
	if f == nil || before == nil {
		return 0
	}
	var sent, recv float64
	for id, c := range f {
		b := before[id]
		if c.snd > 0 && c.acked >= b.acked {
			sent += math.Ceil(float64(c.acked-b.acked) / float64(c.snd))
		}
		if c.rcv > 0 && c.received >= b.received {
			recv += math.Ceil(float64(c.received-b.received) / float64(c.rcv))
		}
	}
	return max(sent, recv)
}

// socketShare is how many times the device's count the sockets' must be
// for the device's counters to be taken as missing packets: on a device
// that counts them the two agree within a few percent (the sockets see
// only the measured TCP; ACKs, ARP and a control connection are small).
const socketShare = 1.5

// packetsOf is the window's packet count on one device: the device's
// (wirePackets), unless its sockets carried more than socketShare times
// that, when its counters missed them (see above) and the sockets'
// count is the one.
func packetsOf(device, sockets float64) float64 {
	if sockets > socketShare*device {
		return sockets
	}
	return device
}
