package catalog

import (
	"testing"

	"github.com/cnibench/cnibench/internal/cnitunnels"
)

// Every datapath the table of CNIs' tunnel devices names is in the
// catalogue, and the kube engine's candidates are exactly the table's
// lines with a datapath, in the table's order (the order of preference).
func TestTunnelTableDatapaths(t *testing.T) {
	var want []string
	for _, d := range cnitunnels.List {
		if d.Datapath == "" {
			continue
		}
		if _, err := Lookup(d.Datapath); err != nil {
			t.Errorf("cnitunnels line %s: %v", d.Pattern, err)
		}
		want = append(want, d.Pattern)
	}
	got := TunnelDevices()
	if len(got) != len(want) {
		t.Fatalf("TunnelDevices() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("TunnelDevices()[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	// The ip_gre module's gre0 and Cilium's WireGuard device stand for
	// no datapath of the catalogue.
	if dev, ok := TunnelDevice([]string{"eth0", "gre0", "cilium_wg0"}); ok {
		t.Errorf("TunnelDevice(gre0, cilium_wg0) = %s: a device of no datapath", dev)
	}
}
