package app

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
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
	if got := affects(probe.ToolBird); !slices.Equal(got, []string{"datapath calico-routed (implementation: bird)", "datapath kube-router (implementation: bird)"}) {
		t.Errorf("affects(bird) = %v; the built-in studies use the static calico-routed and kube-router", got)
	}
	if got := affects(probe.ToolFlanneld); !slices.Contains(got, "datapath flannel-vxlan (implementation: flanneld)") {
		t.Errorf("affects(flanneld) = %v", got)
	}
}
