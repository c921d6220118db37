package cpp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// readSegment finds the busiest TCP connection's MSS in the device's
// namespace (not the test's) and the smallest MTU of the device's routes
// (Cilium's 1450 on a 1500 device). Root: it creates a namespace.
func TestReadSegmentInNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create a network namespace")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "cnb-t" + hex.EncodeToString(b) + "-cppseg"
	if err := netns.Add(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.Delete(ns) })
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	dev := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "d0", MTU: 1500}, PeerName: "d1"}
	for _, err := range []error{h.LinkSetUp(lo), h.LinkAdd(dev)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	d0, err := h.LinkByName("d0")
	if err != nil {
		t.Fatal(err)
	}
	_, dst, _ := net.ParseCIDR("10.79.0.0/24")
	d1, err := h.LinkByName("d1")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range []netlink.Link{d0, d1} {
		a, _ := netlink.ParseAddr(fmt.Sprintf("10.78.0.%d/24", i+1))
		if err := h.AddrAdd(l, a); err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: d0.Attrs().Index, Dst: dst, MTU: 1450}); err != nil {
		t.Fatal(err)
	}
	// Two connections in the namespace, both over lo (their addresses
	// are local): one from d0's address, whose MSS is lo's, far from
	// either MTU, so finding it proves the sockets were the namespace's;
	// a busier one on 127.0.0.1 with a 1000-byte MSS, which is not on
	// d0's addresses and must not be taken.
	send := func(from, to string, mss, n int) {
		var ln net.Listener
		var cl net.Conn
		if err := netns.Do(ns, func() (err error) {
			if ln, err = net.Listen("tcp", to+":0"); err != nil {
				return err
			}
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Control: func(_, _ string, rc syscall.RawConn) error {
				if mss == 0 {
					return nil
				}
				var serr error
				if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, mss) }); err != nil {
					return err
				}
				return serr
			}}
			cl, err = d.Dial("tcp", ln.Addr().String())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close(); cl.Close() })
		srv, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		done := make(chan struct{})
		go func() { _, _ = io.CopyN(io.Discard, srv, int64(n)); close(done) }()
		if _, err := cl.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	send("10.78.0.1", "10.78.0.2", 0, 2<<20)
	send("127.0.0.1", "127.0.0.1", 1000, 8<<20)
	s, err := readSegment(netns.Iface{Netns: ns, Name: "d0"})
	if err != nil {
		t.Fatal(err)
	}
	if s.PathMTU != 1450 {
		t.Errorf("path MTU %d, want the route's 1450", s.PathMTU)
	}
	// lo's MSS is 65483, or half the peer's window while that is
	// small (32768 early on): far above any MTU here either way.
	if s.SndMSS <= 1500 {
		t.Errorf("snd_mss %d, want lo's (up to 65483) of the connection on d0's address, not the 127.0.0.1 one's 1000", s.SndMSS)
	}
}

// busiest takes the MSS of the connection that carried the most bytes,
// among bulk ones (minBulkBytes) on the device's addresses: iperf3's
// control connection beside a UDP test (a few kB, rcv_mss still 536) is
// not it, so the segment falls back to the path MTU (1448 B at 1500)
// instead of counting 2.6 times the packets; a loopback connection on a
// hostNetwork node is not either.
func TestBusiestBulkConnectionOnTheDevice(t *testing.T) {
	pod := net.ParseIP("10.0.1.5")
	control := conn{local: pod, bytes: 4 << 10, snd: 1448, rcv: 536}
	loop := conn{local: net.ParseIP("127.0.0.1"), bytes: 1 << 30, snd: 65483, rcv: 65483}
	data := conn{local: net.ParseIP("::ffff:10.0.1.5"), bytes: 64 << 20, snd: 1398, rcv: 1398}
	for _, c := range []struct {
		name     string
		conns    []conn
		addrs    []net.IP
		snd, rcv int
	}{
		{"UDP test: only the control connection", []conn{control}, []net.IP{pod}, 0, 0},
		{"bulk TCP beside control and loopback, v4-mapped", []conn{control, loop, data}, []net.IP{pod}, 1398, 1398},
		{"no device address: any bulk connection", []conn{control, data}, nil, 1398, 1398},
		{"another address only", []conn{loop}, []net.IP{pod}, 0, 0},
	} {
		if snd, rcv := busiest(c.conns, c.addrs); snd != c.snd || rcv != c.rcv {
			t.Errorf("%s: busiest = %d, %d, want %d, %d", c.name, snd, rcv, c.snd, c.rcv)
		}
	}
	snd, rcv := busiest([]conn{control}, []net.IP{pod})
	if size, _ := (segment{SndMSS: snd, RcvMSS: rcv, PathMTU: 1500}).payload(false, 1500); size != 1448 {
		t.Errorf("UDP test's segment payload %d, want the path MTU's 1448", size)
	}
}
