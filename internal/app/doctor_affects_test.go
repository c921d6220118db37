package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// noWeave is the runner's list of a study's needs, for the studies
// without a weave entry: building weave asks its Features, which probes
// (modprobe openvswitch), and a unit test probes nothing.
func noWeave(s *study.Study) ([]string, error) {
	for _, d := range s.Spec.Datapaths {
		if d.Type == "weave" {
			return nil, errors.New("not asked in a unit test: weave's Features probe")
		}
	}
	return runner.LocalNeeds(s)
}

// TestDoctorAffectsFromRunnerNeeds: a MISSING line names the studies the
// runner's preflight would refuse or cut with it. doctor's own list knew
// only a datapath's Features and a few knobs, so a missing tbf named no
// study though flannel-backends (link.rate) is refused without it.
func TestDoctorAffectsFromRunnerNeeds(t *testing.T) {
	n := builtinNeeds(nil, noWeave)
	for _, f := range []string{probe.TBF, probe.Netem, probe.BrNetfilter} {
		if got := n.affects(f); !slices.Contains(got.studies, "flannel-backends") {
			t.Errorf("a missing %s affects %v; flannel-backends needs it", f, got)
		}
	}
	if got := n.affects(probe.ToolBird); len(got.studies) != 0 {
		t.Errorf("a missing bird affects %v; no built-in study runs BIRD", got)
	}
}

// TestSkipReasonIsThePreflights: doctor said "why they are unavailable is
// above" of the datapaths a study's preflight skips, and the table above
// has only each datapath's own features: an entry skipped for what it
// needs beyond them (br_netfilter for its netfilter state) was given no
// reason anywhere. The preflight's skip notes are the reason now.
func TestSkipReasonIsThePreflights(t *testing.T) {
	skip := results.SkipNote([]string{"flannel", "weave"}, "kernel feature br_netfilter is not available: no bridge netfilter")
	got := skipReason([]string{"flannel", "weave"}, []string{"some other note", skip})
	if !strings.Contains(got, skip) || strings.Contains(got, "some other note") || strings.Contains(got, "above") {
		t.Errorf("skipReason = %q, want the preflight's skip note %q", got, skip)
	}
	if got := skipReason([]string{"a"}, nil); !strings.HasPrefix(got, "runs without a (spec.skipUnavailable)") {
		t.Errorf("no notes: %q", got)
	}
}
