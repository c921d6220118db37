package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// A run resumed in the middle of round 2 (rfs's trial 2 at 1 replica ran
// after the resume, the baseline's before) says, in summary.md and the
// report's Method, which round of which comparison straddles the resume
// and that it is left out of the paired interval; a run resumed between
// rounds says nothing of it.
func TestStraddleNote(t *testing.T) {
	s := quickStudy(t)
	rfs1 := results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}
	resumed := func(cutRFS int) []results.Sample {
		smp := quickSamples()
		for i, x := range smp {
			from := 2
			if x.Cell == rfs1 {
				from = cutRFS
			}
			if x.Trial >= from {
				smp[i].Part = 1
			}
		}
		return smp
	}
	m := analysis.Build(s, resumed(3))
	want := "The run was resumed (run --resume) in the middle of a round: round 2 of calico-vxlan tcp rfs r=1 against baseline; " +
		"it straddles the resume, the two trials of such a round ran either side of the interruption, so each is left out of the " +
		"paired interval and kept in the unpaired (Fieller) one."
	if md := markdownOf(t, s, m); !strings.Contains(md, want) {
		t.Errorf("summary.md lacks %q:\n%s", want, md[:min(len(md), 1500)])
	}
	if got := strings.Join(method(s, m.Rows), "\n"); !strings.Contains(got, want) {
		t.Errorf("Method %q lacks %q", got, want)
	}
	between := analysis.Build(s, resumed(2))
	if n := straddleNote(between.Rows); n != "" {
		t.Errorf("resumed between rounds: %q, want nothing said", n)
	}
	if got := roundsText([]int{4, 5, 6}); got != "rounds 4, 5 and 6" {
		t.Errorf("roundsText = %q", got)
	}
}
