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
// it is fine. On a datapath that is not Calico's the refusal names
// Calico's datapath, not native routing's rules, which would be refused
// there in turn (they need Calico's veths, cali+).
func TestNetfilterTunnelRulesNeedATunnel(t *testing.T) {
	file := func(entry string) string { return oneEntryStudy("netfilter-tunnel", entry) }
	const noTunnel = "has no tunnel device: that rule would never match (use a datapath with a tunnel, such as calico-ipip, or native routing's rules, calico-np-xsub)"
	for entry, want := range map[string]string{
		"{type: calico-routed, netfilter: {cni: calico-np-ipip}}": noTunnel,
		"{type: bridge, netfilter: {cni: calico-wp-ipip}}":        "has no cali+",
		"{type: kube-router, netfilter: {cni: calico-np-ipip}}":   "use the calico-ipip datapath",
		"{type: calico-ipip, netfilter: {cni: calico-np-ipip}}":   "",
		"{type: calico-vxlan, netfilter: {cni: calico-wp-ipip}}":  "",
		"{type: calico-routed, netfilter: {cni: calico-np-xsub}}": "",
	} {
		_, err := study.Parse("n.yaml", []byte(file(entry)), study.Options{}, studyCatalog())
		if got := err != nil; got != (want != "") {
			t.Errorf("%s: refused %v, want %v: %v", entry, got, want != "", err)
			continue
		}
		if want != "" && (!strings.Contains(err.Error(), "n.yaml:6: spec.datapaths[0].netfilter.cni: datapath ") ||
			!strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", entry, err, want)
		}
		if want != "" && !strings.HasPrefix(entry, "{type: calico") && strings.Contains(err.Error(), "-xsub") {
			t.Errorf("%s: suggests native routing's rules, which this datapath refuses too: %v", entry, err)
		}
	}
	dryRunRefused(t, file("{type: calico-routed, netfilter: {cni: calico-np-ipip}}"), "has no tunnel device")
}
