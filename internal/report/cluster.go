package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// clusterLine says, for runs on a real cluster, which CNI was measured:
// the cells keep the study's datapath names (so kube and local runs line
// up in tables and in `cnibench compare`), and this line keeps the
// reader from taking those names for what ran. s is the study as the run
// stored it: where the label stands for another CNI, the line says how
// many of its published numbers this report leaves out (mislabelled).
func clusterLine(e results.Env, s *study.Study) string {
	if e.Engine != "kube" {
		return ""
	}
	cni := "not detected"
	if e.CNI != nil {
		cni = e.CNI.String()
	}
	line := fmt.Sprintf("Measured on a Kubernetes cluster (engine kube) whose CNI was detected as %s; cells are named by the study's datapath (%s).",
		cni, strings.Join(s.DatapathNames(), ", "))
	if e.CNI == nil || e.CNI.LabelStandsFor == "" {
		return line
	}
	line += fmt.Sprintf(" That name stands for %s, not what was measured: ", e.CNI.LabelStandsFor)
	_, refs, verdicts := mislabelled(e, s)
	if refs+verdicts == 0 {
		// The run left them out of its study.yaml before it stored it
		// (the kube engine's checkLabel); its warning counted them.
		return line + "no published number of the study is set beside these cells (the run left out those of that name; its warning in env.json's notes says how many)."
	}
	return line + fmt.Sprintf("the study's %s of it are left out of this report (study.yaml keeps them).", publishedCount(refs, verdicts))
}

// publishedCount is "8 published numbers and 2 published verdicts".
func publishedCount(refs, verdicts int) string {
	var parts []string
	if refs > 0 {
		parts = append(parts, fmt.Sprintf("%d published number%s", refs, plural(refs)))
	}
	if verdicts > 0 {
		parts = append(parts, fmt.Sprintf("%d published verdict%s", verdicts, plural(verdicts)))
	}
	return strings.Join(parts, " and ")
}

// mislabelledLeftOut is the line under the reference table saying what
// mislabelled left out of a cluster run's study ("" when nothing).
func mislabelledLeftOut(e results.Env, s *study.Study) string {
	_, refs, verdicts := mislabelled(e, s)
	if refs+verdicts == 0 {
		return ""
	}
	return fmt.Sprintf("Left out of this report: the study's %s of %s, a name that stands for %s, not for the CNI this cluster ran (the header says so); study.yaml keeps them.",
		publishedCount(refs, verdicts), s.DatapathNames()[0], e.CNI.LabelStandsFor)
}

// mislabelled returns s without the published numbers and verdicts of
// its datapath where a cluster run measured another CNI under that name
// (env.json's cni.label_stands_for), and how many of each it left out;
// s itself is not changed. The kube engine leaves them out of the run's
// study.yaml (checkLabel); a run stored before it left out the
// references naming no datapath (rps-rfs's eight) still holds those, and
// set the paper's numbers beside the cluster's CNI. The rule is the
// engine's: the study has one datapath, the label, so a reference naming
// none is of it too; a published verdict names its datapath.
func mislabelled(e results.Env, s *study.Study) (out *study.Study, refs, verdicts int) {
	names := s.DatapathNames()
	if e.Engine != "kube" || e.CNI == nil || e.CNI.LabelStandsFor == "" || len(names) != 1 {
		return s, 0, 0
	}
	label := names[0]
	c := *s
	c.Spec.Reference = slices.DeleteFunc(slices.Clone(s.Spec.Reference), func(r study.Reference) bool { return r.Datapath == label || r.Datapath == "" })
	refs = len(s.Spec.Reference) - len(c.Spec.Reference)
	if v := s.Spec.Verdict; v != nil {
		cv := *v
		cv.Published = slices.DeleteFunc(slices.Clone(v.Published), func(p study.PublishedVerdict) bool { return p.Datapath == label })
		verdicts = len(v.Published) - len(cv.Published)
		c.Spec.Verdict = &cv
	}
	return &c, refs, verdicts
}
