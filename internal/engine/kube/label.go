package kube

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/study"
)

// checkLabel compares the study's datapath, the label of a cluster run's
// cells, with the CNI the cluster was found to run. Where the entry's
// type stands for another CNI (catalog.ClusterCNIs: flannel-udp on a
// cluster running Flannel's VXLAN), the run still measures the cluster's
// CNI under the label, so the papers' numbers the study keeps for that
// label (spec.reference and spec.verdict.published entries naming it) are
// of another datapath: they are left out of the run's study (its
// study.yaml then says what was compared), and the warning says so and
// how to name the cells for what runs. It returns the warning ("" when
// the label fits, claims no CNI, or the CNI is unknown) and what the
// label stands for.
func checkLabel(s *study.Study, cni cnidetect.Result) (warning, standsFor string) {
	if len(s.Spec.Datapaths) != 1 || cni.Name == "" || cni.Name == "unknown" {
		return "", ""
	}
	d := s.Spec.Datapaths[0]
	claims := catalog.ClusterCNIs(d.Type)
	if len(claims) == 0 || slices.ContainsFunc(claims, func(c catalog.CNI) bool { return c.Matches(cni.Name, cni.Mode) }) {
		return "", ""
	}
	names := make([]string, len(claims))
	for i, c := range claims {
		names[i] = c.String()
	}
	standsFor = strings.Join(names, " or ")
	refs, verdicts := dropPublished(s, d.Name)
	w := fmt.Sprintf("datapath %s stands for %s, but this cluster's CNI was detected as %s", d.Name, standsFor, cni)
	if len(cni.Evidence) > 0 {
		w += " (" + strings.Join(cni.Evidence, "; ") + ")"
	}
	w += fmt.Sprintf(": the cells named %s measure %s", d.Name, cni)
	var dropped []string
	if refs > 0 {
		dropped = append(dropped, fmt.Sprintf("%d published numbers", refs))
	}
	if verdicts > 0 {
		dropped = append(dropped, fmt.Sprintf("%d published verdicts", verdicts))
	}
	if len(dropped) > 0 {
		w += fmt.Sprintf(", so the study's %s of %s are another datapath's and are left out of this run", strings.Join(dropped, " and "), d.Name)
	}
	if fit := catalog.StandingFor(cni.Name, cni.Mode); len(fit) > 0 {
		w += fmt.Sprintf("; to name them for what runs: --set datapaths=[%s]", fit[0])
	}
	return w, standsFor
}

// dropPublished removes the published numbers and verdicts of datapath
// from s, returning how many of each it removed. Entries naming no
// datapath match every one, as they do on both engines, and stay.
func dropPublished(s *study.Study, datapath string) (refs, verdicts int) {
	n := len(s.Spec.Reference)
	s.Spec.Reference = slices.DeleteFunc(s.Spec.Reference, func(r study.Reference) bool { return r.Datapath == datapath })
	refs = n - len(s.Spec.Reference)
	if v := s.Spec.Verdict; v != nil {
		n = len(v.Published)
		v.Published = slices.DeleteFunc(v.Published, func(p study.PublishedVerdict) bool { return p.Datapath == datapath })
		verdicts = n - len(v.Published)
	}
	return refs, verdicts
}
