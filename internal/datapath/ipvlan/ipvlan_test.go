package ipvlan

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

// TestCNIConfigModes checks what each mode hands the ipvlan plugin: the
// mode, and in L3 mode the node's own pod subnet with host-local's
// defaults (gateway .1, pods from .2), which AttachPod reproduces.
func TestCNIConfigModes(t *testing.T) {
	cases := []struct {
		d                       *Datapath
		name, mode              string
		subnet, first, last, gw string
		node                    int
	}{
		{New(), "ipvlan", "l2", "198.18.0.0/24", "198.18.0.150", "198.18.0.199", "198.18.0.254", 1},
		{NewL3(), "ipvlan-l3", "l3", "10.244.0.0/24", "10.244.0.2", "10.244.0.251", "10.244.0.1", 0},
		{NewL3(), "ipvlan-l3", "l3", "10.244.1.0/24", "10.244.1.2", "10.244.1.251", "10.244.1.1", 1},
	}
	for _, c := range cases {
		if c.d.Name() != c.name {
			t.Errorf("Name() = %s, want %s", c.d.Name(), c.name)
		}
		b, err := c.d.CNIConfig(node(c.node))
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Plugins []cniconf.Underlay `json:"plugins"`
		}
		if err := json.Unmarshal(b, &l); err != nil || len(l.Plugins) != 1 {
			t.Fatalf("%s: %s: %v", c.name, b, err)
		}
		p := l.Plugins[0]
		if p.Type != "ipvlan" || p.Mode != c.mode || p.Master != "eth1" || p.MTU != 1500 {
			t.Errorf("%s node %d: plugin %+v", c.name, c.node, p)
		}
		want := cniconf.Range{Subnet: c.subnet, RangeStart: c.first, RangeEnd: c.last, Gateway: c.gw}
		if len(p.IPAM.Ranges) != 1 || len(p.IPAM.Ranges[0]) != 1 || p.IPAM.Ranges[0][0] != want {
			t.Errorf("%s node %d: ranges %+v, want [[%+v]]", c.name, c.node, p.IPAM.Ranges, want)
		}
		a, err := c.d.addressing(node(c.node))
		if err != nil {
			t.Fatal(err)
		}
		if ip, _ := a.PodIP(0); ip.String() != c.first {
			t.Errorf("%s node %d: AttachPod's first pod %s, the plugin's %s", c.name, c.node, ip, c.first)
		}
	}
	d := NewL3()
	d.SetMTU(1400)
	if d.MTU(1500) != 1400 {
		t.Errorf("L3 MTU override: %d", d.MTU(1500))
	}
}
