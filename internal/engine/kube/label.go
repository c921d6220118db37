package kube

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/study"
)

// pickDatapath leaves the one datapath entry a cluster run measures: a
// cluster runs one CNI, so a study listing several (flannel-backends'
// VXLAN and UDP, the datapaths study's seventeen) runs there the one entry
// that stands for the CNI found (catalog.ClusterCNIs), with a note saying
// so. Where none or several do, or the CNI is unknown, it refuses at
// spec.datapaths, naming the candidates: --set datapaths=[NAME] picks one
// (any name: on a cluster it is a label).
func pickDatapath(s *study.Study, cni cnidetect.Result) (note string, err error) {
	dps := s.Spec.Datapaths
	if len(dps) == 1 {
		return "", nil
	}
	var fit []int
	for i, d := range dps {
		if fits(d.Type, cni) {
			fit = append(fit, i)
		}
	}
	names := strings.Join(s.DatapathNames(), ", ")
	if len(fit) == 1 {
		d := dps[fit[0]]
		s.Spec.Datapaths = []study.Datapath{d}
		return fmt.Sprintf("datapath %s picked of the study's %d (%s): the one that stands for this cluster's CNI, %s; --set datapaths=[NAME] picks another", d.Name, len(dps), names, cni), nil
	}
	why := "none of them stands for this cluster's CNI, " + cni.String()
	switch {
	case !known(cni):
		why = "this cluster's CNI was not recognised"
		if len(cni.Evidence) > 0 {
			why += " (" + strings.Join(cni.Evidence, "; ") + ")"
		}
	case len(fit) > 1:
		var several []string
		for _, i := range fit {
			several = append(several, dps[i].Name)
		}
		why = fmt.Sprintf("%s stand for this cluster's CNI, %s", strings.Join(several, " and "), cni)
	default:
		if c := standingFor(cni); len(c) > 0 {
			why += " (the catalogue's name for it: " + c[0] + ")"
		}
	}
	return "", study.At("spec.datapaths", fmt.Errorf("the kube engine measures the cluster's own CNI, so a study runs one datapath there; this one lists %d (%s) and %s: pick one with --set datapaths=[NAME]",
		len(dps), names, why))
}

// checkLabel compares the study's datapath, the label of a cluster run's
// cells, with the CNI the cluster was found to run. Where the entry's
// type stands for another CNI (catalog.ClusterCNIs: flannel-udp on a
// cluster running Flannel's VXLAN), the run still measures the cluster's
// CNI under the label, so the papers' numbers the study keeps for that
// label (spec.reference entries naming it or no datapath,
// spec.verdict.published entries naming it) are of another datapath:
// they are left out of the run's study (its study.yaml then says what
// was compared), and the warning says so and
// how to name the cells for what runs. It returns the warning ("" when
// the label fits, claims no CNI, or the CNI is unknown) and what the
// label stands for.
func checkLabel(s *study.Study, cni cnidetect.Result) (warning, standsFor string) {
	if len(s.Spec.Datapaths) != 1 || !known(cni) {
		return "", ""
	}
	d := s.Spec.Datapaths[0]
	claims := catalog.ClusterCNIs(d.Type)
	if len(claims) == 0 || fits(d.Type, cni) {
		return "", ""
	}
	names := make([]string, len(claims))
	for i, c := range claims {
		names[i] = c.String()
	}
	standsFor = strings.Join(names, " or ")
	refs, verdicts := dropPublished(s, d.Name)
	w := fmt.Sprintf("datapath %s stands for %s, but this cluster's CNI was detected as %s", d.Name, standsFor, cni)
	if chained(cni) {
		w = fmt.Sprintf("datapath %s stands for %s on its own, but this cluster runs %s, a chained datapath no catalogue entry stands for",
			d.Name, standsFor, cni)
	}
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
	if fit := standingFor(cni); len(fit) > 0 {
		w += fmt.Sprintf("; to name them for what runs: --set datapaths=[%s]", fit[0])
	}
	return w, standsFor
}

// dropPublished removes the published numbers and verdicts of datapath
// from s, the study's one datapath (checkLabel), returning how many of
// each it removed. References naming no datapath go too: they match
// every datapath of the study, here only the mislabelled one, so they
// are the paper's numbers of what the label stands for (rps-rfs's eight
// name none; kept, they set the paper's 90% beside another CNI's
// cells). A published verdict always names its datapath (withPaper
// matches it exactly).
func dropPublished(s *study.Study, datapath string) (refs, verdicts int) {
	n := len(s.Spec.Reference)
	s.Spec.Reference = slices.DeleteFunc(s.Spec.Reference, func(r study.Reference) bool { return r.Datapath == datapath || r.Datapath == "" })
	refs = n - len(s.Spec.Reference)
	if v := s.Spec.Verdict; v != nil {
		n = len(v.Published)
		v.Published = slices.DeleteFunc(v.Published, func(p study.PublishedVerdict) bool { return p.Datapath == datapath })
		verdicts = n - len(v.Published)
	}
	return refs, verdicts
}

// known says whether detection recognised the CNI: an unknown one is
// neither matched nor checked against.
func known(cni cnidetect.Result) bool { return cni.Name != "" && cni.Name != "unknown" }

// chained says the CNI runs chained with another (cnidetect: Cilium
// "chained after aws-cni", or Calico "with cilium chained after it"): a
// datapath of its own, one plugin's devices with the other's eBPF on
// them, that no catalogue datapath stands for, though the catalogue's
// entry for either CNI claims every mode of it (cilium: its own veth and
// overlay datapath, whose published numbers are not this one's).
func chained(cni cnidetect.Result) bool {
	return strings.HasPrefix(cni.Mode, "chained") || cni.Chained != ""
}

// fits is catalog.StandsFor for the detected CNI, false for a
// chained one.
func fits(datapath string, cni cnidetect.Result) bool {
	return !chained(cni) && catalog.StandsFor(datapath, cni.Name, cni.Mode)
}

// standingFor is catalog.StandingFor for the detected CNI, none for a
// chained one.
func standingFor(cni cnidetect.Result) []string {
	if chained(cni) {
		return nil
	}
	return catalog.StandingFor(cni.Name, cni.Mode)
}
