package localengine

import (
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/results"
)

// recordMode writes into de which form of its CNI's datapath d built,
// for a datapath that builds one of several (datapath.Moded: weave's OVS
// datapath or the Linux bridge standing in for it where the kernel lacks
// openvswitch). Without it a run of weave could not say whether its
// numbers carry OVS's cost or the stand-in bridge's second netfilter
// pass.
func recordMode(de *results.DatapathEnv, d datapath.Datapath) {
	if m, ok := d.(datapath.Moded); ok {
		de.Mode, de.StandIn = m.BuiltMode()
	}
}
