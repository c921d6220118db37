package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/study"
)

// impairmentNeeds is what the study's impairments need on the nodes
// (netem; ifb for ingress), named so that a refusal says which
// impairments and datapaths it would have affected. Every impairment of a
// study goes to the same place, so they need the same: one need, probed
// once.
func impairmentNeeds(s *study.Study) []engine.Need {
	var names []string
	var first study.Impairment
	field := ""
	for i, m := range s.Spec.Impairments {
		if !knob.Impairs(m) {
			continue
		}
		if len(names) == 0 {
			first, field = m, fmt.Sprintf("spec.impairments[%d]", i)
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return nil
	}
	what := "impairment " + names[0]
	if len(names) > 1 {
		what = fmt.Sprintf("impairments %s and %d more", names[0], len(names)-1)
	}
	what += fmt.Sprintf(" at %s %s", s.Spec.ImpairAt.Where, s.Spec.ImpairAt.Direction)
	f := knob.Needs(knob.Trial, &knob.Target{Study: s, Impairment: first})
	return []engine.Need{{What: what, Of: s.DatapathNames(), Field: field, Features: f, Without: withoutImpairments(s)}}
}

// withoutImpairments names the ways to run the study on a kernel without
// netem: its profiles whose impairments are only none (flannel-backends'
// quick-none), then the override that works for any study.
func withoutImpairments(s *study.Study) string {
	var ways []string
	for _, name := range s.ProfileNames() {
		if name != s.Profile && onlyNone(s.Profiles[name]) {
			ways = append(ways, "--profile "+name)
		}
	}
	return strings.Join(append(ways, "--set impairments=[none]"), ", or ")
}

// onlyNone reports whether a profile (raw YAML) sets impairments to none
// alone.
func onlyNone(profile any) bool {
	p, _ := profile.(map[string]any)
	list, _ := p["impairments"].([]any)
	for _, m := range list {
		if m != study.NoImpairment {
			return false
		}
	}
	return len(list) > 0
}

// impairPlaces refuses, before anything touches the host, a datapath
// that cannot take the study's impairments where spec.impairAt puts
// them: a tunnel place on a datapath without a tunnel device, or the
// client pods' host-side devices on one whose pods have none (host
// network, macvlan, ipvlan: datapath.WhyNoPodPeers). Each trial would find it and fail (and be retried) in every
// impaired cell of the datapath, so the run would spend its baseline
// cells and then give those up; it is the study's input that does not
// fit, said once at the datapath's line. The datapaths are the local
// engine's, built from their entries, so what they say of themselves is
// what the run gets; a cluster's CNI is known only once it is up
// (checkImpairPlace).
func impairPlaces(s *study.Study, built map[string]engine.Datapath) error {
	for i, d := range s.Spec.Datapaths {
		if !knob.ImpairsCells(s, d.Name) {
			continue
		}
		dp := built[d.Name].Built
		if dp == nil {
			continue
		}
		if err := knob.PlaceFits(s.Spec.ImpairAt, d.Name, dp.Tunnel() != "", datapath.WhyNoPodPeers(dp)); err != nil {
			return study.At(fmt.Sprintf("spec.datapaths[%d]", i), err)
		}
	}
	return nil
}

// checkImpairPlace is impairPlaces for a cluster that is up: a cluster
// engine's CNI has a tunnel device or not whatever the datapath entry's
// name says, so the run is refused on its first cluster, before any
// trial, rather than each impaired trial failing.
func checkImpairPlace(s *study.Study, d study.Datapath, c engine.Cluster) error {
	if !knob.ImpairsCells(s, d.Name) {
		return nil
	}
	_, cli := c.Client().Tunnel()
	_, srv := c.Server().Tunnel()
	tunnel := cli
	if s.Spec.ImpairAt.Where == study.WhereServerTunnel {
		tunnel = srv
	}
	return knob.PlaceFits(s.Spec.ImpairAt, d.Name, tunnel, "")
}
