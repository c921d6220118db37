package catalog

import "slices"

// CNI is a real CNI and mode as the kube engine's detection names them
// (internal/engine/kube/cnidetect): "flannel" and "vxlan". An empty Mode
// matches every mode of the CNI.
type CNI struct{ Name, Mode string }

// clusterCNIs are the real CNIs each datapath of the catalogue stands
// for, so that a run on a cluster can tell whether the study's datapath
// label says what the cluster runs: the published numbers a study keeps
// for flannel-udp are not those of a cluster running Flannel's VXLAN.
// Datapaths not listed (host, macvlan, ipvlan, ipvlan-l3, gre, ovs)
// stand for a kind of wiring that no detected CNI names; their labels are
// not checked.
var clusterCNIs = []struct {
	Datapath string
	CNIs     []CNI
}{
	{"calico-vxlan", []CNI{{"calico", "vxlan"}}},
	{"calico-ipip", []CNI{{"calico", "ipip"}}},
	{"calico-routed", []CNI{{"calico", "bgp"}}},
	{"flannel-vxlan", []CNI{{"flannel", "vxlan"}}},
	{"flannel-udp", []CNI{{"flannel", "udp"}}},
	// Flannel's WireGuard backend; Calico's WireGuard encrypts the same
	// way between the nodes (internal/datapath/wireguard's notes).
	{"wireguard", []CNI{{"flannel", "wireguard"}, {"calico", "wireguard"}}},
	// Flannel host-gw, or the bridge plugin alone with routes between
	// nodes (what a bare cluster's CNI often is).
	{"bridge", []CNI{{"flannel", "host-gw"}, {"bridge", ""}}},
	{"cilium", []CNI{{"cilium", ""}}},
	{"geneve", []CNI{{"cilium", "geneve"}}},
	// The local weave is the fast datapath; Weave's sleeve mode (its
	// router encapsulates in user space) is another datapath.
	{"weave", []CNI{{"weave", "vxlan (fastdp)"}}},
	{"kube-router", []CNI{{"kube-router", ""}}},
}

// ClusterCNIs lists the real CNIs datapath stands for on a cluster; nil
// when it names none (its label is then not checked).
func ClusterCNIs(datapath string) []CNI {
	for _, c := range clusterCNIs {
		if c.Datapath == datapath {
			return c.CNIs
		}
	}
	return nil
}

// Matches says whether c is the CNI name with mode mode.
func (c CNI) Matches(name, mode string) bool {
	return c.Name == name && (c.Mode == "" || c.Mode == mode)
}

// String is "name (mode)", or the name alone for every mode.
func (c CNI) String() string {
	if c.Mode == "" {
		return c.Name
	}
	return c.Name + " (" + c.Mode + ")"
}

// StandsFor says whether datapath stands for the CNI name with mode mode.
func StandsFor(datapath, name, mode string) bool {
	return slices.ContainsFunc(ClusterCNIs(datapath), func(c CNI) bool { return c.Matches(name, mode) })
}

// StandingFor lists, in the catalogue's order, the datapaths that stand
// for the CNI name with mode mode.
func StandingFor(name, mode string) []string {
	var out []string
	for _, c := range clusterCNIs {
		if StandsFor(c.Datapath, name, mode) {
			out = append(out, c.Datapath)
		}
	}
	return out
}
