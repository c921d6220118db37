package study_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// TestBuiltinReferencesMatchCells: every published number of a built-in
// study names a point of its default profile (datapaths, the datapath a
// ratio is against, a workload or one variant of its sweep, a tuning), so
// none of them can silently show "not measured" for a misspelling.
func TestBuiltinReferencesMatchCells(t *testing.T) {
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dps, works, tunings := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, d := range s.Spec.Datapaths {
			dps[d.Name] = true
		}
		for _, w := range s.Spec.Workloads {
			works[w.Name] = true
		}
		for _, w := range s.Variants() {
			works[w.Name] = true
		}
		for _, tu := range s.Spec.Tunings {
			tunings[tu.Name] = true
		}
		for i, r := range s.Spec.Reference {
			for what, v := range map[string]struct {
				name string
				set  map[string]bool
			}{"datapath": {r.Datapath, dps}, "against": {r.Against, dps}, "workload": {r.Workload, works}, "againstWorkload": {r.AgainstWorkload, works}, "tuning": {r.Tuning, tunings}} {
				if v.name != "" && !v.set[v.name] {
					t.Errorf("%s: reference[%d].%s %q is not a point of the study", name, i, what, v.name)
				}
			}
		}
	}
}

// TestBuiltinDefaultsAreAdaptive: every built-in study's default profile
// repeats a cell only until it is answered (a decision against the
// baseline where tunings are compared, else a precision target of each
// cell's mean), up to the paper's count, and a paper profile, where the
// study reproduces a paper, runs exactly that count.
func TestBuiltinDefaultsAreAdaptive(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sp := s.Spec
		compares := sp.Baseline != "" && len(sp.Tunings) > 1
		if !sp.Trials.Adaptive() || !compares && sp.Precision == nil || compares && sp.Margin == nil {
			t.Errorf("%s: trials %v, precision %+v, margin %v: want a range of trials and a target", name, sp.Trials, sp.Precision, sp.Margin)
		}
		src, _ := study.BuiltinSource(name)
		if !strings.Contains(string(src), "source: seed") || !strings.Contains(string(src), "(paper)") {
			continue
		}
		p, err := study.Resolve(name, study.Options{Profile: "paper"}, cat)
		if err != nil {
			t.Errorf("%s reproduces a paper but its paper profile does not resolve: %v", name, err)
			continue
		}
		if p.Spec.Trials != study.Fixed(sp.Trials.Max) {
			t.Errorf("%s --profile paper: trials %v, want the default's maximum %d, fixed", name, p.Spec.Trials, sp.Trials.Max)
		}
	}
}

// TestBuiltinProfilesResolve: every profile of every built-in study
// resolves (a profile is merged over spec only when it is asked for, so
// a broken one would otherwise surface in a user's run); and
// cni-compare's decide profile is what its comment promises: adaptive
// within a quarter of an hour, judged against Flannel at 5%, with no
// target on a cell's own mean to keep Flannel's cells running for it.
func TestBuiltinProfilesResolve(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, prof := range s.ProfileNames() {
			if _, err := study.Resolve(name, study.Options{Profile: prof}, cat); err != nil {
				t.Errorf("%s --profile %s: %v", name, prof, err)
			}
		}
	}
	s, err := study.Resolve("cni-compare", study.Options{Profile: "decide"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if sp := s.Spec; !sp.Trials.Adaptive() || sp.Budget.Duration == 0 || sp.Budget.Duration > 15*time.Minute ||
		sp.Precision != nil || sp.DecisionMargin() != 0.05 {
		t.Errorf("cni-compare decide: trials %s, budget %s, precision %v, margin %v", sp.Trials, sp.Budget.Duration,
			sp.Precision, sp.DecisionMargin())
	}
}

// TestBuiltinBitrateReferencesWithinOffered: no published bitrate of a
// built-in study stands beside a cell, of its default or any profile,
// whose sender is asked for less than that number (rate times streams):
// that cell cannot deliver it, so the number is of another offered
// rate. Before, flannel-backends set Table VIII's TCP numbers beside
// every TCP rate, and tcp@500M's delay-low cell read "paper 0.7777
// Gbit/s".
func TestBuiltinBitrateReferencesWithinOffered(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, prof := range append([]string{""}, s.ProfileNames()...) {
			p, err := study.Resolve(name, study.Options{Profile: prof}, cat)
			if err != nil {
				t.Fatalf("%s --profile %q: %v", name, prof, err)
			}
			for _, v := range p.Variants() {
				rate, ok := study.ParseRate(v.Rate)
				if !ok {
					continue
				}
				offered := rate * float64(max(v.Parallel, 1))
				for i, r := range p.Spec.Reference {
					at := r.Workload == "" || r.Workload == v.Name || r.Workload == study.EntryOf(v.Name)
					if r.Metric == results.MetricBitrate && r.Value != nil && r.Ratio == nil && at && *r.Value > offered {
						t.Errorf("%s --profile %q: reference[%d] (%s %s %s, %s) %.4g bit/s beside %s, offered %.4g",
							name, prof, i, r.Datapath, r.Workload, r.Impairment, r.Note, *r.Value, v.Name, offered)
					}
				}
			}
		}
	}
}
