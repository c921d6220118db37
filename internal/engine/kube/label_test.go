package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// A server node without netem is refused once the CNI is known: the
// refusal names the datapath picked for it (flannel-vxlan of
// flannel-backends' two), and how to run without impairments.
func TestRefusalNamesThePickedDatapath(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	fs.set("", "sysfs", "class/net/flannel.1/ifindex", "5")
	fx := &fakeExec{fs: fs, dir: t.TempDir(), features: func(string, []string) map[string]string {
		return map[string]string{probe.Netem: "kernel lacks the sch_netem module"}
	}}
	s, err := study.Resolve("flannel-backends", study.Options{Profile: "quick"}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	needs := []engine.Need{{What: "impairments delay-low and 3 more at client-tunnel egress", Of: s.DatapathNames(), Field: "spec.impairments[1]", Features: []string{probe.Netem}, Without: "--profile quick-none"}}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, needs, pinReads{})
	if err != nil || nf.refused == nil || nf.cni.String() != "flannel (vxlan)" {
		t.Fatalf("preflight: %v, refused %+v, CNI %s: want a refusal and flannel (vxlan) recognised", err, nf.refused, nf.cni)
	}
	if _, err := pickDatapath(s, nf.cni); err != nil {
		t.Fatal(err)
	}
	got := nf.refused.refuse(s.DatapathNames()).Error()
	if want := "spec.impairments[1]: impairments delay-low and 3 more at client-tunnel egress of flannel-vxlan: node w1: "; !strings.HasPrefix(got, want) ||
		!strings.HasSuffix(got, "(to run without: --profile quick-none)") {
		t.Errorf("refusal %q, want it to start %q", got, want)
	}
}

