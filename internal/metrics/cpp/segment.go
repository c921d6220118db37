package cpp

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
)

// Header bytes of a TCP/IPv4 segment beyond its payload: the Ethernet
// header (in a device's byte count, not in its MTU) and the IPv4 and TCP
// headers with timestamps (Linux's default), so a full segment's payload
// is MTU - 52 (1448 at 1500) when nothing better is known.
const (
	ethHeader    = 14
	ipTCPHeaders = 20 + 20 + 12
	// minHeaders and maxHeaders bound what path MTU - MSS can be (IPv4
	// and TCP without options; IPv6 with TCP options): outside them the
	// two do not describe one path, and the default is used.
	minHeaders, maxHeaders = 40, 100
	// minBulkBytes is what a connection must have carried (acked plus
	// received) to be the measured traffic: iperf3's control connection
	// beside a UDP test carries a few kB, and its rcv_mss is still the
	// kernel's first guess of 536 B (TCP_MIN_RCVMSS), which counted 2.6
	// times the packets the device carried.
	minBulkBytes = 1 << 20
)

// segment is what a device's full-sized TCP segments carry, read while
// the measured connections are open.
type segment struct {
	// SndMSS and RcvMSS are the busiest bulk TCP connection's (busiest)
	// on the device's addresses: the payload of the
	// segments it sends and the largest it has received (the kernel's
	// tcpi_rcv_mss, measured from GRO'd skbs' gso_size). 0: unknown.
	SndMSS, RcvMSS int
	// PathMTU is the smallest MTU of the device's routes, or the
	// device's own MTU where no route sets one. 0: unknown.
	PathMTU int
}

// payload is the payload of a full segment and the header bytes of each
// skb on the device, for the busier direction (tx: the namespace sends).
// The measured connection's MSS is what its segments carry whatever set
// it: the segment size need not be the device MTU - 52. Real Cilium pods
// have eth0 at 1500 and the tunnel's 1450 on the default route only
// (docs/datapaths-advanced.md), so their segments carry 1398 B where the
// device MTU says 1448 (3.5% too few packets); with TCP timestamps off a
// segment carries MTU - 40 (1460 at 1500); an mss option sets its own.
// Without a connection (it closed before the window did, or its
// namespace hides its sockets) the path MTU - 52 is the best guess: the
// route's MTU, not the device's, is what TCP sizes segments from.
func (s segment) payload(tx bool, devMTU int) (payload, headers int) {
	mss := s.RcvMSS
	if tx || mss == 0 {
		mss = s.SndMSS
	}
	if tx && mss == 0 {
		mss = s.RcvMSS
	}
	mtu := s.PathMTU
	if mtu <= 0 {
		mtu = devMTU
	}
	if mss > 0 {
		headers = ipTCPHeaders
		if h := mtu - mss; h >= minHeaders && h <= maxHeaders {
			headers = h
		}
		return mss, ethHeader + headers
	}
	if mtu <= ipTCPHeaders {
		return 0, 0
	}
	return mtu - ipTCPHeaders, ethHeader + ipTCPHeaders
}

// wirePackets counts the packets a wire would have carried for a
// device's counters d (the busier direction's in Rx*; tx when that is
// the device's sending side): the skb count or the full-sized TCP
// segments the bytes make, the larger (small packets are not merged,
// bulk TCP is). A GRO'd or GSO'd skb holds many segments' payloads under
// one set of headers, each of which carries its own on the wire: the
// skbs' headers are taken off the bytes and the rest divided by a
// segment's payload (segment.payload). Bytes / MTU (ifstats.WirePackets)
// counted payloads of 1448 B as 1500 and 3.5% too few packets, each
// component's cost per packet 3.6% high beside seed 004's cycles over the
// packets sent.
func wirePackets(d ifstats.Counters, seg segment, tx bool) float64 {
	size, headers := seg.payload(tx, d.MTU)
	if size <= 0 {
		return d.WirePackets()
	}
	payload := float64(d.RxBytes) - float64(d.RxPackets)*float64(headers)
	return max(float64(d.RxPackets), math.Ceil(payload/float64(size)))
}

