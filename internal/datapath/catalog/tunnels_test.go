package catalog

import "testing"

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
