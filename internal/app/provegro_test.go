package app

import (
	"slices"
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
// the other's effect. The same device segments what it sends in both
// arms (seg), so frames of the MTU reach the GRO measured.
func TestProveGROScopes(t *testing.T) {
	underlaySeg := "tso=off tx-udp_tnl-csum-segmentation=off tx-udp_tnl-segmentation=off"
	for _, c := range []struct {
		fixture, rule, typ, devices, seg string
		gro                              func(*inspect.Inspection)
	}{
		{"flannel-nic-no-offload.json", "nic-gro", "calico-vxlan", study.OffloadsUnderlay, underlaySeg, nil},
		{"calico-vxlan-jumbo.json", "tunnel-gro", "calico-vxlan", study.OffloadsTunnel, "tso=off", nil},
		// An IP-in-IP node with GRO off on tunl0: calico-ipip, not VXLAN.
		{"ipip-nic-vxlan-offload.json", "tunnel-gro", "calico-ipip", study.OffloadsTunnel, "tso=off", func(in *inspect.Inspection) {
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
			var seg []string
			for k, v := range d.Offloads {
				if k != "gro" {
					seg = append(seg, k+"="+v)
				}
			}
			slices.Sort(seg)
			if d.Type != c.typ || d.OffloadDevices != c.devices || strings.Join(seg, " ") != c.seg {
				t.Errorf("%s on %s: A/B datapath %+v, want %s with offloadDevices %s and %s", c.rule, c.fixture, d, c.typ, c.devices, c.seg)
			}
			gro = append(gro, d.Offloads["gro"])
		}
		if strings.Join(gro, ",") != "off,on" {
			t.Errorf("%s on %s: gro %v, want off (as found) then on", c.rule, c.fixture, gro)
		}
	}
}
