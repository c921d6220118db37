package cnidetect

import (
	"strings"
	"testing"
)

// A CrossSubnet pool or Flannel's DirectRouting encapsulates only between
// nodes on different subnets, though the tunnel device is there either
// way: the mode says the setting, and where the run's nodes share a
// subnet the path is routed (Routed), where that is not known Warning
// says it may be.
func TestEncapOnlyAcrossSubnets(t *testing.T) {
	calico := map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"},{"type":"portmap"}]}`}
	flannel := map[string]string{"10-flannel.conflist": `{"plugins":[{"type":"flannel"},{"type":"portmap"}]}`}
	vxlanCross := []Pool{{Name: "default-ipv4-ippool", CIDR: "192.168.0.0/16", IPIPMode: "Never", VXLANMode: "CrossSubnet"}}
	ipipCross := []Pool{{Name: "default-ipv4-ippool", IPIPMode: "CrossSubnet", VXLANMode: "Never"}}
	direct := `{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","DirectRouting":true}}`
	same, apart := CalicoSubnet("10.0.0.4/24", "10.0.0.5/24"), CalicoSubnet("10.0.0.4/24", "10.0.1.5/24")
	for _, tc := range []struct {
		name           string
		in             Input
		want           string
		routed, warned bool
	}{
		{"calico vxlan cross-subnet, nodes unknown", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico"}, Pools: vxlanCross}, "calico (vxlan cross-subnet)", false, true},
		{"calico vxlan cross-subnet, one subnet", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico"}, Pools: vxlanCross, Subnet: same}, "calico (bgp)", true, false},
		{"calico vxlan cross-subnet, two subnets", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico"}, Pools: vxlanCross, Subnet: apart}, "calico (vxlan)", false, false},
		{"calico ipip cross-subnet, one subnet", Input{ConfFiles: calico, Links: []string{"eth0", "tunl0"}, Pools: ipipCross, Subnet: same}, "calico (bgp)", true, false},
		{"calico vxlan cross-subnet by the env, one subnet", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico"}, Subnet: same,
			DaemonSets: []DaemonSet{{Namespace: "calico-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_VXLAN": "CrossSubnet"}}}}, "calico (bgp)", true, false},
		// A pool that encapsulates Always beside a disabled CrossSubnet one.
		{"calico vxlan always", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico"}, Subnet: same,
			Pools: []Pool{{Name: "a", VXLANMode: "Always"}, {Name: "old", VXLANMode: "CrossSubnet", Disabled: true}}}, "calico (vxlan)", false, false},
		{"calico wireguard over a cross-subnet pool", Input{ConfFiles: calico, Links: []string{"eth0", "vxlan.calico", "wireguard.cali"}, Pools: vxlanCross, Subnet: same}, "calico (wireguard)", false, false},
		{"flannel direct routing, nodes unknown", Input{ConfFiles: flannel, Links: []string{"cni0", "flannel.1"}, FlannelNetConf: direct}, "flannel (vxlan direct-routing)", false, true},
		{"flannel direct routing, one subnet", Input{ConfFiles: flannel, Links: []string{"cni0", "flannel.1"}, FlannelNetConf: direct, Subnet: Subnet{Known: true, Same: true, Why: "x"}}, "flannel (host-gw)", true, false},
		{"flannel vxlan, no direct routing", Input{ConfFiles: flannel, Links: []string{"cni0", "flannel.1"}, FlannelNetConf: `{"Backend":{"Type":"vxlan"}}`}, "flannel (vxlan)", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Detect(tc.in)
			if r.String() != tc.want || (r.Routed != "") != tc.routed || (r.Warning != "") != tc.warned {
				t.Errorf("Detect = %s, routed %q, warning %q (evidence %q); want %s, routed %v, warned %v", r, r.Routed, r.Warning, r.Evidence, tc.want, tc.routed, tc.warned)
			}
		})
	}
}

// Felix's test, both ways: the local node's prefix holds the peer's
// address.
func TestCalicoSubnet(t *testing.T) {
	for _, tc := range []struct {
		srv, cli    string
		known, same bool
	}{
		{"10.0.0.4/24", "10.0.0.5/24", true, true},
		{"10.0.0.4/24", "10.0.1.5/24", true, false},
		{"10.0.0.4/16", "10.0.1.5/24", false, false}, // the client's /24 lacks the server
		{"10.0.0.4/24", "", false, false},
		{"", "", false, false},
	} {
		if s := CalicoSubnet(tc.srv, tc.cli); s.Known != tc.known || s.Same != tc.same {
			t.Errorf("CalicoSubnet(%q, %q) = %+v, want known %v same %v", tc.srv, tc.cli, s, tc.known, tc.same)
		}
	}
}

