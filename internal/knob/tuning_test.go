package knob

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// A tuning goes on the server node's underlay, tunnel and the measured
// pods' veths (the paper's host side), or on the underlay alone with
// devices: underlay (what advise's rfs candidate changes, so its A/B
// measures that).
func TestTuningTargetDevices(t *testing.T) {
	srv := &fakeNode{name: "w1", veths: []netns.Iface{{Name: "cali1"}, {Name: "cali2"}}}
	for _, c := range []struct {
		devices string
		want    []string
	}{
		{"", []string{"eth0", "flannel.1", "cali1", "cali2"}},
		{study.DevicesNode, []string{"eth0", "flannel.1", "cali1", "cali2"}},
		{study.DevicesUnderlay, []string{"eth0"}},
	} {
		tu := study.Tuning{Name: "rfs", RPS: &study.RPS{CPUs: study.CPUsAll}, Devices: c.devices}
		tgt, err := tuningTarget(&Target{Cluster: fakeCluster{srv: srv, cli: &fakeNode{name: "w2"}}, Tuning: tu})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range tgt.NodeIfaces {
			got = append(got, i.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("devices %q: tuned %v, want %v", c.devices, got, c.want)
		}
	}
}
