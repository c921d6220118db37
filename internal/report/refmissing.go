package report

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/study"
)

// missingPoint says which part of a published number's point the run has
// no measured row of: "this run measured no datapath ovs" (a datapath
// this machine could not build, which the notes name, or one the profile
// left out), "... no workload flows-chc", "... nothing at 16 replicas";
// "" when every part ran (the metric itself is missing). The table then
// says why "not measured".
func (n *numbers) missingPoint(ref study.Reference) string {
	has := func(match func(dp, tuning, workload, impairment string, replicas int) bool) bool {
		for _, r := range n.Rows {
			if r.N > 0 && match(r.Datapath, r.Tuning, r.Workload, r.Impairment, r.Replicas) {
				return true
			}
		}
		return false
	}
	switch {
	case ref.Datapath != "" && !has(func(dp, _, _, _ string, _ int) bool { return dp == ref.Datapath }):
		return "this run measured no datapath " + ref.Datapath
	case ref.Workload != "" && !has(func(_, _, wl, _ string, _ int) bool {
		return wl == ref.Workload || strings.HasPrefix(wl, ref.Workload+"@")
	}):
		return "this run measured no workload " + ref.Workload
	case ref.Tuning != "" && !has(func(_, tu, _, _ string, _ int) bool { return tu == ref.Tuning }):
		return "this run measured no tuning " + ref.Tuning
	case ref.Replicas != 0 && !has(func(_, _, _, _ string, r int) bool { return r == ref.Replicas }):
		return fmt.Sprintf("this run measured nothing at %d replica%s", ref.Replicas, plural(ref.Replicas))
	case ref.Impairment != "" && ref.Impairment != study.NoImpairment && !has(func(_, _, _, im string, _ int) bool { return im == ref.Impairment }):
		return "this run measured no impairment " + ref.Impairment
	}
	return ""
}

// ratioMissing is why a published ratio has no denominator here: the
// run has no datapath (or workload) it divides by.
func (n *numbers) ratioMissing(ref study.Reference) string {
	den := ref
	den.Datapath, den.Workload = "", ""
	if ref.Against != "" {
		den.Datapath = ref.Against
	}
	if ref.AgainstWorkload != "" {
		den.Workload = ref.AgainstWorkload
	}
	return n.missingPoint(den)
}
