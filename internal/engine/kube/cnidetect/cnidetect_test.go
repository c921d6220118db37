package cnidetect

import (
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	calicoConf := `{"name":"k8s-pod-network","cniVersion":"0.3.1","plugins":[{"type":"calico"},{"type":"bandwidth"},{"type":"portmap"}]}`
	flannelConf := `{"name":"cbr0","plugins":[{"type":"flannel","delegate":{"hairpinMode":true}},{"type":"portmap"}]}`
	bridgeConf := `{"cniVersion":"1.0.0","name":"cnibench","plugins":[{"type":"bridge","bridge":"cni0","ipam":{"type":"host-local"}},{"type":"portmap"}]}`
	for _, tc := range []struct {
		name       string
		in         Input
		want, mode string
	}{
		{"calico vxlan", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "vxlan.calico", "cali12ab"}}, "calico", "vxlan"},
		{"calico ipip", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0", "cali12ab"}}, "calico", "ipip"},
		// Felix keeps tunl0 whenever IP-in-IP is on: a benchmark node with
		// no pods yet has no cali* veth.
		{"calico ipip, no pods yet", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0"}}, "calico", "ipip"},
		{"calico bgp", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "cali12ab"}}, "calico", "bgp"},
		// A BGP node where something loaded the ipip module: its tunl0 is
		// down (felix sets it up only for IP-in-IP).
		{"calico bgp, the ipip module's tunl0 down", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0"}, Down: []string{"tunl0"}}, "calico", "bgp"},
		{"calico ipip by the pool's env, tunl0 down", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0"}, Down: []string{"tunl0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "Always"}}}}, "calico", "ipip"},
		// Pools moved from IP-in-IP to BGP: felix runs no IP-in-IP manager
		// and the old tunl0 stays up, carrying nothing; the pools read
		// say BGP, over the env's first-start setting too. One pool still
		// on keeps ipip.
		{"calico bgp, tunl0 left up, pools Never", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "Always"}}},
			Pools:      []Pool{{Name: "default-ipv4-ippool", CIDR: "10.244.0.0/16", IPIPMode: "Never"}, {Name: "old", CIDR: "10.9.0.0/16", IPIPMode: "Always", Disabled: true}}}, "calico", "bgp"},
		{"calico ipip, one pool of two on", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0"},
			Pools: []Pool{{Name: "a", CIDR: "10.244.0.0/16"}, {Name: "b", CIDR: "10.9.0.0/16", IPIPMode: "Always"}}}, "calico", "ipip"},
		{"calico vxlan, IPv6 alone", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "vxlan-v6.calico"}}, "calico", "vxlan"},
		{"calico wireguard over vxlan", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "tunl0", "vxlan.calico", "wireguard.cali"}}, "calico", "wireguard"},
		{"calico wireguard, IPv6 alone", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0", "wg-v6.cali"}}, "calico", "wireguard"},
		// Where no device says it, calico-node's pool settings do.
		{"calico vxlan by the pool's env", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "Never", "CALICO_IPV4POOL_VXLAN": "Always"}}}}, "calico", "vxlan"},
		{"calico ipip by the pool's env", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "Always"}}}}, "calico", "ipip"},
		// CrossSubnet: IP-in-IP only between nodes on different subnets,
		// which nothing here says the run's nodes are.
		{"calico ipip cross-subnet by the pool's env", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "CrossSubnet"}}}}, "calico", "ipip cross-subnet"},
		{"calico bgp by the pool's env", Input{ConfFiles: map[string]string{"10-calico.conflist": calicoConf}, Links: []string{"eth0"},
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_IPIP": "Never", "CALICO_IPV4POOL_VXLAN": "Never"}}}}, "calico", "bgp"},
		{"flannel vxlan", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel.1", "cni0"}}, "flannel", "vxlan"},
		{"flannel udp", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel0", "cni0"}}, "flannel", "udp"},
		{"flannel host-gw", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"cni0"}}, "flannel", "host-gw"},
		// Every backend's devices, as flannel names them (pkg/backend/*):
		// none of them is host-gw.
		{"flannel vxlan, VNI 4096", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel.4096", "cni0"}}, "flannel", "vxlan"},
		{"flannel vxlan, IPv6 alone", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"cni0", "flannel-v6.1"}}, "flannel", "vxlan"},
		{"flannel ipip", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel.ipip", "cni0", "tunl0"}}, "flannel", "ipip"},
		{"flannel wireguard", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel-wg", "cni0"}}, "flannel", "wireguard"},
		{"flannel wireguard, IPv6 alone", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel-wg-v6", "cni0"}}, "flannel", "wireguard"},
		{"flannel ipip by device alone", Input{Links: []string{"eth0", "flannel.ipip"}}, "flannel", "ipip"},
		{"flannel device of no known backend", Input{ConfFiles: map[string]string{"10-flannel.conflist": flannelConf}, Links: []string{"flannel-xyz", "cni0"}}, "flannel", ""},
		{"cilium by daemonset", Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "cilium", Images: []string{"quay.io/cilium/cilium:v1.16"}}}, Links: []string{"cilium_host", "cilium_vxlan"}}, "cilium", "vxlan"},
		{"weave fastdp", Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "weave-net"}}, Links: []string{"weave", "datapath", "vethwe-bridge", "vethwe-datapath", "vxlan-6784"}}, "weave", "vxlan (fastdp)"},
		{"weave sleeve", Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "weave-net"}}, Links: []string{"weave", "vethwe-bridge", "vethwe-pcap"}}, "weave", "sleeve"},
		{"weave, no device read", Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "weave-net"}}}, "weave", ""},
		{"kube-router", Input{ConfFiles: map[string]string{"10-kuberouter.conflist": bridgeConf}, Links: []string{"kube-bridge"}}, "kube-router", "bgp"},
		{"plain bridge", Input{ConfFiles: map[string]string{"10-cnibench.conflist": bridgeConf}, Links: []string{"eth1", "cni0"}}, "bridge", "bridge + host-local, routes between nodes"},
		{"nothing", Input{Links: []string{"eth0"}}, "unknown", ""},
		{"garbage conf", Input{ConfFiles: map[string]string{"00.conf": "{"}}, "unknown", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Detect(tc.in)
			if r.Name != tc.want || r.Mode != tc.mode {
				t.Errorf("Detect = %s / %q, want %s / %q (evidence %v)", r.Name, r.Mode, tc.want, tc.mode, r.Evidence)
			}
		})
	}
}

