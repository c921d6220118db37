package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// What each impairment of the run installed, one line each, so a reader
// can tell what "delay-low" was on this run's path (its netem, queue
// limit included, the device and the way of the traffic it acted on)
// without env.json or the source.

// impairmentLines are, in the study's order, a line per impairment that
// the run recorded installing (env.json "impairments"); none for a run
// before they were recorded, or one without impairments.
func impairmentLines(env results.Env, s *study.Study) []string {
	if s == nil || len(env.Impairments) == 0 {
		return nil
	}
	var out []string
	for _, m := range s.Spec.Impairments {
		if set := env.Impairments[m.Name]; len(set) > 0 && !m.IsNone() {
			out = append(out, impairmentLine(m.Name, set, s))
		}
	}
	return out
}

// impairmentLine is one impairment's netem at each place it went: "loss-low:
// loss 5% limit 1000 at client-tunnel egress (client->server traffic) on
// flannel.1 (flannel-vxlan), flannel0 (flannel-udp)". Datapaths that got
// the same netem at the same place share a part.
func impairmentLine(name string, set []results.ImpairmentSetting, s *study.Study) string {
	type part struct {
		head   string
		on     []string
		raised bool
	}
	var parts []part
	for _, st := range byDatapathOrder(set, s) {
		head := fmt.Sprintf("%s at %s %s (%s traffic)", st.Netem, st.Where, st.Direction,
			study.ImpairAt{Where: st.Where, Direction: st.Direction}.Carries())
		on := devicesText(st.Devices) + " (" + st.Datapath + ")"
		if i := slices.IndexFunc(parts, func(p part) bool { return p.head == head && p.raised == st.LimitRaised }); i >= 0 {
			parts[i].on = append(parts[i].on, on)
			continue
		}
		parts = append(parts, part{head, []string{on}, st.LimitRaised})
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.head + " on " + strings.Join(p.on, ", ")
		if p.raised {
			texts[i] += ", its limit cnibench's: netem took the link-rate shaper's queue's place and holds the shaper's backlog " +
				"as well as the delayed packets (tc's default is 1000)"
		}
	}
	return name + ": " + strings.Join(texts, "; ")
}

// byDatapathOrder is set in the order of the study's datapaths (env.json
// keeps them by name).
func byDatapathOrder(set []results.ImpairmentSetting, s *study.Study) []results.ImpairmentSetting {
	out := slices.Clone(set)
	rank := func(dp string) int {
		i := slices.IndexFunc(s.Spec.Datapaths, func(d study.Datapath) bool { return d.Name == dp })
		if i < 0 {
			return len(s.Spec.Datapaths)
		}
		return i
	}
	slices.SortStableFunc(out, func(a, b results.ImpairmentSetting) int { return rank(a.Datapath) - rank(b.Datapath) })
	return out
}

// impairmentsApplied is the impairments section's list: what each
// impairment installed, then the study's notes on a workload whose data
// goes the way its netem does not act on (knob.ImpairFlowNotes), which
// summary.md, showing no run notes, would otherwise not say.
func impairmentsApplied(env results.Env, s *study.Study) []string {
	if s == nil {
		return nil
	}
	return append(impairmentLines(env, s), knob.ImpairFlowNotes(s)...)
}

// impairmentsAppliedCaption says how to read impairmentsApplied.
const impairmentsAppliedCaption = "What each impairment installed over the run's trials (env.json \"impairments\"): its netem in tc's syntax " +
	"with the queue limit netem had, the place spec.impairAt named (egress: what the device sends; ingress: what it receives, " +
	"through an ifb device) and the way of the traffic that is, and the devices, per datapath. The other way went unimpaired."

// runEnv is run's env.json, the zero Env without a run.
func runEnv(run *results.Run) results.Env {
	if run == nil {
		return results.Env{}
	}
	return run.Env
}
