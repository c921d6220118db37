package localengine

import (
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/flannelvxlan"
	"github.com/cnibench/cnibench/internal/datapath/weave"
	"github.com/cnibench/cnibench/internal/results"
)

// The datapath's env.json entry says which form weave built: OVS's
// datapath, its CNI's own, or the Linux bridge standing in for it, with
// what that changes (a second netfilter pass); a datapath of one form
// records neither.
func TestRecordModeSaysWhatWeaveBuilt(t *testing.T) {
	var de results.DatapathEnv
	recordMode(&de, &weave.Datapath{Mode: weave.ModeBridge})
	if de.Mode != weave.ModeBridge || de.StandIn != weave.BridgeStandIn {
		t.Errorf("bridge mode: recorded mode %q, stand-in %q", de.Mode, de.StandIn)
	}
	de = results.DatapathEnv{}
	recordMode(&de, &weave.Datapath{Mode: weave.ModeOVS})
	if de.Mode != weave.ModeOVS || de.StandIn != "" {
		t.Errorf("OVS mode: recorded mode %q, stand-in %q, want ovs and none", de.Mode, de.StandIn)
	}
	de = results.DatapathEnv{}
	recordMode(&de, flannelvxlan.New())
	if de.Mode != "" || de.StandIn != "" {
		t.Errorf("flannel-vxlan: recorded mode %q, stand-in %q, want none", de.Mode, de.StandIn)
	}
}