// Canal (Calico's plugin and policy over Flannel's network) is Flannel
// in Flannel's mode, told by its DaemonSet or by Flannel's device beside
// Calico's plugin, and the evidence says Canal; each DaemonSet is
// evidence once, however many CNIs its images name.
func TestDetectCanal(t *testing.T) {
	canalConf := map[string]string{"10-canal.conflist": `{"name":"k8s-pod-network","plugins":[{"type":"calico"},{"type":"portmap"}]}`}
	canalDS := DaemonSet{Namespace: "kube-system", Name: "canal", Images: []string{"docker.io/calico/cni:v3.29", "docker.io/calico/node:v3.29", "ghcr.io/flannel-io/flannel:v0.26"}}
	for _, tc := range []struct {
		name, want string
		in         Input
	}{
		{"by daemonset and device", "flannel (vxlan)", Input{ConfFiles: canalConf, DaemonSets: []DaemonSet{canalDS}, Links: []string{"cali12ab", "flannel.1", "tunl0"}}},
		{"by device, daemonsets not listed", "flannel (vxlan)", Input{ConfFiles: canalConf, Links: []string{"cali12ab", "flannel.1"}}},
		{"host-gw backend", "flannel (host-gw)", Input{ConfFiles: canalConf, DaemonSets: []DaemonSet{canalDS}, Links: []string{"cali12ab", "eth0"}}},
		{"daemonset alone", "flannel (vxlan)", Input{DaemonSets: []DaemonSet{canalDS}, Links: []string{"flannel.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Detect(tc.in)
			ev := strings.Join(r.Evidence, "; ")
			if r.String() != tc.want || !strings.Contains(ev, "canal (") || strings.Count(ev, "daemonset kube-system/canal") > 1 {
				t.Errorf("Detect = %s (evidence %q), want %s, Canal said, its DaemonSet once", r, r.Evidence, tc.want)
			}
		})
	}
	calicoNode := DaemonSet{Namespace: "kube-system", Name: "calico-node", Images: []string{"calico/cni", "calico/node"}}
	if r := Detect(Input{DaemonSets: []DaemonSet{calicoNode, canalDS}, Links: []string{"tunl0", "cali1"}}); r.Name != "flannel" || len(r.Evidence) != 3 {
		t.Errorf("Detect = %s, evidence %q: want flannel, each DaemonSet once and Canal", r, r.Evidence)
	}
	if r := Detect(Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"vxlan.calico"}}); r.String() != "calico (vxlan)" {
		t.Errorf("plain Calico: %s", r)
	}
}

func FuzzPluginTypes(f *testing.F) {
	f.Add(`{"plugins":[{"type":"calico"}]}`)
	f.Fuzz(func(t *testing.T, s string) { _ = Detect(Input{ConfFiles: map[string]string{"a.conf": s}}) })
}
