package compare

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// Two runs whose impairment of one name installed another netem, or at
// another place, differ in it: compare pairs their cells by the name.
// Devices and datapath labels are no difference, nor a run before the
// record.
func TestImpairmentDifferences(t *testing.T) {
	low := func(dp, dev, netem, where string) results.ImpairmentSetting {
		return results.ImpairmentSetting{Datapath: dp, Where: where, Direction: "egress", Devices: []string{dev}, Netem: netem}
	}
	a := results.Env{Impairments: map[string][]results.ImpairmentSetting{
		"delay-low": {low("flannel-vxlan", "flannel.1", "delay 10ms 1ms 25% limit 1000", "client-tunnel")},
		"loss-low":  {low("flannel-vxlan", "veth1", "loss 5% limit 1000", "client-pods")},
		"onlyA":     {low("flannel-vxlan", "eth1", "loss 1% limit 1000", "underlay")},
	}}
	b := results.Env{Impairments: map[string][]results.ImpairmentSetting{
		"delay-low": {low("flannel-udp", "eth1", "delay 10ms 1ms 25% limit 2891", "underlay")},
		"loss-low":  {low("flannel-udp", "veth7", "loss 5% limit 1000", "client-pods")},
	}}
	want := "impairment delay-low delay 10ms 1ms 25% limit 1000 at client-tunnel egress / delay 10ms 1ms 25% limit 2891 at underlay egress"
	if got := strings.Join(Differences(a, b, nil), "; "); got != want {
		t.Errorf("differ: %q, want %q", got, want)
	}
	if d := Differences(a, results.Env{}, nil); len(d) != 0 {
		t.Errorf("a run without the record: %q", d)
	}
}
