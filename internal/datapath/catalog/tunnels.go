package catalog

import (
	"path"
	"slices"
)

// clusterTunnels are the tunnel devices real CNIs create on a node for the
// datapaths of this catalogue, in the kube engine's order of preference
// (the first one a node has is the node's tunnel device). They are the
// devices' names on a real cluster, which the local engine's emulated
// datapaths need not share. A Device is a name or a path.Match pattern,
// for the names a CNI numbers (Flannel's VXLAN device is flannel.<VNI>).
var clusterTunnels = []struct{ Datapath, Device string }{
	// Calico's WireGuard (felix's WireguardInterfaceName defaults): first,
	// for it carries the pod traffic between the nodes it encrypts for
	// where vxlan.calico or tunl0 exist too.
	{"wireguard", "wireguard.cali"},
	{"wireguard", "wg-v6.cali"},
	{"calico-vxlan", "vxlan.calico"},
	{"calico-vxlan", "vxlan-v6.calico"},
	// Flannel's vxlan backend: flannel.<VNI>, flannel-v6.<VNI> for IPv6
	// (flannel pkg/backend/vxlan/vxlan.go: fmt.Sprintf("flannel.%d", VNI)).
	{"flannel-vxlan", "flannel.[0-9]*"},
	{"flannel-vxlan", "flannel-v6.[0-9]*"},
	{"cilium", "cilium_vxlan"},
	{"cilium", "cilium_geneve"},
	// Flannel's ipip backend (pkg/backend/ipip/ipip.go: tunnelName), under
	// the catalogue's IP-in-IP datapath: the same encapsulation.
	{"calico-ipip", "flannel.ipip"},
	{"wireguard", "flannel-wg"}, // flannel's wireguard backend
	{"wireguard", "flannel-wg-v6"},
	// Weave's fast datapath: the VXLAN vport of its OVS datapath (weave
	// router/fastdp.go: fmt.Sprintf("vxlan-%d", udpPort)), which the local
	// engine's weave names so too in bridge mode (vxlan_sys_6784 is
	// ovs-dpctl's name for it there). Not the weave bridge, which pods
	// hang off; sleeve mode encapsulates in the router: no device.
	{"weave", "vxlan-6784"},
	// Flannel's udp backend opens the TUN device flannel%d
	// (pkg/backend/udp: ip.OpenTun("flannel%d")): flannel0.
	{"flannel-udp", "flannel[0-9]*"},
	{"geneve", "genev_sys_6081"}, // OVN-Kubernetes, Antrea (OVS geneve)
	{"ovs", "vxlan_sys_4789"},    // OVS-based CNIs' VXLAN port
	// Last: loading the ipip module makes tunl0 in every network
	// namespace, so a node of any CNI may have it; Calico's IP-in-IP is
	// the one that sends through it.
	{"calico-ipip", "tunl0"},
}

// TunnelDevices lists, in order of preference, the tunnel device names
// (or path.Match patterns) of the catalogue's datapaths on a real cluster
// (the kube engine's).
func TunnelDevices() []string {
	out := make([]string, len(clusterTunnels))
	for i, t := range clusterTunnels {
		out[i] = t.Device
	}
	return out
}

// TunnelDevice is the node's tunnel device among links: the first, in
// the order of TunnelDevices, that one of them matches (of several
// links matching one pattern, the lowest name). ok is false when none
// does.
func TunnelDevice(links []string) (dev string, ok bool) {
	sorted := slices.Sorted(slices.Values(links))
	for _, t := range clusterTunnels {
		for _, l := range sorted {
			if m, _ := path.Match(t.Device, l); m {
				return l, true
			}
		}
	}
	return "", false
}
