package lbmap

import (
	"net"
	"testing"
	"unsafe"

	"github.com/cnibench/cnibench/internal/netfilter"
)

// Layout lays two Services with a shared backend out as Cilium's maps
// do: master (count, rev-NAT index), then one slot per endpoint; the
// shared backend gets one id.
func TestEntriesLayout(t *testing.T) {
	a, b := net.ParseIP("10.0.0.1"), net.ParseIP("10.0.0.2")
	svcs := []netfilter.Service{
		{Name: "x", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 53, Endpoints: []netfilter.Endpoint{{IP: a, Port: 53}, {IP: b, Port: 53}}},
		{Name: "y", Protocol: "udp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 53, Endpoints: []netfilter.Endpoint{{IP: a, Port: 53}}},
	}
	sk, sv, bk, bv, err := Layout(svcs)
	if err != nil {
		t.Fatal(err)
	}
	if len(sk) != 5 || len(sv) != 5 {
		t.Fatalf("%d Service entries, want 2 masters + 3 slots", len(sk))
	}
	// tcp and udp backends on the same address and port differ in proto.
	if len(bk) != 3 || len(bv) != 3 {
		t.Fatalf("%d backends, want 3", len(bk))
	}
	if sk[0].BackendSlot != 0 || sv[0].Count != 2 || sv[0].RevNATIndex != 1 {
		t.Errorf("first master %+v %+v", sk[0], sv[0])
	}
	if sk[2].BackendSlot != 2 || sv[2].BackendID != 2 {
		t.Errorf("second slot %+v %+v", sk[2], sv[2])
	}
	if sk[3].Proto != 17 || sv[3].RevNATIndex != 2 {
		t.Errorf("udp master %+v %+v", sk[3], sv[3])
	}
	// network byte order in memory: 10.96.0.10 port 53
	if b := []byte{byte(sk[0].Address), byte(sk[0].Address >> 8), byte(sk[0].Address >> 16), byte(sk[0].Address >> 24)}; net.IP(b).String() != "10.96.0.10" {
		t.Errorf("address bytes %v", b)
	}
	if p := []byte{byte(sk[0].Dport), byte(sk[0].Dport >> 8)}; p[0] != 0 || p[1] != 53 {
		t.Errorf("port bytes %v", p)
	}
}

func TestEntriesRefuse(t *testing.T) {
	for _, s := range []netfilter.Service{
		{Name: "v6", Protocol: "tcp", ClusterIP: net.ParseIP("fd00::1"), Port: 80},
		{Name: "sctp", Protocol: "sctp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 80},
		{Name: "ep6", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 80, Endpoints: []netfilter.Endpoint{{IP: net.ParseIP("fd00::2"), Port: 80}}},
	} {
		if _, _, _, _, err := Layout([]netfilter.Service{s}); err == nil {
			t.Errorf("%s: accepted", s.Name)
		}
	}
}

// The Go structs are lb4.h's byte for byte (what the maps' key and
// value sizes check when a program object loads).
func TestSizes(t *testing.T) {
	if k, s, b := unsafe.Sizeof(Key{}), unsafe.Sizeof(Service{}), unsafe.Sizeof(Backend{}); k != 12 || s != 8 || b != 8 {
		t.Errorf("sizes key %d, service %d, backend %d; want 12, 8, 8", k, s, b)
	}
}
