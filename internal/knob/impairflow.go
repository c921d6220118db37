package knob

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// ImpairFlowNotes says, once per workload entry, where spec.impairAt
// puts the study's netem on the way opposite to the one the workload's
// measured data goes (spec.Tool.Data against study.ImpairAt.Carries):
// netem impairs only what its device sends, so client-pods at its
// default egress (the veths send into the pods) impairs an iperf3
// upload's ACKs alone, and the default client-tunnel egress an iperf3
// reverse test's, while the cells carry the impairment's name beside the
// paper's numbers. A note, not a refusal: impairing the ACKs can be the
// point. Request/response tools, whose round trips go both ways, and
// tasks, which move no data, get none.
//
// The runner logs them when a run starts (and keeps them in env.json's
// notes); the report sets them beside what each impairment installed.
func ImpairFlowNotes(s *study.Study) []string {
	at := s.Spec.ImpairAt
	acts := at.Carries()
	var notes []string
	for _, w := range s.Spec.Workloads {
		tool, ok := registry.Describe(w.Tool)
		if !ok || w.ClientOnServerNode() || !impairsWorkload(s, w.Name) {
			continue
		}
		flow, sender := tool.FlowOf(w.SetOptions())
		if flow == "" || flow == spec.BothWays || flow == acts {
			continue
		}
		other := study.DirIngress
		if at.Direction == study.DirIngress {
			other = study.DirEgress
		}
		notes = append(notes, fmt.Sprintf("impairAt %s %s acts on %s traffic: "+
			"workload %s (%s %s, %s) has %s; direction: %s impairs its data",
			at.Where, at.Direction, acts, w.Name, w.Tool, w.Protocol, sender, impairedBack(w.Protocol, tool.Data.Back), other))
	}
	return notes
}

// impairedBack is what of a workload an impairment of the way its data
// does not go acts on: over TCP what goes back (the ACKs, ab's requests
// too), whose delay still lengthens every round trip; over UDP nothing
// the workload measures.
func impairedBack(protocol, back string) string {
	if protocol == "udp" {
		return "none of its datagrams impaired"
	}
	return "only " + back + " impaired (a delay lengthens its round trips either way; loss, corruption and a rate act on the packets netem sees)"
}

// impairsWorkload reports whether a cell the study measures of workload
// entry name has an impairment that changes something (Impairs).
func impairsWorkload(s *study.Study, name string) bool {
	for _, c := range s.Cells() {
		if c.Impairment == "" || study.EntryOf(c.Workload) != name {
			continue
		}
		if m, ok := s.Impairment(c.Impairment); ok && Impairs(m) {
			return true
		}
	}
	return false
}
