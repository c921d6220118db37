package kuberouter

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestSetupNodeTurnsOnBridgeNetfilter: kube-router sets
// net.bridge.bridge-nf-call-iptables=1 once kube-bridge is up, so SetupNode
// must leave it 1 in the node's namespace even where it was 0, and both
// datapaths ask for br_netfilter.
func TestSetupNodeTurnsOnBridgeNetfilter(t *testing.T) {
	for _, d := range []datapath.Datapath{New(), NewBIRD()} {
		if !slices.Contains(d.Features(), probe.BrNetfilter) {
			t.Errorf("%T needs %v, without %s", d, d.Features(), probe.BrNetfilter)
		}
	}
	dptest.SetupNodeSetsBridgeNetfilter(t, New(), "kube-router")
}