// A config file naming a plugin detection does not know is the answer:
// unknown, with that plugin and what suggests its CNI as evidence; a
// DaemonSet names a CNI only by the name its project ships it under, and
// only where no config file is found. What was right stays right.
func TestForeignPrimaryPlugin(t *testing.T) {
	calicoNode := DaemonSet{Namespace: "kube-system", Name: "calico-node", Images: []string{"docker.io/calico/node:v3.29"}}
	conf := func(name, body string) map[string]string { return map[string]string{name: body} }
	multusCilium := map[string]string{"00-multus.conf": `{"type":"multus","delegates":[{"name":"cilium","plugins":[{"type":"cilium-cni"}]}]}`, "05-cilium.conflist": `{"plugins":[{"type":"cilium-cni"}]}`}
	for _, tc := range []struct {
		name     string
		in       Input
		want     string
		evidence []string
	}{
		{"aks azure-cni + calico policy", Input{ConfFiles: conf("10-azure.conflist", `{"plugins":[{"type":"azure-vnet"},{"type":"portmap"}]}`),
			DaemonSets: []DaemonSet{calicoNode}, Links: []string{"eth0", "azure0", "tunl0"}}, "unknown", []string{"azure-vnet", "calico-node (calico, beside", "device azure0 suggests azure cni"}},
		{"eks vpc-cni + calico policy", Input{ConfFiles: conf("10-aws.conflist", `{"plugins":[{"type":"aws-cni"},{"type":"egress-cni"},{"type":"portmap"}]}`),
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "aws-node"}, calicoNode}, Links: []string{"eth0", "eni1a2b"}}, "unknown", []string{"aws-cni", "aws-node suggests aws vpc cni"}},
		{"gke + tetragon", Input{ConfFiles: conf("10-gke-ptp.conflist", `{"plugins":[{"type":"ptp"},{"type":"portmap"}]}`),
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "tetragon", Images: []string{"quay.io/cilium/tetragon:v1.2"}}}, Links: []string{"eth0", "gke1"}}, "unknown", []string{"ptp"}},
		{"tetragon, no config read", Input{DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "tetragon", Images: []string{"quay.io/cilium/tetragon:v1.2"}}}}, "unknown", nil},
		{"weave-scope-agent", Input{DaemonSets: []DaemonSet{{Namespace: "weave", Name: "weave-scope-agent", Images: []string{"weaveworks/scope:1.13"}}}}, "unknown", nil},
		{"kube-router policy-only", Input{ConfFiles: conf("10-gke-ptp.conflist", `{"plugins":[{"type":"ptp"}]}`),
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "kube-router"}}, Links: []string{"eth0", "kube-bridge"}}, "unknown", []string{"ptp", "kube-router (kube-router, beside"}},
		{"antrea", Input{ConfFiles: conf("10-antrea.conflist", `{"plugins":[{"type":"antrea"},{"type":"portmap"}]}`),
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "antrea-agent"}}, Links: []string{"antrea-gw0", "eth0", "genev_sys_6081"}},
			"unknown", []string{"plugins antrea,portmap", "antrea-agent suggests antrea", "device genev_sys_6081 suggests", "device antrea-gw0 suggests antrea"}},
		{"ovn-kubernetes", Input{ConfFiles: conf("10-ovn-kubernetes.conf", `{"type":"ovn-k8s-cni-overlay"}`),
			DaemonSets: []DaemonSet{{Namespace: "ovn-kubernetes", Name: "ovnkube-node"}}, Links: []string{"br-int", "eth0", "genev_sys_6081", "ovn-k8s-mp0"}},
			"unknown", []string{"ovn-k8s-cni-overlay", "ovnkube-node suggests ovn-kubernetes", "device ovn-k8s-mp0 suggests ovn-kubernetes"}},
		{"calico-node daemonset alone", Input{DaemonSets: []DaemonSet{calicoNode}, Links: []string{"eth0", "tunl0"}}, "calico (ipip)", nil},
		{"rke2 canal", Input{ConfFiles: conf("10-canal.conflist", `{"plugins":[{"type":"calico"},{"type":"portmap"}]}`),
			DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "rke2-canal"}}, Links: []string{"cali1", "flannel.1"}}, "flannel (vxlan)", []string{"canal ("}},
		{"k3s flannel, config outside net.d", Input{Links: []string{"cni0", "eth0", "flannel.1"}}, "flannel (vxlan)", nil},
		{"multus + cilium, delegates", Input{ConfFiles: multusCilium, DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "cilium"}}, Links: []string{"cilium_host", "cilium_vxlan"}}, "cilium (vxlan)", nil},
		{"multus thick + cilium", Input{ConfFiles: map[string]string{"00-multus.conf": `{"type":"multus-shim"}`, "05-cilium.conflist": `{"plugins":[{"type":"cilium-cni"}]}`}, Links: []string{"cilium_host"}}, "cilium (native-routing)", nil},
		{"multus clusterNetwork file", Input{ConfFiles: map[string]string{"00-multus.conf": `{"type":"multus","clusterNetwork":"/etc/cni/net.d/99-calico.conflist"}`, "05-x.conflist": `{"plugins":[{"type":"ptp"}]}`,
			"99-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"vxlan.calico"}}, "calico (vxlan)", nil},
		{"cilium native routing", Input{ConfFiles: conf("05-cilium.conflist", `{"plugins":[{"type":"cilium-cni"}]}`), Links: []string{"cilium_host", "cilium_net", "eth0"}}, "cilium (native-routing)", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Detect(tc.in)
			ev := strings.Join(r.Evidence, "; ")
			if r.String() != tc.want {
				t.Errorf("Detect = %s (evidence %q), want %s", r, r.Evidence, tc.want)
			}
			for _, e := range tc.evidence {
				if !strings.Contains(ev, e) {
					t.Errorf("evidence %q lacks %q", ev, e)
				}
			}
		})
	}
}

