package catalog

// clusterTunnels are the tunnel devices real CNIs create on a node for the
// datapaths of this catalogue, in the kube engine's order of preference
// (the first one a node has is the node's tunnel device). They are the
// devices' names on a real cluster, which the local engine's emulated
// datapaths need not share.
var clusterTunnels = []struct{ Datapath, Device string }{
	{"calico-vxlan", "vxlan.calico"},
	{"flannel-vxlan", "flannel.1"},
	{"cilium", "cilium_vxlan"},
	{"cilium", "cilium_geneve"},
	{"calico-ipip", "tunl0"},
	{"wireguard", "flannel-wg"}, // flannel's wireguard backend
	{"weave", "weave"},
	{"calico-vxlan", "vxlan-v6.calico"},
	{"flannel-udp", "flannel0"},
	{"geneve", "genev_sys_6081"}, // OVN-Kubernetes, Antrea (OVS geneve)
	{"ovs", "vxlan_sys_4789"},    // OVS-based CNIs' VXLAN port
}

// TunnelDevices lists, in order of preference, the tunnel device names of
// the catalogue's datapaths on a real cluster (the kube engine's).
func TunnelDevices() []string {
	out := make([]string, len(clusterTunnels))
	for i, t := range clusterTunnels {
		out[i] = t.Device
	}
	return out
}
