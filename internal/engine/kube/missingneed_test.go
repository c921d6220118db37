package kube

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
)

// A node lacking both of an ingress impairment's features (one need of
// netem and ifb) is refused with both named, "; "-joined on one line, as
// probe.Require refuses this machine: naming netem alone would refuse
// again once sch_netem was loaded. errors.As still finds the first.
func TestMissingNeedNamesEveryFeature(t *testing.T) {
	needs := []engine.Need{
		{What: "tuning rfs+", Features: []string{probe.RFS}},
		{What: "impairments loss-low at client-tunnel ingress", Of: []string{"flannel-vxlan"}, Features: []string{probe.Netem, probe.IFB}},
	}
	missing := map[string]string{probe.Netem: "no sch_netem", probe.IFB: "no ifb module"}
	r := missingNeed(needs, "w2", missing)
	if r == nil || r.need.What != needs[1].What {
		t.Fatalf("refusal %+v, want the ingress impairments'", r)
	}
	err := r.refuse([]string{"flannel-vxlan"})
	msg := err.Error()
	for _, w := range []string{"kernel feature netem is not available: no sch_netem; kernel feature ifb is not available: no ifb module", "node w2"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal spans lines: %q", msg)
	}
	var ue *probe.UnsupportedError
	if !errors.Is(err, probe.ErrUnsupported) || !errors.As(err, &ue) || ue.Name != probe.Netem {
		t.Errorf("refusal %v: want ErrUnsupported, the first *UnsupportedError netem", err)
	}
	// One missing feature is that feature's error itself.
	r = missingNeed(needs, "w2", map[string]string{probe.IFB: "no ifb module"})
	if ue, ok := r.err.(*probe.UnsupportedError); !ok || ue.Name != probe.IFB {
		t.Errorf("one missing feature: %#v", r.err)
	}
	if r := missingNeed(needs, "w2", nil); r != nil {
		t.Errorf("nothing missing, refused %+v", r)
	}
}
