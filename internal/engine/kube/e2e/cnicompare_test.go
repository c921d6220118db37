package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// TestKubeCNICompareQuick first has preflight pick a study's datapath by
// the cluster's CNI, then runs the built-in cni-compare study's quick
// profile on the cluster as a user would, with one of its datapath
// entries as the label: every workload runs (qperf through the Service's
// second port, background load on pods of its own, HTTP, pod start-up),
// the entry's emulation fields are left out with a note, the label's
// mismatch with the cluster's CNI is said, and the pod-path workloads
// bypass the Service that svc-inter goes through.
func TestKubeCNICompareQuick(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	// A study of several datapaths runs the one standing for the
	// cluster's CNI (the bridge plugin here), or says none does.
	out, err := c.cnibench(append([]string{"run", "datapaths", "--quick", "--dry-run"}, kubeArgs()...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "note: datapath bridge picked of the study's 17") {
		t.Errorf("datapaths --dry-run: %v\n%s", err, out)
	}
	out, err = c.cnibench(append([]string{"run", "flannel-backends", "--profile", "quick-none", "--dry-run"}, kubeArgs()...)...).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "spec.datapaths: the kube engine measures the cluster's own CNI, so a study runs one datapath there; this one lists 2 (flannel-vxlan, flannel-udp) and none of them stands for this cluster's CNI, bridge") {
		t.Errorf("flannel-backends --dry-run: %v\n%s", err, out)
	}
	// doctor --engine kube: every built-in study's preflight on the
	// cluster, in one table.
	start := time.Now()
	out, err = c.cnibench(append([]string{"doctor"}, kubeArgs()...)...).CombinedOutput()
	t.Logf("doctor --engine kube took %v:\n%s", time.Since(start), out)
	rowRE := func(study, profile, runs string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^` + study + ` +` + regexp.QuoteMeta(profile) + ` +` + regexp.QuoteMeta(runs) + `  `)
	}
	for _, re := range []*regexp.Regexp{rowRE("datapaths", "quick", "yes, as bridge"), rowRE("flannel-backends", "quick-none", "no"), rowRE("rps-rfs", "quick", "yes")} {
		if err != nil || !re.Match(out) {
			t.Errorf("doctor --engine kube: %v; no row matching %s", err, re)
		}
	}
	for _, want := range []string{"cluster: reachable, permissions granted; server node " + serverNode, "rps-rfs (default), paper, quick: runs; warning: datapath calico-vxlan stands for calico (vxlan)"} {
		if !strings.Contains(strings.Join(strings.Fields(string(out)), " "), want) {
			t.Errorf("doctor --engine kube lacks %q", want)
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	start = time.Now()
	out, err = c.cnibench(append([]string{"run", "cni-compare", "--quick", "--set", "datapaths=[flannel]", "--out", dir}, kubeArgs()...)...).CombinedOutput()
	t.Logf("run took %v:\n%s", time.Since(start), tail(out, 3000))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Env.Notes, "datapath flannel: mtu, netfilter shape the local engine's emulated nodes and are not applied on a cluster, whose CNI and NICs decide them; the cells keep the name flannel") {
		t.Errorf("env notes do not say what of the entry was left out: %v", r.Env.Notes)
	}
	// The test cluster's CNI is the bridge plugin, and cni-compare's
	// flannel stands for Flannel's VXLAN: said before the run, in the
	// notes and the report, and the paper's flannel numbers left out.
	label := "warning: datapath flannel stands for flannel (vxlan), but this cluster's CNI was detected as bridge"
	if !strings.Contains(string(out), label) || !strings.Contains(string(out), "--set datapaths=[bridge]") {
		t.Errorf("the run did not say its label stands for another CNI (%q)", label)
	}
	if r.Env.CNI == nil || r.Env.CNI.Name != "bridge" || r.Env.CNI.LabelStandsFor != "flannel (vxlan)" {
		t.Errorf("env.json cni %+v, want bridge with the label standing for flannel (vxlan)", r.Env.CNI)
	}
	// flannel's own, not flannel-off's, which the cni-compare study also has.
	if regexp.MustCompile(`(?m)datapath: flannel(\s*$|[,}])`).Match(r.Study) {
		t.Errorf("the run's study.yaml keeps the paper's flannel numbers")
	}
	// The other datapaths' published numbers are one line under the
	// reference table, not rows of "not measured".
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Left out of this table: the published numbers of datapaths this run did not measure (") ||
		strings.Contains(string(md), "this run measured no datapath") {
		t.Errorf("summary.md lists the unmeasured datapaths' published numbers as rows, or says nothing of them:\n%s", md)
	}
	got := map[string]map[string]float64{}
	for _, s := range r.Samples {
		if s.Cell.Datapath != "flannel" {
			t.Errorf("cell %+v: want the datapath label flannel", s.Cell)
		}
		got[s.Cell.Workload] = s.Metrics
	}
	for wl, key := range map[string]string{
		"tcp-inter": "bitrate", "tcp-intra": "bitrate", "svc-inter": "bitrate", "rr-inter": "transactions_per_s",
		"bg-inter@bg0": "bitrate", "bg-inter@bg20": "background_bitrate_bps", "http@c1": "requests_per_s",
		"http@c8": "requests_per_s", "startup@c1": "startup_ms", "startup@c10": "startup_ms",
	} {
		if got[wl][key] <= 0 {
			t.Errorf("%s: %s = %v (metrics %v)", wl, key, got[wl][key], got[wl])
		}
	}
	if n := got["bg-inter@bg20"]["background_connections_count"]; n != 20 {
		t.Errorf("bg-inter@bg20: %v background connections, want 20", n)
	}
	// Through the Service the traced path adds kube-proxy's Service
	// chains (KUBE-SVC-*, KUBE-SEP-*), which the pod path never enters.
	if pod, svc := got["tcp-inter"]["trace_path_chains_count"], got["svc-inter"]["trace_path_chains_count"]; !(pod > 0 && svc > pod) {
		t.Errorf("traced chains: pod path %v, Service path %v; want the Service's more", pod, svc)
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)
	if strings.Contains(string(out), "cannot run") {
		t.Errorf("a workload was refused:\n%s", out)
	}
}