// Calico's VXLAN or IP-in-IP whose pools could not be read (the runner's
// ClusterRole does not grant it) and whose calico-node says nothing of
// them (an operator install) may be CrossSubnet: a warning says so,
// unless the nodes are known to be on different subnets or a pool read
// said Always (calico-node's env saying Always is its first-start
// setting, which a later edit of the pool leaves as it was).
func TestUnreadPoolsWarn(t *testing.T) {
	calico := map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}
	node := DaemonSet{Namespace: "calico-system", Name: "calico-node"}
	always := DaemonSet{Namespace: "kube-system", Name: "calico-node", Env: map[string]string{"CALICO_IPV4POOL_VXLAN": "Always"}}
	for _, tc := range []struct {
		name   string
		in     Input
		warned bool
	}{
		{"operator install", Input{ConfFiles: calico, DaemonSets: []DaemonSet{node}, Links: []string{"vxlan.calico"}, PoolsUnread: "forbidden"}, true},
		{"operator install, two subnets", Input{ConfFiles: calico, DaemonSets: []DaemonSet{node}, Links: []string{"vxlan.calico"}, PoolsUnread: "forbidden",
			Subnet: CalicoSubnet("10.0.0.4/24", "10.0.1.5/24")}, false},
		// calico-node's env made the default pool at first start; the
		// pool may since be CrossSubnet: a hint, not settled.
		{"manifest install, Always", Input{ConfFiles: calico, DaemonSets: []DaemonSet{always}, Links: []string{"vxlan.calico"}, PoolsUnread: "forbidden"}, true},
		{"manifest install, Always, two subnets", Input{ConfFiles: calico, DaemonSets: []DaemonSet{always}, Links: []string{"vxlan.calico"}, PoolsUnread: "forbidden",
			Subnet: CalicoSubnet("10.0.0.4/24", "10.0.1.5/24")}, false},
		{"pools read", Input{ConfFiles: calico, DaemonSets: []DaemonSet{node}, Links: []string{"vxlan.calico"}, Pools: []Pool{{Name: "p", VXLANMode: "Always"}}}, false},
	} {
		if r := Detect(tc.in); r.String() != "calico (vxlan)" || (r.Warning != "") != tc.warned {
			t.Errorf("%s: %s, warning %q; want calico (vxlan), warned %v", tc.name, r, r.Warning, tc.warned)
		}
	}
}

// Cilium chained after the plugin that wires the pods (aws-cni chaining,
// its documented 05-cilium.conflist) is Cilium, chained: its eBPF is on
// every packet's path, not a policy add-on beside it. Chained after
// Calico (generic veth), Calico's datapath with Cilium's BPF on it.
func TestCiliumChaining(t *testing.T) {
	aws := map[string]string{"05-cilium.conflist": `{"name":"aws-cni","plugins":[{"type":"aws-cni"},{"type":"egress-v4-cni"},{"type":"portmap"},{"type":"cilium-cni"}]}`}
	ciliumDS := DaemonSet{Namespace: "kube-system", Name: "cilium"}
	r := Detect(Input{ConfFiles: aws, DaemonSets: []DaemonSet{{Namespace: "kube-system", Name: "aws-node"}, ciliumDS}, Links: []string{"cilium_host", "cilium_net", "eni1a2b", "eth0"}})
	ev := strings.Join(r.Evidence, "; ")
	if r.Name != "cilium" || r.Mode != "chained after aws-cni" || !strings.Contains(ev, "on every packet's path") || strings.Contains(ev, "policy add-on") {
		t.Errorf("aws-cni chaining: %s, evidence %q; want cilium (chained after aws-cni), on the path, no policy add-on", r, ev)
	}
	calico := map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"},{"type":"portmap"},{"type":"cilium-cni"}]}`}
	r = Detect(Input{ConfFiles: calico, DaemonSets: []DaemonSet{ciliumDS}, Links: []string{"eth0", "vxlan.calico"}})
	if ev := strings.Join(r.Evidence, "; "); r.String() != "calico (vxlan) with cilium chained after it" || r.Chained != "cilium" || !strings.Contains(ev, "Cilium's BPF") {
		t.Errorf("calico + cilium chaining: %s, evidence %q; want calico (vxlan) with cilium chained, naming Cilium's BPF on the path", r, ev)
	}
}

