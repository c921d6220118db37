package app

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/prove"
	"github.com/cnibench/cnibench/internal/study"
)

// nic-gro's A/B changes GRO on the underlay alone and tunnel-gro's on the
// tunnel device alone, each on the node's own encapsulation for
// tunnel-gro: an A/B that turned both would credit either candidate with
// the other's effect.
func TestProveGROScopes(t *testing.T) {
	for _, c := range []struct {
		fixture, rule, typ, devices string
		gro                         func(*inspect.Inspection)
	}{
		{"flannel-nic-no-offload.json", "nic-gro", "calico-vxlan", study.OffloadsUnderlay, nil},
		{"calico-vxlan-jumbo.json", "tunnel-gro", "calico-vxlan", study.OffloadsTunnel, nil},
		// An IP-in-IP node with GRO off on tunl0: calico-ipip, not VXLAN.
		{"ipip-nic-vxlan-offload.json", "tunnel-gro", "calico-ipip", study.OffloadsTunnel, func(in *inspect.Inspection) {
			for i := range in.Tunnels {
				in.Tunnels[i].Offloads["generic-receive-offload"] = inspect.Offload{On: false}
			}
		}},
	} {
		in := fixture(t, c.fixture)
		if c.gro != nil {
			c.gro(&in)
		}
		rules, err := advise.Lookup(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		rep := advise.Build(rules, &in, time.Now())
		if len(rep.Candidates) != 1 {
			t.Fatalf("%s is not a candidate on %s", c.rule, c.fixture)
		}
		f := &adviseFlags{}
		s, _, err := prove.Plan(prove.Options{Resolve: f.resolver()}, &rep.Candidates[0], &in)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.rule, c.fixture, err)
		}
		var gro []string
		for _, d := range s.Spec.Datapaths {
			if d.Type != c.typ || d.OffloadDevices != c.devices || len(d.Offloads) != 1 {
				t.Errorf("%s on %s: A/B datapath %+v, want %s with offloadDevices %s", c.rule, c.fixture, d, c.typ, c.devices)
			}
			gro = append(gro, d.Offloads["gro"])
		}
		if strings.Join(gro, ",") != "off,on" {
			t.Errorf("%s on %s: gro %v, want off (as found) then on", c.rule, c.fixture, gro)
		}
	}
}
