package localengine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/flannelvxlan"
	"github.com/cnibench/cnibench/internal/datapath/kuberouter"
	"github.com/cnibench/cnibench/internal/datapath/weave"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// withBrNetfilter makes this machine have bridge netfilter or not for
// the test.
func withBrNetfilter(t *testing.T, have bool) {
	old := brNetfilterMissing
	t.Cleanup(func() { brNetfilterMissing = old })
	brNetfilterMissing = func() error {
		if have {
			return nil
		}
		return &probe.UnsupportedError{Name: probe.BrNetfilter, Kind: probe.KindKernel, Reason: "br_netfilter is not loaded"}
	}
}

// entry is a study entry of d as the runner hands it to preflight.
func entry(d datapath.Datapath, nf *study.Netfilter) engine.Datapath {
	return engine.Datapath{Spec: study.Datapath{Name: d.Name(), Type: d.Name(), Netfilter: nf}, Built: d, Field: "spec.datapaths[0]", Features: d.Features()}
}

// flannel-vxlan and weave require br_netfilter only of an entry that
// measures its CNI's iptables state (netfilter:, cni-compare): the
// workloads study and every other entry run where the module is not
// loaded (stock Ubuntu or Debian without Docker or Kubernetes), with a
// note of what that loses. kube-router's datapath keeps asking for it.
func TestBrNetfilterOnlyWithNetfilter(t *testing.T) {
	nf := &study.Netfilter{CNI: "flannel"}
	for _, d := range []datapath.Datapath{flannelvxlan.New(), weave.New()} {
		for _, have := range []bool{true, false} {
			withBrNetfilter(t, have)
			plain := entry(d, nil)
			required, note := brNetfilter(plain)
			if required || slices.Contains(plain.Features, probe.BrNetfilter) {
				t.Errorf("%s without netfilter: requires br_netfilter (features %v)", d.Name(), plain.Features)
			}
			if want := !have; (note != "") != want ||
				(want && !strings.HasPrefix(note, d.Name()+": bridge netfilter unavailable: bridged pod-to-pod packets on one node skip iptables, unlike a real ")) ||
				(want && !strings.HasSuffix(note, "; modprobe br_netfilter to match it")) {
				t.Errorf("%s without netfilter:, br_netfilter %v: note %q", d.Name(), have, note)
			}
			if required, note := brNetfilter(entry(d, nf)); !required || note != "" {
				t.Errorf("%s with netfilter:, br_netfilter %v: required %v, note %q", d.Name(), have, required, note)
			}
		}
	}
	kr := entry(kuberouter.New(), nil)
	if required, note := brNetfilter(kr); required || note != "" || !slices.Contains(kr.Features, probe.BrNetfilter) {
		t.Errorf("kube-router: required %v, note %q, features %v", required, note, kr.Features)
	}
}

// Preflight without br_netfilter: an entry without netfilter: runs and
// env.json's notes say so (once for two entries of one type); one with
// it is refused at its field with why, or skipped with skipUnavailable.
func TestPreflightWithoutBrNetfilter(t *testing.T) {
	withBrNetfilter(t, false)
	plain := entry(flannelvxlan.New(), nil)
	plain.Features = nil // the probes of veth and vxlan need root
	off := plain
	off.Spec.Name = "flannel-off"
	s := &study.Study{}
	f := &engine.Facts{}
	if err := (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{plain, off}}, f); err != nil {
		t.Fatalf("without netfilter: %v", err)
	}
	if len(s.Spec.Datapaths) != 2 || len(f.Notes) != 1 || !strings.HasPrefix(f.Notes[0], "flannel-vxlan: bridge netfilter unavailable") {
		t.Errorf("without netfilter: kept %v, notes %q", s.Spec.Datapaths, f.Notes)
	}
	measured := plain
	measured.Spec.Name, measured.Spec.Netfilter = "flannel", &study.Netfilter{CNI: "flannel"}
	s, f = &study.Study{}, &engine.Facts{}
	err := (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{measured, off}}, f)
	var ue *probe.UnsupportedError
	if err == nil || !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "spec.datapaths[0]: datapath flannel: its netfilter state (netfilter:) is measured") {
		t.Errorf("with netfilter: %v", err)
	}
	s.Spec.SkipUnavailable = true
	if err := (&Engine{}).datapaths(s, engine.Needs{Datapaths: []engine.Datapath{measured, off}}, f); err != nil ||
		len(s.Spec.Datapaths) != 1 || s.Spec.Datapaths[0].Name != "flannel-off" {
		t.Errorf("with netfilter: and skipUnavailable: %v, kept %v", err, s.Spec.Datapaths)
	}
}
