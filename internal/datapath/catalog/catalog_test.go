package catalog

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestCatalog checks what every datapath promises without touching the
// kernel: a unique name that Lookup finds, at least one kernel feature
// known to the probe, and an MTU that fits the underlay.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		name := d.Name()
		if seen[name] {
			t.Errorf("datapath %s listed twice", name)
		}
		seen[name] = true
		if got, err := Lookup(name); err != nil || got.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, got, err)
		}
		var kernel int
		for _, f := range d.Features() {
			if slices.Contains(probe.KernelFeatures(), f) {
				kernel++
			}
		}
		if kernel == 0 {
			t.Errorf("%s lists no kernel feature the probe knows: %v", name, d.Features())
		}
		if m := d.MTU(1500); m < 1280 || m > 1500 {
			t.Errorf("%s: MTU(1500) = %d, want 1280..1500", name, m)
		}
		// Some CNIs follow the underlay, some (Weave) keep a fixed MTU;
		// none may exceed it.
		if m := d.MTU(9000); m > 9000 || m < d.MTU(1500) {
			t.Errorf("%s: MTU(9000) = %d with MTU(1500) = %d", name, m, d.MTU(1500))
		}
	}
	if _, err := Lookup("no-such-datapath"); err == nil {
		t.Error("Lookup of an unknown name succeeded")
	}
	for _, name := range []string{"host", "bridge", "calico-routed", "calico-ipip", "macvlan", "ipvlan", "geneve", "gre", "wireguard"} {
		if !seen[name] {
			t.Errorf("datapath %s missing from the catalog", name)
		}
	}
	h, _ := Lookup("host")
	if h == nil || !datapath.IsHostNetwork(h) {
		t.Error("host is not a host-network datapath")
	}
}
