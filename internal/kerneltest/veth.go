package kerneltest

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// VethPair joins namespaces a and b by a veth (a0 with ipA/24, b0 with
// ipB/24, both up, lo too), with the wiring steps the datapaths use: the
// two-namespace path of the pktgen and CPU-cost kernel tests.
func VethPair(t testing.TB, a, b string, ipA, ipB net.IP) {
	t.Helper()
	ha, err := netns.Handle(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	hb, err := netns.Handle(b)
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	la, err := wire.VethIntoPod(ha, hb, "a0", "b0", 1500)
	if err == nil {
		err = wire.AddrAdd(ha, la, ipA, 24)
	}
	var lb netlink.Link
	if err == nil {
		lb, err = wire.Up(hb, "b0")
	}
	if err == nil {
		err = wire.AddrAdd(hb, lb, ipB, 24)
	}
	if err == nil {
		_, err = wire.Up(ha, "a0") // and lo
	}
	if err != nil {
		t.Fatal(err)
	}
}
