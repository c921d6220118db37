package kube

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// Cilium chained after aws-cni is Cilium's eBPF over the AWS VPC CNI's
// wiring, a datapath the catalogue's cilium (Cilium's own veth and
// overlay datapath) does not stand for, though it claims every Cilium
// mode: the label check warns and leaves cilium's published numbers out,
// suggesting no label, and a study of several datapaths is not given
// cilium's.
func TestChainedCiliumLabel(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	chained := cnidetect.Detect(cnidetect.Input{ConfFiles: map[string]string{
		"05-cilium.conflist": `{"plugins":[{"type":"aws-cni"},{"type":"egress-v4-cni"},{"type":"portmap"},{"type":"cilium-cni"}]}`}, Links: []string{"cilium_host", "eth0"}})
	if chained.String() != "cilium (chained after aws-cni)" {
		t.Fatalf("detected %s", chained)
	}
	s, err := study.Resolve("cni-compare", study.Options{Set: []string{"datapaths=[cilium]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	w, standsFor := checkLabel(s, chained)
	if !strings.Contains(w, "the cells named cilium measure cilium (chained after aws-cni)") || strings.Contains(w, "--set datapaths=[") || standsFor != "cilium" ||
		slices.ContainsFunc(s.Spec.Reference, func(r study.Reference) bool { return r.Datapath == "cilium" }) {
		t.Errorf("cilium label on chained cilium: warning %q, stands for %q", w, standsFor)
	}
	s, err = study.Resolve("cni-compare", study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if note, err := pickDatapath(s, chained); err == nil || !strings.Contains(err.Error(), "none of them stands for this cluster's CNI, cilium (chained after aws-cni)") {
		t.Errorf("pickDatapath: note %q, err %v; want a refusal", note, err)
	}
}

// Calico with cilium-cni chained after it: Calico's devices with Cilium's
// BPF on every packet's path, a datapath the calico labels do not stand
// for either, so the label check warns and leaves their numbers out.
func TestCalicoWithCiliumChainedLabel(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	cni := cnidetect.Detect(cnidetect.Input{ConfFiles: map[string]string{
		"10-calico.conflist": `{"plugins":[{"type":"calico"},{"type":"portmap"},{"type":"cilium-cni"}]}`}, Links: []string{"eth0", "vxlan.calico"}})
	if cni.String() != "calico (vxlan) with cilium chained after it" {
		t.Fatalf("detected %s", cni)
	}
	s, err := study.Resolve("cni-compare", study.Options{Set: []string{"datapaths=[calico-wp-xsub]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := checkLabel(s, cni)
	if !strings.Contains(w, "a chained datapath no catalogue entry stands for") || strings.Contains(w, "--set datapaths=[") {
		t.Errorf("calico label on calico with cilium chained: warning %q", w)
	}
}
