package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// A CNI's rules that match pods' traffic on their bridge (weave,
// kube-router) on a datapath whose pods hang off no Linux bridge, or
// Cilium's rules, which name Cilium's own devices, on any datapath but
// cilium (and Calico's, which dispatch by cali+, on any but Calico's),
// were refused only once the datapath was built (exit 1), or
// for Cilium not at all: the rules went in and never matched. What a
// datapath's nodes have is fixed by its type, so the pair is bad input,
// refused before anything is built (exit 2) on the entry's
// netfilter.cni, as is any CNI's state on a datapath whose pods have no
// host-side device, which the knob refuses too.
func TestNetfilterRulesFitTheDatapath(t *testing.T) {
	file := func(entry string) string { return oneEntryStudy("netfilter-fits", entry) }
	const bridge, cilium, calico, peers = "puts its pods on no Linux bridge", "has no cilium_host", "has no cali+", "no peer on the node"
	for entry, want := range map[string]string{
		"{type: calico-routed, netfilter: {cni: weave}}":                           bridge,
		"{type: ovs, netfilter: {cni: kube-router}}":                               bridge,
		"{type: cilium, netfilter: {cni: kube-router}}":                            bridge,
		"{type: bridge, netfilter: {cni: cilium}}":                                 cilium,
		"{type: geneve, netfilter: {cni: cilium-kpr, kubeProxy: cilium}}":          cilium,
		"{type: calico-vxlan, netfilter: {cni: cilium}}":                           cilium,
		"{type: macvlan, netfilter: {cni: flannel}}":                               peers,
		"{type: ipvlan-l3, netfilter: {cni: calico-np-xsub}}":                      peers,
		"{type: host, netfilter: {cni: flannel}}":                                  "use the node's network",
		"{type: bridge, netfilter: {cni: kube-router}}":                            "",
		"{type: flannel-vxlan, netfilter: {cni: weave}}":                           "",
		"{type: weave, netfilter: {cni: weave}}":                                   "",
		"{type: kube-router, implementation: bird, netfilter: {cni: kube-router}}": "",
		"{type: bridge, implementation: flanneld, netfilter: {cni: kube-router}}":  "",
		"{type: cilium, netfilter: {cni: cilium}}":                                 "",
		"{type: cilium, netfilter: {cni: cilium-kpr, kubeProxy: cilium}}":          "",
		"{type: calico-routed, netfilter: {cni: calico-np-xsub}}":                  "",
		"{type: calico-vxlan, netfilter: {cni: calico-wp-xsub}}":                   "",
		"{type: calico-ipip, netfilter: {cni: calico-wp-ipip}}":                    "",
		"{type: bridge, netfilter: {cni: calico-np-xsub}}":                         calico,
		"{type: flannel-vxlan, netfilter: {cni: calico-wp-xsub}}":                  calico,
		"{type: weave, netfilter: {cni: calico-np-ipip}}":                          calico,
	} {
		_, err := study.Parse("n.yaml", []byte(file(entry)), study.Options{}, studyCatalog())
		if got := err != nil; got != (want != "") {
			t.Errorf("%s: refused %v, want %v: %v", entry, got, want != "", err)
			continue
		}
		if want != "" && (!strings.Contains(err.Error(), "n.yaml:6: spec.datapaths[0].netfilter.cni: datapath ") || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", entry, err, want)
		}
	}
	dryRunRefused(t, file("{type: calico-routed, netfilter: {cni: weave}}"), bridge)
	dryRunRefused(t, file("{type: bridge, netfilter: {cni: cilium}}"), "use the cilium datapath")
	dryRunRefused(t, file("{type: bridge, netfilter: {cni: calico-np-xsub}}"), "use the calico-routed datapath")
}