// readSegment reads a device's segment: the MSS of the busiest bulk TCP
// connection on the device's addresses in its namespace (sock_diag, both
// families: a dual-stack listener's IPv4 connections are AF_INET6
// sockets; busiest) and its routes' smallest MTU. What cannot be read
// stays 0 (the error says why).
func readSegment(ifc netns.Iface) (segment, error) {
	var s segment
	mtu, addrs, rerr := deviceFacts(ifc)
	s.PathMTU = mtu
	conns, derr := tcpConns(ifc)
	s.SndMSS, s.RcvMSS = busiest(conns, addrs)
	return s, errors.Join(derr, rerr)
}

// tcpConns are the TCP connections of ifc's namespace (sock_diag, both
// families: a dual-stack listener's IPv4 connections are AF_INET6
// sockets).
func tcpConns(ifc netns.Iface) ([]conn, error) {
	var conns []conn
	err := netns.Do(ifc.Netns, func() error {
		var errs error
		for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
			// An interrupted dump (the table changed while it was read)
			// is partial: the error says so, readFlows drops it, and
			// readSegment, which wants one busy connection, uses it.
			socks, err := netlink.SocketDiagTCPInfo(fam)
			if err != nil {
				errs = errors.Join(errs, err)
			}
			for _, c := range socks {
				if c.TCPInfo == nil || c.InetDiagMsg == nil {
					continue
				}
				id := c.InetDiagMsg.ID
				conns = append(conns, conn{local: id.Source, remote: id.Destination, bytes: c.TCPInfo.Bytes_acked + c.TCPInfo.Bytes_received,
					acked: c.TCPInfo.Bytes_acked, received: c.TCPInfo.Bytes_received,
					snd: int(c.TCPInfo.Snd_mss), rcv: int(c.TCPInfo.Rcv_mss),
					id: fmt.Sprintf("%s:%d-%s:%d", id.Source, id.SourcePort, id.Destination, id.DestinationPort)})
			}
		}
		return errs
	})
	if err != nil {
		err = fmt.Errorf("TCP connections in %q: %w", ifc.Netns, err)
	}
	return conns, err
}

// conn is what readSegment and readFlows need of a TCP connection.
type conn struct {
	local    net.IP
	remote   net.IP
	id       string // local and remote address and port
	bytes    uint64 // acked plus received, over its life
	acked    uint64 // tcpi_bytes_acked: data sent and acked
	received uint64 // tcpi_bytes_received
	snd, rcv int    // tcpi_snd_mss, tcpi_rcv_mss
}

// busiest is the MSS of the connection that carried the most bytes among
// those bound to one of addrs (any, when the device has none) that
// carried minBulkBytes; 0, 0 if none did. Other addresses' connections
// do not cross the device: on a hostNetwork pod's node, loopback ones
// (MSS 65483) may be the namespace's busiest.
func busiest(conns []conn, addrs []net.IP) (snd, rcv int) {
	var best uint64
	for _, c := range conns {
		if c.bytes < minBulkBytes || c.bytes <= best || (len(addrs) > 0 && !slices.ContainsFunc(addrs, c.local.Equal)) {
			continue
		}
		best, snd, rcv = c.bytes, c.snd, c.rcv
	}
	return snd, rcv
}

// deviceFacts is the smallest MTU of ifc's routes (ip route show dev DEV:
// Cilium's default route carries the tunnel's), else the device's, and
// the device's addresses.
func deviceFacts(ifc netns.Iface) (int, []net.IP, error) {
	h, err := netns.Handle(ifc.Netns)
	if err != nil {
		return 0, nil, err
	}
	defer h.Close()
	l, err := h.LinkByName(ifc.Name)
	if err != nil {
		return 0, nil, fmt.Errorf("link %s: %w", ifc.Name, err)
	}
	mtu := l.Attrs().MTU
	var errs error
	as, err := netns.Dump(func() ([]netlink.Addr, error) { return h.AddrList(l, netlink.FAMILY_ALL) })
	if err != nil {
		errs = fmt.Errorf("addresses of %s: %w", ifc.Name, err)
	}
	addrs := make([]net.IP, 0, len(as))
	for _, a := range as {
		addrs = append(addrs, a.IP)
	}
	routes, err := netns.Dump(func() ([]netlink.Route, error) { return h.RouteList(l, netlink.FAMILY_ALL) })
	if err != nil {
		return mtu, addrs, errors.Join(errs, fmt.Errorf("routes of %s: %w", ifc.Name, err))
	}
	for _, r := range routes {
		if r.MTU > 0 && r.MTU < mtu {
			mtu = r.MTU
		}
	}
	return mtu, addrs, errs
}
