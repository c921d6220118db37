package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// Calico's IP-in-IP rules (calico-*-ipip) masquerade packets leaving by
// the tunnel device; on a datapath without one they were installed with
// tunl0, a device no packet leaves by, and counted, saying nothing. The
// pair is bad input, refused before anything is built (exit 2) on the
// entry's netfilter.cni; with a tunnel, or with native routing's rules,
// it is fine.
func TestNetfilterTunnelRulesNeedATunnel(t *testing.T) {
	file := func(entry string) string { return oneEntryStudy("netfilter-tunnel", entry) }
	for entry, bad := range map[string]bool{
		"{type: calico-routed, netfilter: {cni: calico-np-ipip}}": true,
		"{type: bridge, netfilter: {cni: calico-wp-ipip}}":        true,
		"{type: calico-ipip, netfilter: {cni: calico-np-ipip}}":   false,
		"{type: calico-vxlan, netfilter: {cni: calico-wp-ipip}}":  false,
		"{type: calico-routed, netfilter: {cni: calico-np-xsub}}": false,
	} {
		_, err := study.Parse("n.yaml", []byte(file(entry)), study.Options{}, studyCatalog())
		if got := err != nil; got != bad {
			t.Errorf("%s: refused %v, want %v: %v", entry, got, bad, err)
			continue
		}
		if bad && (!strings.Contains(err.Error(), "n.yaml:6: spec.datapaths[0].netfilter.cni: datapath ") ||
			!strings.Contains(err.Error(), "has no tunnel device: that rule would never match")) {
			t.Errorf("%s: %v", entry, err)
		}
	}
	dryRunRefused(t, file("{type: calico-routed, netfilter: {cni: calico-np-ipip}}"), "has no tunnel device")
}
