package cpp

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"os"
	"testing"

	"github.com/vishvananda/netlink"

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
	_, dst, _ := net.ParseCIDR("10.78.0.0/24")
	if err := h.LinkSetUp(d0); err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: d0.Attrs().Index, Dst: dst, MTU: 1450}); err != nil {
		t.Fatal(err)
	}
	// A connection over lo in the namespace: its MSS is lo's, far from
	// either MTU, so finding it proves the sockets were the namespace's.
	var ln net.Listener
	var cl net.Conn
	if err := netns.Do(ns, func() (err error) {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		cl, err = net.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	defer cl.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	if _, err := cl.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
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
		t.Errorf("snd_mss %d, want lo's (up to 65483)", s.SndMSS)
	}
}