// Preflight recognises the cluster's CNI from the server node's config
// files and devices, read through its agent, and the cluster's
// DaemonSets (the agent's own left out), before anything is created.
func TestPreflightRecognisesCNI(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	flannelDS := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "kube-flannel-ds"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "flannel/flannel:v0.28.4"}}}}}}
	ours := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultAgentNamespace, Name: "cnibench-agent-flannel", Labels: map[string]string{LabelManagedBy: ManagedBy}}}
	cs, place := kubeFixture(t, cfg, flannelDS, ours)
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "10-flannel.conflist"), []byte(`{"name":"cbr0","plugins":[{"type":"flannel"},{"type":"portmap"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := agentFS()
	fs.set("", "sysfs", "class/net/flannel.1/ifindex", "5")
	fx := &fakeExec{fs: fs, dir: t.TempDir(), cniDir: conf}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, nil, pinReads{})
	if err != nil {
		t.Fatal(err)
	}
	if nf.cni.String() != "flannel (vxlan)" {
		t.Errorf("detected %s, want flannel (vxlan)", nf.cni)
	}
	for _, ev := range []string{"cni config 10-flannel.conflist: plugins flannel,portmap", "daemonset kube-flannel/kube-flannel-ds", "device flannel.1"} {
		if !slices.Contains(nf.cni.Evidence, ev) {
			t.Errorf("evidence %q lacks %q", nf.cni.Evidence, ev)
		}
	}
	if strings.Contains(strings.Join(nf.cni.Evidence, " "), "cnibench-agent") {
		t.Errorf("the agent's own DaemonSet taken for evidence: %q", nf.cni.Evidence)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			t.Errorf("preflight created a %s", a.GetResource().Resource)
		}
	}
}

// Where the node has none of Calico's tunnel devices, the pool settings
// of calico-node's DaemonSet decide the mode: preflight reads the literal
// values of those variables (cnidetect.PoolEnv) and no others.
func TestPreflightReadsCalicoPoolEnv(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	calicoNode := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "calico-node"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "calico-node", Image: "docker.io/calico/node:v3.29",
			Env: []corev1.EnvVar{{Name: "CALICO_IPV4POOL_VXLAN", Value: "Always"}, {Name: "CALICO_IPV4POOL_IPIP", Value: "Never"},
				{Name: "DATASTORE_TYPE", Value: "kubernetes"},
				{Name: "NODENAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		}}}}}}
	cs, place := kubeFixture(t, cfg, calicoNode)
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "10-calico.conflist"), []byte(`{"plugins":[{"type":"calico"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), cniDir: conf}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, nil, pinReads{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "daemonset kube-system/calico-node: CALICO_IPV4POOL_VXLAN=Always"; nf.cni.String() != "calico (vxlan)" || !slices.Contains(nf.cni.Evidence, want) {
		t.Errorf("detected %s (evidence %q), want calico (vxlan) with %q", nf.cni, nf.cni.Evidence, want)
	}
	ds := daemonSets(context.Background(), cs)
	if len(ds) != 1 || len(ds[0].Env) != 2 || ds[0].Env["CALICO_IPV4POOL_IPIP"] != "Never" {
		t.Errorf("daemonSets() = %+v, want calico-node with its two pool variables alone", ds)
	}
}

// A datapath label that stands for another CNI than the cluster runs is
// said before the run, with the evidence and the label that fits; the
// papers' numbers and verdicts of the label are left out of the run's
// study (references naming no datapath too: the study's one datapath is
// the label, so they are its numbers), and a label that fits, claims
// no CNI, or meets an unknown CNI is left alone. The detected results
// come from cnidetect itself, so the catalogue's CNI names and modes are
// checked against what detection says.
func TestCheckLabel(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	load := func(name, datapath string) *study.Study {
		t.Helper()
		s, err := study.Resolve(name, study.Options{Set: []string{"datapaths=[" + datapath + "]"}}, cat)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bridgeConf := map[string]string{"10-bridge.conflist": `{"plugins":[{"type":"bridge"},{"type":"portmap"}]}`}
	flannelVXLAN := cnidetect.Detect(cnidetect.Input{Links: []string{"eth0", "flannel.1"}})
	flannelUDP := cnidetect.Detect(cnidetect.Input{Links: []string{"eth0", "flannel0"}})
	bridge := cnidetect.Detect(cnidetect.Input{ConfFiles: bridgeConf})
	calicoIPIP := cnidetect.Detect(cnidetect.Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"cali1", "tunl0"}})
	unknown := cnidetect.Detect(cnidetect.Input{})

	s := load("flannel-backends", "flannel-udp")
	refs, verdicts := len(s.Spec.Reference), len(s.Spec.Verdict.Published)
	w, standsFor := checkLabel(s, flannelVXLAN)
	t.Log(w)
	leftOut := fmt.Sprintf("the study's %d published numbers and %d published verdicts of flannel-udp are another datapath's",
		refs-len(s.Spec.Reference), verdicts-len(s.Spec.Verdict.Published))
	for _, want := range []string{
		"datapath flannel-udp stands for flannel (udp), but this cluster's CNI was detected as flannel (vxlan) (device flannel.1)",
		"the cells named flannel-udp measure flannel (vxlan)",
		leftOut,
		"left out of this run",
		"--set datapaths=[flannel-vxlan]",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	if standsFor != "flannel (udp)" {
		t.Errorf("stands for %q", standsFor)
	}
	if slices.ContainsFunc(s.Spec.Reference, func(r study.Reference) bool { return r.Datapath == "flannel-udp" }) ||
		slices.ContainsFunc(s.Spec.Verdict.Published, func(p study.PublishedVerdict) bool { return p.Datapath == "flannel-udp" }) {
		t.Error("flannel-udp's published numbers kept")
	}
	if len(s.Spec.Reference) == refs || len(s.Spec.Verdict.Published) == verdicts {
		t.Errorf("references %d -> %d, verdicts %d -> %d: nothing left out", refs, len(s.Spec.Reference), verdicts, len(s.Spec.Verdict.Published))
	}

	// rps-rfs's references name no datapath: they are the paper's
	// numbers of the one it runs, here calico-vxlan's, and go with it
	// (kept, the report set the paper's 90% beside Flannel's cells).
	s = load("rps-rfs", "calico-vxlan")
	refs = len(s.Spec.Reference)
	if refs == 0 || slices.ContainsFunc(s.Spec.Reference, func(r study.Reference) bool { return r.Datapath != "" }) {
		t.Fatalf("rps-rfs's %d references: want some, none naming a datapath", refs)
	}
	if w, _ := checkLabel(s, flannelVXLAN); len(s.Spec.Reference) != 0 ||
		!strings.Contains(w, fmt.Sprintf("the study's %d published numbers of calico-vxlan are another datapath's", refs)) {
		t.Errorf("rps-rfs as calico-vxlan on flannel (vxlan): %d of %d references kept; warning %q", len(s.Spec.Reference), refs, w)
	}

	// cni-compare's entry flannel is flannel-vxlan with Flannel's rules.
	s = load("cni-compare", "flannel")
	if w, _ := checkLabel(s, bridge); !strings.Contains(w, "datapath flannel stands for flannel (vxlan), but this cluster's CNI was detected as bridge") ||
		!strings.Contains(w, "--set datapaths=[bridge]") {
		t.Errorf("cni-compare's flannel on a bridge cluster: %q", w)
	}
	// A label without a datapath of the catalogue standing for the CNI
	// found gets no suggestion.
	if w, _ := checkLabel(load("cni-compare", "flannel"), calicoIPIP); !strings.Contains(w, "calico (ipip)") || !strings.Contains(w, "calico-ipip") {
		t.Errorf("flannel on calico ipip: %q", w)
	}

	for _, tc := range []struct {
		study, datapath string
		cni             cnidetect.Result
	}{
		{"flannel-backends", "flannel-udp", flannelUDP},
		{"flannel-backends", "flannel-vxlan", flannelVXLAN},
		{"rps-rfs", "bridge", bridge},
		{"cni-compare", "calico-wp-ipip", calicoIPIP},
		{"nic-modes", "macvlan", flannelVXLAN}, // macvlan names no CNI
		{"flannel-backends", "flannel-udp", unknown},
	} {
		s := load(tc.study, tc.datapath)
		refs := len(s.Spec.Reference)
		if w, standsFor := checkLabel(s, tc.cni); w != "" || standsFor != "" || len(s.Spec.Reference) != refs {
			t.Errorf("%s %s on %s: warned %q (stands for %q), %d of %d references kept", tc.study, tc.datapath, tc.cni, w, standsFor, len(s.Spec.Reference), refs)
		}
	}
}

// A study listing several datapaths runs on a cluster the one entry that
// stands for the CNI found, with a note; none, several or an unknown CNI
// is refused at spec.datapaths, naming the candidates and how to pick.
func TestPickDatapath(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	bridgeConf := map[string]string{"10-bridge.conflist": `{"plugins":[{"type":"bridge"},{"type":"portmap"}]}`}
	detected := map[string]cnidetect.Result{
		"flannel-vxlan": cnidetect.Detect(cnidetect.Input{Links: []string{"flannel.1"}}),
		"flannel-udp":   cnidetect.Detect(cnidetect.Input{Links: []string{"flannel0"}}),
		"bridge":        cnidetect.Detect(cnidetect.Input{ConfFiles: bridgeConf}),
		"calico-vxlan":  cnidetect.Detect(cnidetect.Input{Links: []string{"vxlan.calico"}}),
		"cilium-geneve": cnidetect.Detect(cnidetect.Input{Links: []string{"cilium_host", "cilium_geneve"}}),
		"weave":         cnidetect.Detect(cnidetect.Input{Links: []string{"weave", "vxlan-6784"}}),
		"weave-sleeve":  cnidetect.Detect(cnidetect.Input{Links: []string{"weave"}}),
		"unknown":       cnidetect.Detect(cnidetect.Input{Links: []string{"eth0"}}),
	}
	for _, tc := range []struct {
		study, cni string
		picked     string // "" for a refusal
		want       string // in the note or the refusal
	}{
		{"flannel-backends", "flannel-vxlan", "flannel-vxlan", "datapath flannel-vxlan picked of the study's 2 (flannel-vxlan, flannel-udp): the one that stands for this cluster's CNI, flannel (vxlan); --set datapaths=[NAME] picks another"},
		{"flannel-backends", "flannel-udp", "flannel-udp", "the one that stands for this cluster's CNI, flannel (udp)"},
		{"datapaths", "bridge", "bridge", "datapath bridge picked of the study's 17"},
		{"nic-modes", "bridge", "bridge", "datapath bridge picked"},
		{"cni-compare", "weave", "weave", "datapath weave picked"},
		{"cni-compare", "weave-sleeve", "", "none of them stands for this cluster's CNI, weave (sleeve)"},
		{"flannel-backends", "calico-vxlan", "", "this one lists 2 (flannel-vxlan, flannel-udp) and none of them stands for this cluster's CNI, calico (vxlan) (the catalogue's name for it: calico-vxlan): pick one with --set datapaths=[NAME]"},
		{"cni-compare", "flannel-vxlan", "", "flannel and flannel-off stand for this cluster's CNI, flannel (vxlan)"},
		{"datapaths", "cilium-geneve", "", "cilium and geneve stand for this cluster's CNI, cilium (geneve)"},
		{"datapaths", "unknown", "", "this cluster's CNI was not recognised"},
	} {
		s, err := study.Resolve(tc.study, study.Options{}, cat)
		if err != nil {
			t.Fatal(err)
		}
		note, err := pickDatapath(s, detected[tc.cni])
		got := note
		if tc.picked == "" {
			var at *study.FieldProblem
			if err == nil || !errors.As(err, &at) || at.Field != "spec.datapaths" {
				t.Errorf("%s on %s: %v, want a refusal at spec.datapaths", tc.study, tc.cni, err)
				continue
			}
			got = err.Error()
		} else if err != nil || len(s.Spec.Datapaths) != 1 || s.Spec.Datapaths[0].Name != tc.picked {
			t.Errorf("%s on %s: %v, datapaths %v, want %s alone", tc.study, tc.cni, err, s.DatapathNames(), tc.picked)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s on %s: %q lacks %q", tc.study, tc.cni, got, tc.want)
		}
	}
	// One datapath is the study's label, whatever the CNI (checkLabel
	// warns where it stands for another).
	s, err := study.Resolve("rps-rfs", study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	if note, err := pickDatapath(s, detected["flannel-vxlan"]); note != "" || err != nil || s.DatapathNames()[0] != "calico-vxlan" {
		t.Errorf("rps-rfs: %q %v %v", note, err, s.DatapathNames())
	}
}
