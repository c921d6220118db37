package underlaypod

import (
	"encoding/json"
	"net"
	"testing"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
)

func node(i int) datapath.Node {
	return datapath.Node{Name: "n", Index: i, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, byte(i+1)), UnderlayMTU: 1500}
}

// TestCNIConfigMatchesAttach checks that host-local, given the
// configuration, hands out the addresses Attach uses, in order, with the
// same gateway, and that the child is made as Attach makes it.
func TestCNIConfigMatchesAttach(t *testing.T) {
	for _, idx := range []int{0, 1, 2} {
		n := node(idx)
		b, err := CNIConfig(cniconf.TypeIPVlan, "l2", n, 1500)
		if err != nil {
			t.Fatalf("node %d: %v", idx, err)
		}
		var l struct {
			CNIVersion string             `json:"cniVersion"`
			Name       string             `json:"name"`
			Plugins    []cniconf.Underlay `json:"plugins"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		if l.CNIVersion != cniconf.Version || l.Name != "ipvlan" || len(l.Plugins) != 1 {
			t.Fatalf("list %s", b)
		}
		p := l.Plugins[0]
		if p.Type != "ipvlan" || p.Master != "eth1" || p.Mode != "l2" || p.MTU != 1500 || p.IPAM.Type != "host-local" {
			t.Errorf("node %d: plugin %+v", idx, p)
		}
		first, _ := PodIP(n, 0)
		last, _ := PodIP(n, MaxPods-1)
		want := cniconf.Range{Subnet: "198.18.0.0/24", RangeStart: first.String(), RangeEnd: last.String(), Gateway: Gateway.String()}
		if len(p.IPAM.Ranges) != 1 || len(p.IPAM.Ranges[0]) != 1 || p.IPAM.Ranges[0][0] != want {
			t.Errorf("node %d: ranges %+v, want [[%+v]]", idx, p.IPAM.Ranges, want)
		}
		if len(p.IPAM.Routes) != 1 || p.IPAM.Routes[0] != (cniconf.Route{Dst: "0.0.0.0/0"}) {
			t.Errorf("node %d: routes %+v, want the default route via the range's gateway", idx, p.IPAM.Routes)
		}
	}
	if want := "198.18.0.150"; mustPodIP(t, node(1), 0) != want {
		t.Errorf("node 1 pod 0 = %s, want %s", mustPodIP(t, node(1), 0), want)
	}
	if _, err := CNIConfig(cniconf.TypeMacvlan, "bridge", node(3), 1500); err == nil {
		t.Error("a fourth node got a range beyond the underlay's room")
	}
}

func mustPodIP(t *testing.T, n datapath.Node, i int) string {
	t.Helper()
	ip, err := PodIP(n, i)
	if err != nil {
		t.Fatal(err)
	}
	return ip.String()
}
