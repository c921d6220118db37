package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
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
	// A study's own impairment of zeros (a sweep's 0% step) is none too.
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-0", Fields: map[string]string{"loss": "0%"}})
	if n := impairmentNeeds(s); len(n) != 0 {
		t.Errorf("none and loss 0%% need %v", n)
	}
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-low"}, study.Impairment{Name: "delay-low"})
	n := impairmentNeeds(s)
	if len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem}) ||
		n[0].What != "impairments loss-low and 1 more at client-tunnel egress" || !slices.Equal(n[0].Of, []string{"flannel-vxlan", "flannel-udp"}) {
		t.Errorf("egress: %+v", n)
	}
	s.Spec.ImpairAt.Direction = study.DirIngress
	if n := impairmentNeeds(s); len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem, probe.IFB}) {
		t.Errorf("ingress: %+v", n)
	}
}

// A refusal for want of netem says how to run without impairments: the
// study's profiles that have none (flannel-backends' quick-none), then
// the override any study takes.
func TestImpairmentNeedsSayHowToRunWithout(t *testing.T) {
	s, err := study.Resolve("flannel-backends", study.Options{Profile: "quick"}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	n := impairmentNeeds(s)
	if len(n) != 1 || n[0].Without != "--profile quick-none, or --set impairments=[none]" {
		t.Fatalf("without: %+v", n)
	}
	msg := n[0].Refusal("", errors.New("kernel feature netem is not available")).Error()
	if !strings.HasPrefix(msg, "spec.impairments[1]: impairments delay-low and 3 more at client-tunnel egress of flannel-vxlan, flannel-udp: kernel") ||
		!strings.HasSuffix(msg, "netem is not available (to run without: --profile quick-none, or --set impairments=[none])") {
		t.Errorf("refusal: %s", msg)
	}
	s.Profiles = nil
	if w := impairmentNeeds(s)[0].Without; w != "--set impairments=[none]" {
		t.Errorf("study without such a profile: %q", w)
	}
}
