package catalog

import (
	"slices"
	"strings"
	"testing"
)

// Every tunnel device belongs to a datapath of the catalogue, once.
func TestTunnelDevicesBelongToDatapaths(t *testing.T) {
	seen := map[string]bool{}
	for _, tu := range clusterTunnels {
		if _, err := Lookup(tu.Datapath); err != nil {
			t.Errorf("tunnel %s: %v", tu.Device, err)
		}
		if tu.Device == "" || seen[tu.Device] {
			t.Errorf("tunnel device %q empty or listed twice", tu.Device)
		}
		seen[tu.Device] = true
	}
	if got := TunnelDevices(); len(got) != len(clusterTunnels) || got[0] != clusterTunnels[0].Device {
		t.Errorf("TunnelDevices() = %v", got)
	}
}

// Every datapath a real CNI is listed for is in the catalogue, once, with
// at least one CNI; the lookups in both directions agree.
func TestClusterCNIs(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range clusterCNIs {
		if _, err := Lookup(c.Datapath); err != nil || seen[c.Datapath] || len(c.CNIs) == 0 {
			t.Errorf("%s: %v, listed twice %v, %d CNIs", c.Datapath, err, seen[c.Datapath], len(c.CNIs))
		}
		seen[c.Datapath] = true
		for _, x := range c.CNIs {
			if !slices.Contains(StandingFor(x.Name, x.Mode), c.Datapath) {
				t.Errorf("StandingFor(%s) lacks %s", x, c.Datapath)
			}
		}
	}
	for _, tc := range []struct {
		name, mode string
		want       []string
	}{
		{"flannel", "vxlan", []string{"flannel-vxlan"}},
		{"flannel", "host-gw", []string{"bridge"}},
		{"bridge", "bridge + host-local, routes between nodes", []string{"bridge"}},
		{"cilium", "geneve", []string{"cilium", "geneve"}},
		{"calico", "bgp", []string{"calico-routed"}},
		{"calico", "wireguard", []string{"wireguard"}},
		{"flannel", "ipip", nil},
		{"weave", "vxlan (fastdp)", []string{"weave"}},
		{"weave", "sleeve", nil},
		{"unknown", "", nil},
	} {
		if got := StandingFor(tc.name, tc.mode); !slices.Equal(got, tc.want) {
			t.Errorf("StandingFor(%s, %s) = %v, want %v", tc.name, tc.mode, got, tc.want)
		}
	}
	if ClusterCNIs("macvlan") != nil || ClusterCNIs("flannel-udp")[0].String() != "flannel (udp)" || ClusterCNIs("cilium")[0].String() != "cilium" {
		t.Errorf("ClusterCNIs: macvlan %v, flannel-udp %v, cilium %v", ClusterCNIs("macvlan"), ClusterCNIs("flannel-udp"), ClusterCNIs("cilium"))
	}
}

// A node's tunnel device is found by the names real CNIs give it,
// numbered ones too (Flannel's flannel.<VNI>), in the order of
// preference; a node with none has none.
func TestTunnelDevice(t *testing.T) {
	// tunl0 is there wherever the ipip module is loaded: any other
	// tunnel device is the node's.
	for _, tu := range clusterTunnels {
		dev := strings.NewReplacer("[0-9]*", "7").Replace(tu.Device)
		if got, _ := TunnelDevice([]string{"tunl0", dev}); got != dev && dev != "tunl0" {
			t.Errorf("TunnelDevice(tunl0, %s) = %s", dev, got)
		}
	}
	for _, tc := range []struct {
		links []string
		want  string
	}{
		{[]string{"eth0", "cni0", "flannel.1"}, "flannel.1"},
		{[]string{"eth0", "flannel.4096"}, "flannel.4096"},
		{[]string{"eth0", "flannel-v6.1"}, "flannel-v6.1"},
		{[]string{"flannel-v6.1", "flannel.1"}, "flannel.1"},
		{[]string{"eth0", "flannel.ipip", "tunl0"}, "flannel.ipip"},
		{[]string{"eth0", "tunl0"}, "tunl0"},
		{[]string{"eth0", "flannel.ipip"}, "flannel.ipip"},
		{[]string{"eth0", "flannel-wg-v6"}, "flannel-wg-v6"},
		{[]string{"eth0", "flannel0"}, "flannel0"},
		{[]string{"tunl0", "vxlan.calico"}, "vxlan.calico"},
		{[]string{"eth0", "vxlan-v6.calico"}, "vxlan-v6.calico"},
		{[]string{"tunl0", "vxlan.calico", "wireguard.cali"}, "wireguard.cali"},
		{[]string{"eth0", "wg-v6.cali"}, "wg-v6.cali"},
		{[]string{"eth0", "cni0", "flannel-xyz"}, ""},
		{nil, ""},
	} {
		got, ok := TunnelDevice(tc.links)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("TunnelDevice(%v) = %q, %v, want %q", tc.links, got, ok, tc.want)
		}
	}
}
