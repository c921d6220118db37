package analysis

import (
	"math"
	"testing"
)

// The seed-003 paper's saturated UDP receiver bitrates at 1 Gbit/s and
// MTU 1450 are the Ethernet bound of each backend's encapsulation: 923.0
// Mbit/s through VXLAN (50 bytes), 937.8 through flannel's UDP backend
// (28 bytes), for datagrams that fill the MTU (1422 bytes of payload).
func TestEthernetBoundMatchesPaper(t *testing.T) {
	for _, c := range []struct {
		name  string
		encap int
		paper float64
		want  float64
	}{
		{"vxlan", 50, 923.0e6, 1e9 * 1422 / 1538},
		{"udp", 28, 937.8e6, 1e9 * 1422 / 1516},
	} {
		b := EthernetBound(1e9, 1422, c.encap)
		if math.Abs(b-c.want) > 1 {
			t.Errorf("%s: bound %.1f, want %.1f", c.name, b, c.want)
		}
		if rel := math.Abs(b-c.paper) / c.paper; rel > 0.002 {
			t.Errorf("%s: bound %.1f Mbit/s is %.2f%% from the paper's %.1f", c.name, b/1e6, rel*100, c.paper/1e6)
		}
		t.Logf("%s: bound %.1f Mbit/s, paper %.1f", c.name, b/1e6, c.paper/1e6)
	}
}

// The impairment metrics have units.
func TestImpairmentMetricUnits(t *testing.T) {
	for m, want := range map[string]string{
		"node_cpu_percent_client": "%", "node_memory_percent_server": "%",
		"qdisc_dropped": "packets", "qdisc_sent_bytes": "B",
	} {
		if got := Unit(m); got != want {
			t.Errorf("Unit(%s) = %q, want %q", m, got, want)
		}
	}
}
