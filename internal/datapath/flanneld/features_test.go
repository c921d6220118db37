package flanneld

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
)

// TestFeaturesNeedBrNetfilter: flanneld exits at start where a node's
// namespace has no /proc/sys/net/bridge/bridge-nf-call-iptables, whatever
// its backend, so doctor and preflight must not call these datapaths
// available on such a kernel.
func TestFeaturesNeedBrNetfilter(t *testing.T) {
	for _, b := range []string{"udp", "vxlan", "host-gw"} {
		if f := NewWithBackend(b).Features(); !slices.Contains(f, probe.BrNetfilter) {
			t.Errorf("flanneld with backend %s needs %v, without %s", b, f, probe.BrNetfilter)
		}
	}
}
