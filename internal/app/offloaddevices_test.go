package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// offloadDevices: tunnel on a datapath without a tunnel device is bad
// input, refused before anything is built (exit 2) on the entry's field;
// on a datapath with one, or narrowed to the underlay, it is fine.
func TestOffloadDevicesNeedATunnel(t *testing.T) {
	file := func(entry string) string { return oneEntryStudy("offload-devices", entry) }
	for entry, bad := range map[string]bool{
		"{type: bridge, offloads: {gro: off}, offloadDevices: tunnel}":       true,
		"{type: macvlan, offloads: {gro: off}, offloadDevices: tunnel}":      true,
		"{type: bridge, offloads: {gro: off}, offloadDevices: underlay}":     false,
		"{type: bridge, offloads: {gro: off}}":                               false,
		"{type: calico-vxlan, offloads: {gro: off}, offloadDevices: tunnel}": false,
		"{type: calico-ipip, offloads: {gro: off}, offloadDevices: tunnel}":  false,
	} {
		_, err := study.Parse("o.yaml", []byte(file(entry)), study.Options{}, studyCatalog())
		if got := err != nil; got != bad {
			t.Errorf("%s: refused %v, want %v: %v", entry, got, bad, err)
			continue
		}
		if bad && !strings.Contains(err.Error(), "o.yaml:6: spec.datapaths[0].offloadDevices: datapath ") ||
			bad && !strings.Contains(err.Error(), "has no tunnel device for the offloads to go on; use offloadDevices underlay") {
			t.Errorf("%s: %v", entry, err)
		}
	}
	dryRunRefused(t, file("{type: bridge, offloads: {gro: off}, offloadDevices: tunnel}"), "has no tunnel device")
}
