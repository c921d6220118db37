package flannelvxlan

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/probe"
)

// Without br_netfilter the datapath still runs (the local engine asks
// for it only of an entry with netfilter:): Features leaves it out,
// and the note says what is lost (wire.BridgeNetfilterOn writes
// the missing sysctl without error).
func TestRunsWithoutBridgeNetfilter(t *testing.T) {
	if f := New().Features(); slices.Contains(f, probe.BrNetfilter) {
		t.Errorf("flannel-vxlan's features %v name %s: every study with it is refused where the module is not loaded", f, probe.BrNetfilter)
	}
	if !strings.Contains(New().WithoutBrNetfilter(), "Flannel") {
		t.Errorf("note %q", New().WithoutBrNetfilter())
	}
}

// TestSetupNodeTurnsOnBridgeNetfilter: a Kubernetes node flanneld runs
// on has net.bridge.bridge-nf-call-iptables=1, so SetupNode leaves the
// sysctl 1 in the node's namespace even where it was 0: else cni0's
// pod-to-pod packets skip iptables.
func TestSetupNodeTurnsOnBridgeNetfilter(t *testing.T) {
	dptest.SetupNodeSetsBridgeNetfilter(t, New(), "a Kubernetes node flanneld runs on")
}
