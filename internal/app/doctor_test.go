package app

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/runner"
)

// doctor lists the implementation variants as datapaths of their own, and
// a tool only they need names them, not the builtin datapath's studies.
func TestDoctorListsImplementations(t *testing.T) {
	var row *doctorDatapath
	for _, d := range datapaths() {
		if d.label == "calico-routed (implementation: bird)" {
			row = &d
		}
	}
	if row == nil || !slices.Contains(row.features, probe.ToolBird) {
		t.Fatalf("doctor's datapaths: no calico-routed by bird needing the bird tool: %+v", row)
	}
	n := builtinNeeds(datapaths(), runner.LocalNeeds)
	if got := n.affects(probe.ToolBird); !slices.Equal(got.datapaths, []string{"calico-routed (implementation: bird)", "kube-router (implementation: bird)"}) || len(got.studies) != 0 {
		t.Errorf("affects(bird) = %v; the built-in studies use the static calico-routed and kube-router", got)
	}
	if got := n.affects(probe.ToolFlanneld); !slices.Contains(got.datapaths, "flannel-vxlan (implementation: flanneld)") {
		t.Errorf("affects(flanneld) = %v", got)
	}
}

// TestDoctorFitsTerminal: doctor reads in a 100-column terminal, however
// long a check's reason and what it affects (issue: 250-character lines).
func TestDoctorFitsTerminal(t *testing.T) {
	long := strings.Repeat("the kernel lacks a module that a long explanation names ", 6)
	res := []probe.Result{
		{Name: "root", Kind: "privilege", OK: true},
		{Name: probe.Veth, Kind: "kernel", OK: false, Detail: long},
		{Name: "cni-loopback", Kind: "cni-plugin", OK: false, Detail: long + "/a/very/long/path/without/spaces/" + strings.Repeat("x", 40)},
	}
	var b bytes.Buffer
	if err := writeDoctor(&b, res); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(b.String(), "\n") {
		if len(line) > doctorWidth {
			t.Errorf("line %d is %d columns: %q", i+1, len(line), line)
		}
	}
	if !strings.Contains(b.String(), "affects datapaths:") || !strings.Contains(b.String(), "why unavailable:") {
		t.Errorf("doctor no longer says what a missing check affects:\n%s", b.String())
	}
}

// TestDoctorListsAToolOnce: nft is both a probed tool (kube-proxy's
// nftables mode) and a workload collector's program; doctor checks it
// once.
func TestDoctorListsAToolOnce(t *testing.T) {
	res := []probe.Result{
		{Name: probe.ToolNft, Kind: probe.KindTool, OK: true, Detail: "nftables v1 at /usr/sbin/nft"},
		{Name: "iperf3", Kind: probe.KindTool, OK: true},
		{Name: probe.ToolNft, Kind: probe.KindTool, OK: true, Detail: "nftables v1 at /usr/sbin/nft"},
	}
	var b bytes.Buffer
	if err := writeDoctor(&b, uniqueChecks(res)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\nnft "); n != 1 {
		t.Errorf("nft listed %d times:\n%s", n, b.String())
	}
}

// doctor --engine kube checks the cluster itself first: unreachable, it
// says so once (exit 2, as run's preflight), with no table of studies
// that would all say the same; an unknown engine is bad input.
func TestDoctorKubeUnreachable(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"doctor", "--engine", "kube", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), "cluster unreachable") || strings.Count(errb.String(), "\n") != 1 || strings.Contains(out.String(), "STUDY") {
		t.Errorf("unreachable: exit %d, stderr %q, stdout %q; want 2, one line, no table", code, errb.String(), out.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main(context.Background(), []string{"doctor", "--engine", "bogus"}, &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), `unknown engine "bogus"`) {
		t.Errorf("bogus engine: exit %d, stderr %q", code, errb.String())
	}
}
