package cnibridge

import (
	"encoding/json"
	"net"
	"testing"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
)

func TestFlannelPort(t *testing.T) {
	_, lease, _ := net.ParseCIDR("10.244.57.0/24")
	p := FlannelPort(datapath.Pod{Name: "cnb-x-srv3", Index: 3}, lease, 1450)
	if !p.IP.Equal(net.IPv4(10, 244, 57, 5)) || p.PrefixLen != 24 || !p.Gateway.Equal(net.IPv4(10, 244, 57, 1)) {
		t.Errorf("address %s/%d via %s, want 10.244.57.5/24 via 10.244.57.1", p.IP, p.PrefixLen, p.Gateway)
	}
	if p.Bridge != "cni0" || p.MTU != 1450 || !p.Hairpin {
		t.Errorf("port %+v: want cni0, MTU 1450, hairpin", p)
	}
	if len(p.Routes) != 1 || p.Routes[0].String() != "10.244.0.0/16" {
		t.Errorf("routes %v, want the cluster network 10.244.0.0/16", p.Routes)
	}
}

// TestFlannelCNIConfigMatchesPort checks that the configuration handed to
// the bridge plugin asks for what FlannelPort wires in process: the same
// bridge, MTU, subnet (so host-local hands out .2, .3, ... with .1 as
// gateway), default and cluster routes, and hairpin.
func TestFlannelCNIConfigMatchesPort(t *testing.T) {
	_, lease, _ := net.ParseCIDR("10.244.1.0/24")
	b, err := FlannelCNIConfig(lease, 1450)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		CNIVersion string           `json:"cniVersion"`
		Name       string           `json:"name"`
		Plugins    []cniconf.Bridge `json:"plugins"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if l.CNIVersion != cniconf.Version || l.Name != "cbr0" || len(l.Plugins) != 1 {
		t.Fatalf("list %s", b)
	}
	port := FlannelPort(datapath.Pod{Index: 0}, lease, 1450)
	c := l.Plugins[0]
	if c.Type != "bridge" || c.Bridge != port.Bridge || c.MTU != port.MTU || c.HairpinMode != port.Hairpin {
		t.Errorf("plugin %+v does not match port %+v", c, port)
	}
	if !c.IsGateway || !c.IsDefaultGateway || c.IPMasq {
		t.Errorf("plugin %+v: want isGateway, isDefaultGateway, no ipMasq", c)
	}
	if c.IPAM.Type != "host-local" || len(c.IPAM.Ranges) != 1 || len(c.IPAM.Ranges[0]) != 1 || c.IPAM.Ranges[0][0] != (cniconf.Range{Subnet: "10.244.1.0/24"}) {
		t.Errorf("ipam %+v: want host-local over the lease alone", c.IPAM)
	}
	if len(c.IPAM.Routes) != len(port.Routes) || c.IPAM.Routes[0] != (cniconf.Route{Dst: port.Routes[0].String()}) {
		t.Errorf("ipam routes %v, port routes %v", c.IPAM.Routes, port.Routes)
	}
	types, err := cniconf.Types(b)
	if err != nil || len(types) != 2 || types[0] != FlannelCNIPlugins()[0] || types[1] != FlannelCNIPlugins()[1] {
		t.Errorf("types %v (%v), FlannelCNIPlugins %v", types, err, FlannelCNIPlugins())
	}
}
