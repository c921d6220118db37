package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// Published verdicts (spec.verdict.published) are checked like spec.only's
// selectors, name by name, but against a wider list. A selector picks
// cells to measure, so one whose value the run's profile dropped picks
// nothing and is refused. A published verdict is the paper's word, like
// a reference: a profile or --set that measures fewer cells (quick-none's
// impairments: [none], a --set of the rates) leaves the file's verdicts of
// the other cells unmatched, not wrong. So a name is known when the run's
// study has it or the file itself does, in spec or any profile; a name
// neither has (`udp@80M`, or `udp@800M` where the rate is a scalar and
// the variant plain `udp`) would never stand beside a cell, and is
// refused.

// cellNames are the datapath, workload (entries and their variants),
// tuning and impairment names of a study or a file.
type cellNames struct {
	datapaths, workloads, tunings, impairments []string
}

// add puts the names of these lists into c, once each.
func (c *cellNames) add(ds []Datapath, ws []Workload, ts []Tuning, ms []Impairment) {
	put := func(list *[]string, name string) { *list = appendNew(*list, name) }
	for _, d := range ds {
		put(&c.datapaths, d.Name)
	}
	for _, t := range ts {
		put(&c.tunings, t.Name)
	}
	for _, w := range ws {
		w.nameDefaults() // a name the file leaves to Defaults
		put(&c.workloads, w.Name)
		for _, v := range w.Variants() {
			put(&c.workloads, v.Name)
		}
	}
	for _, m := range ms {
		put(&c.impairments, m.Name)
	}
}

// writtenNames are the names the file's tree gives, in spec and in each
// of its profiles, read before any profile or --set changes the tree.
// A list that does not decode adds nothing: decoding the study reports it.
func writtenNames(root *yaml.Node) *cellNames {
	c := &cellNames{}
	read := func(n *yaml.Node) {
		var (
			ds []Datapath
			ws []Workload
			ts []Tuning
			ms []Impairment
		)
		if v := child(n, "datapaths"); v == nil || v.Decode(&ds) != nil {
			ds = nil
		}
		if v := child(n, "workloads"); v == nil || v.Decode(&ws) != nil {
			ws = nil
		}
		if v := child(n, "tunings"); v == nil || v.Decode(&ts) != nil {
			ts = nil
		}
		if v := child(n, "impairments"); v == nil || v.Decode(&ms) != nil {
			ms = nil
		}
		c.add(ds, ws, ts, ms)
	}
	spec := child(root, "spec")
	read(spec)
	if t := child(spec, "tunings"); t == nil || len(t.Content) == 0 {
		// The file's spec leaves its tunings to Defaults: baseline alone,
		// which a profile with tunings of its own replaces in the run.
		c.tunings = appendNew(c.tunings, builtinTunings["baseline"].Name)
	}
	profiles := child(root, "profiles")
	for i := 0; profiles != nil && i+1 < len(profiles.Content); i += 2 {
		read(profiles.Content[i+1])
	}
	return c
}

// runNames are the names of the study as it runs.
func (s *Study) runNames() *cellNames {
	c := &cellNames{}
	c.add(s.Spec.Datapaths, s.Spec.Workloads, s.Spec.Tunings, s.Spec.Impairments)
	return c
}

// validatePublished checks each published verdict's names (the rule
// above) and protocol.
func validatePublished(s *Study, published []PublishedVerdict, bad badFunc) {
	known := s.runNames()
	if w := s.written; w != nil {
		known.union(w)
	}
	known.impairments = appendNew(known.impairments, NoImpairment)
	for i, p := range published {
		f := fmt.Sprintf("spec.verdict.published[%d]", i)
		refuseUnknown(bad, f+".datapath", "datapath", p.Datapath, known.datapaths)
		if p.Protocol != "udp" && p.Protocol != "tcp" {
			bad(f+".protocol", "want udp or tcp (the verdict's criteria are per protocol), got %q", p.Protocol)
		}
		// A workload or impairment left out matches every cell.
		if p.Workload != "" {
			refuseUnknown(bad, f+".workload", "workload", p.Workload, known.workloads)
		}
		if p.Impairment != "" {
			refuseUnknown(bad, f+".impairment", "impairment", p.Impairment, known.impairments)
		}
	}
}

// refuseUnknown refuses a name of a cell (spec.only's selectors,
// published verdicts) that known, the study's names of its kind, lacks:
// with those names and a did-you-mean, since a typo picks nothing.
func refuseUnknown(bad badFunc, f, what, name string, known []string) {
	if !slices.Contains(known, name) {
		bad(f, "the study has no %s %q (%sit has: %s)", what, name, suggest.Hint(name, known), strings.Join(known, ", "))
	}
}

func appendNew(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	return append(list, name)
}

// union adds o's names to c.
func (c *cellNames) union(o *cellNames) {
	for _, n := range o.datapaths {
		c.datapaths = appendNew(c.datapaths, n)
	}
	for _, n := range o.workloads {
		c.workloads = appendNew(c.workloads, n)
	}
	for _, n := range o.tunings {
		c.tunings = appendNew(c.tunings, n)
	}
	for _, n := range o.impairments {
		c.impairments = appendNew(c.impairments, n)
	}
}

// measurablePublished are the published verdicts that can stand beside
// a cell of the study as it runs: those naming its datapaths, workloads
// and impairments (or none, which match every one).
func (s *Study) measurablePublished() []PublishedVerdict {
	if s.Spec.Verdict == nil {
		return nil
	}
	run := s.runNames()
	var out []PublishedVerdict
	for _, p := range s.Spec.Verdict.Published {
		if slices.Contains(run.datapaths, p.Datapath) &&
			(p.Workload == "" || slices.Contains(run.workloads, p.Workload)) &&
			(p.Impairment == "" || p.Impairment == NoImpairment || slices.Contains(run.impairments, p.Impairment)) {
			out = append(out, p)
		}
	}
	return out
}
