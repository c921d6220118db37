package weave_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/datapath/weave"
)

// TestValidationDoesNotProbe: validating a study read weave's tunnel,
// which picked its mode, which probed for openvswitch, which ran
// modprobe openvswitch: every `cnibench run cni-compare`, even one then
// refused as bad input (exit 2), `cnibench studies` and `cnibench
// report` loaded the module. What validation reads of a datapath built
// as an object (catalog.Check, the tunnel of an entry and of every
// catalogued datapath, the report's overlays) now picks no mode; a run's
// preflight (Features) does.
func TestValidationDoesNotProbe(t *testing.T) {
	probes := weave.CountModeProbes(t)
	d := weave.New()
	if d.Tunnel() == "" {
		t.Error("weave has a VXLAN tunnel in both modes; Tunnel() is empty")
	}
	_, _, _ = d.Name(), d.MTU(1500), datapath.MaxMTU(d, 1500)
	d.SetMTU(1400)
	for _, o := range []catalog.Options{{Type: "weave"}, {Type: "weave", MTU: 9000}, {Type: "weave", Wiring: "cni", Policy: "wp"}} {
		_ = catalog.Check(o, 1500)
		b, err := catalog.Build(o)
		if err != nil {
			t.Fatalf("Build(%+v): %v", o, err)
		}
		if b.Tunnel() == "" {
			t.Errorf("Build(%+v): no tunnel", o)
		}
	}
	for _, c := range catalog.All() {
		_ = c.Tunnel()
	}
	_ = catalog.CNIDelegates()
	if *probes != 0 {
		t.Errorf("validation picked weave's mode %d time(s), which probes (modprobe openvswitch)", *probes)
	}
	// A run's preflight asks Features, which picks it, once.
	d.Features()
	d.Features()
	if *probes != 1 {
		t.Errorf("Features picked the mode %d times, want once", *probes)
	}
	if got := (&weave.Datapath{Mode: weave.ModeOVS}).Tunnel(); got != weave.OVSTunnelPrefix+"6784" {
		t.Errorf("OVS mode's tunnel = %q, want the vport's device", got)
	}
	if got := (&weave.Datapath{Mode: weave.ModeBridge}).Tunnel(); got != weave.Device {
		t.Errorf("bridge mode's tunnel = %q, want %s", got, weave.Device)
	}
}
