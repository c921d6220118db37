package weave

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/probe"
)

// Without br_netfilter the datapath still runs, as weave-kube does after
// a warning (the local engine asks for it only of an entry with
// netfilter:): neither mode's Features names it, and the note says what
// is lost (wire.BridgeNetfilterOn writes the missing sysctl without
// error).
func TestRunsWithoutBridgeNetfilter(t *testing.T) {
	for _, mode := range []string{ModeBridge, ModeOVS} {
		if f := (&Datapath{Mode: mode}).Features(); slices.Contains(f, probe.BrNetfilter) {
			t.Errorf("weave in %s mode: features %v name %s: every study with it is refused where the module is not loaded", mode, f, probe.BrNetfilter)
		}
	}
	if !strings.Contains(New().WithoutBrNetfilter(), "Weave") {
		t.Errorf("note %q", New().WithoutBrNetfilter())
	}
}

// TestSetupNodeTurnsOnBridgeNetfilter: weave-kube's init.sh sets
// net.bridge.bridge-nf-call-iptables=1, so SetupNode leaves the sysctl 1
// in the node's namespace even where it was 0: else the weave bridge's
// pod-to-pod packets skip iptables.
func TestSetupNodeTurnsOnBridgeNetfilter(t *testing.T) {
	dptest.SetupNodeSetsBridgeNetfilter(t, &Datapath{Mode: ModeBridge}, "weave-kube's init.sh")
}
