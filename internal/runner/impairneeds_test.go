package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// A study's impairments need netem (and ifb for ingress), once, named;
// none alone needs nothing.
func TestImpairmentNeeds(t *testing.T) {
	s := &study.Study{}
	s.Spec.Datapaths = []study.Datapath{{Name: "flannel-vxlan"}, {Name: "flannel-udp"}}
	s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}
	s.Spec.Impairments = []study.Impairment{{Name: "none"}}
	if n := impairmentNeeds(s); len(n) != 0 {
		t.Errorf("none alone needs %v", n)
	}
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-low"}, study.Impairment{Name: "delay-low"})
	n := impairmentNeeds(s)
	if len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem}) ||
		!strings.HasPrefix(n[0].What, "impairments loss-low and 1 more (client-tunnel egress of flannel-vxlan, flannel-udp)") {
		t.Errorf("egress: %+v", n)
	}
	s.Spec.ImpairAt.Direction = study.DirIngress
	if n := impairmentNeeds(s); len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem, probe.IFB}) {
		t.Errorf("ingress: %+v", n)
	}
}