// The run measures the nodes' IPv4 path: an IPv6 pool's encapsulation
// (Always) says nothing of it, beside an IPv4 pool that is CrossSubnet.
func TestPoolsOfTheRunsFamily(t *testing.T) {
	in := Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"eth0", "vxlan-v6.calico", "vxlan.calico"},
		Pools:  []Pool{{Name: "default-ipv6-ippool", CIDR: "fd00:10:244::/64", VXLANMode: "Always"}, {Name: "default-ipv4-ippool", CIDR: "10.244.0.0/16", VXLANMode: "CrossSubnet"}},
		Subnet: CalicoSubnet("10.0.0.4/24", "10.0.0.5/24")}
	if r := Detect(in); r.String() != "calico (bgp)" || r.Routed == "" {
		t.Errorf("Detect = %s, routed %q (evidence %q); want calico (bgp), routed", r, r.Routed, r.Evidence)
	}
}

// tunl0 up where the mode sends nothing through it (every IPv4 pool's
// ipipMode Never, Flannel's host-gw beside a loaded ipip module) is no
// tunnel: the path is routed, so the kube engine takes no tunnel device
// and refuses impairments at one. Calico's IP-in-IP, another CNI's own
// device beside tunl0, a down tunl0 and an unknown CNI are left alone.
func TestIdleTunl0Routed(t *testing.T) {
	calico := map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}
	flannel := map[string]string{"10-flannel.conflist": `{"plugins":[{"type":"flannel"}]}`}
	never := []Pool{{Name: "p", IPIPMode: "Never", VXLANMode: "Never"}}
	always := []Pool{{Name: "p", IPIPMode: "Always", VXLANMode: "Never"}}
	for _, tc := range []struct {
		name   string
		in     Input
		routed bool
	}{
		{"calico pools never", Input{ConfFiles: calico, Links: []string{"eth0", "tunl0"}, Pools: never}, true},
		{"flannel host-gw", Input{ConfFiles: flannel, Links: []string{"eth0", "tunl0"}}, true},
		{"calico ipip", Input{ConfFiles: calico, Links: []string{"eth0", "tunl0"}, Pools: always}, false},
		{"tunl0 down", Input{ConfFiles: calico, Links: []string{"eth0", "tunl0"}, Down: []string{"tunl0"}, Pools: never}, false},
		{"flannel vxlan beside tunl0", Input{ConfFiles: flannel, Links: []string{"flannel.1", "tunl0"}}, false},
		{"unknown cni", Input{ConfFiles: map[string]string{"10-x.conf": `{"type":"antrea"}`}, Links: []string{"tunl0"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Detect(tc.in)
			if (r.Routed != "") != tc.routed || (tc.routed && !strings.Contains(r.Routed, "tunl0")) {
				t.Errorf("Detect = %s, routed %q; want routed %v, naming tunl0", r, r.Routed, tc.routed)
			}
		})
	}
}

// kube-router's overlay (tun-<hash> IP-in-IP devices, one per peer on
// another subnet by default) tells kube-router's IP-in-IP, with a
// warning that between the run's nodes the path may be either, and no
// device taken for the tunnel, a tunl0 beside them included.
func TestKubeRouterOverlay(t *testing.T) {
	ds := []DaemonSet{{Namespace: "kube-system", Name: "kube-router"}}
	for _, links := range [][]string{{"eth0", "kube-bridge", "tun-1921680012"}, {"eth0", "kube-bridge", "tun-1921680012", "tunl0"}} {
		r := Detect(Input{DaemonSets: ds, Links: links})
		if r.String() != "kube-router (ipip)" || !strings.Contains(r.Warning, "--overlay-type=subnet") || r.NoTunnel == "" || r.Routed != "" {
			t.Errorf("%v: %s, warning %q, no tunnel %q, routed %q (evidence %q)", links, r, r.Warning, r.NoTunnel, r.Routed, r.Evidence)
		}
	}
	if r := Detect(Input{DaemonSets: ds, Links: []string{"eth0", "kube-bridge"}}); r.String() != "kube-router (bgp)" || r.Warning != "" || r.NoTunnel != "" {
		t.Errorf("no peer on another subnet: %s, warning %q", r, r.Warning)
	}
}
