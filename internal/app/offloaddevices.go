package app

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
)

// checkOffloadDevices refuses offloadDevices: tunnel on a datapath whose
// nodes have no tunnel device: the offloads would go nowhere, which the
// run would find only once the datapath is built. Whether a datapath has
// one is the built datapath's to say (Weave's depends on its mode).
func checkOffloadDevices(d study.Datapath, problems map[string]string) {
	if !d.OffloadsOnTunnel() || d.OffloadsOnUnderlay() || len(d.Offloads) == 0 {
		return
	}
	if tunnel, ok := entryTunnel(d); !ok || tunnel != "" {
		return // a datapath that does not build is Check's to report
	}
	var with []string
	for _, c := range catalog.All() {
		if c.Tunnel() != "" {
			with = append(with, c.Name())
		}
	}
	problems["offloadDevices"] = fmt.Sprintf("datapath %s has no tunnel device for the offloads to go on; use offloadDevices %s (or all), or a datapath with one (%s)",
		d.Type, study.OffloadsUnderlay, strings.Join(with, ", "))
}
