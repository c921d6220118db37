package catalog

import (
	"slices"
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
	if got := TunnelDevices(); len(got) != len(clusterTunnels) || got[0] != "vxlan.calico" {
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
