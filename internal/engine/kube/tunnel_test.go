package kube

import (
	"testing"

	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
)

// On a node of each real CNI, by the devices it makes there, detection
// names the CNI and mode and the knobs and netem go on its tunnel device
// (pickTunnel), not on another device the node happens to have.
func TestTunnelFollowsDetection(t *testing.T) {
	calicoConf := map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"},{"type":"portmap"}]}`}
	weaveDS := []cnidetect.DaemonSet{{Namespace: "kube-system", Name: "weave-net", Images: []string{"weaveworks/weave-kube:2.8.1"}}}
	flannelConf := map[string]string{"10-flannel.conflist": `{"name":"cbr0","plugins":[{"type":"flannel"},{"type":"portmap"}]}`}
	for _, tc := range []struct {
		name        string
		in          cnidetect.Input
		cni, tunnel string
	}{
		{"flannel vxlan", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel.1"}}, "flannel (vxlan)", "flannel.1"},
		{"flannel vxlan, VNI 2", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel.2"}}, "flannel (vxlan)", "flannel.2"},
		{"flannel vxlan, dual stack", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel-v6.1", "flannel.1"}}, "flannel (vxlan)", "flannel.1"},
		// The ipip module's loading makes tunl0 in every namespace.
		{"flannel ipip", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel.ipip", "tunl0"}}, "flannel (ipip)", "flannel.ipip"},
		{"flannel wireguard, IPv6", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel-wg-v6"}}, "flannel (wireguard)", "flannel-wg-v6"},
		{"flannel udp", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0", "flannel0"}}, "flannel (udp)", "flannel0"},
		{"canal", cnidetect.Input{ConfFiles: map[string]string{"10-canal.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"cali1", "eth0", "flannel.1", "tunl0"},
			DaemonSets: []cnidetect.DaemonSet{{Namespace: "kube-system", Name: "canal", Images: []string{"calico/node", "flannel/flannel"}}}}, "flannel (vxlan)", "flannel.1"},
		{"calico ipip, no pods yet", cnidetect.Input{ConfFiles: calicoConf, Links: []string{"eth0", "tunl0"}}, "calico (ipip)", "tunl0"},
		// A BGP node where something loaded the ipip module.
		{"calico bgp, tunl0 down", cnidetect.Input{ConfFiles: calicoConf, Links: []string{"eth0", "tunl0"}, Down: []string{"tunl0"}}, "calico (bgp)", ""},
		{"calico vxlan, IPv6", cnidetect.Input{ConfFiles: calicoConf, Links: []string{"eth0", "tunl0", "vxlan-v6.calico"}}, "calico (vxlan)", "vxlan-v6.calico"},
		{"calico wireguard", cnidetect.Input{ConfFiles: calicoConf, Links: []string{"cali1", "eth0", "tunl0", "vxlan.calico", "wireguard.cali"}}, "calico (wireguard)", "wireguard.cali"},
		{"weave fastdp", cnidetect.Input{DaemonSets: weaveDS, Links: []string{"datapath", "eth0", "vethwe-bridge", "vethwe-datapath", "vxlan-6784", "weave"}}, "weave (vxlan (fastdp))", "vxlan-6784"},
		{"weave sleeve", cnidetect.Input{DaemonSets: weaveDS, Links: []string{"eth0", "vethwe-bridge", "vethwe-pcap", "weave"}}, "weave (sleeve)", ""},
		{"flannel host-gw", cnidetect.Input{ConfFiles: flannelConf, Links: []string{"cni0", "eth0"}}, "flannel (host-gw)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cnidetect.Detect(tc.in)
			tunnel, ok := pickTunnel(tc.in.Links, tc.in.Down)
			if r.String() != tc.cni || tunnel != tc.tunnel || ok != (tc.tunnel != "") {
				t.Errorf("detected %s (evidence %q), tunnel %q; want %s, tunnel %q", r, r.Evidence, tunnel, tc.cni, tc.tunnel)
			}
		})
	}
}
