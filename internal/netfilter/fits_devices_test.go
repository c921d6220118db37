package netfilter

import (
	"net"
	"strings"
	"testing"
)

// ownDevices are the devices of their own that every CNI's rules need
// (Generator.Devices), for nodes that test the other needs alone.
func ownDevices(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, name := range Names() {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g.Devices...)
	}
	return out
}

// TestGeneratorFitsDevices: Cilium's rules (cilium, cilium-kpr) name
// Cilium's own devices (cilium_host, cilium_net, lxc+), and Felix's
// (calico-*) dispatch by Calico's pod veths (cali+). On a node without
// them they were installed as they are and counted, their accepts and
// dispatch never matched, and packets walked through other chains than
// on a node of that CNI, with nothing said. Such a node is refused,
// naming the missing device and the CNI's own datapath; the devices are
// not renamed onto the node's own as a bridge or a tunnel is. The other
// CNIs' rules fit a node without them.
func TestGeneratorFitsDevices(t *testing.T) {
	base := Node{PodCIDR: cidr(t, "10.0.1.0/24"), ClusterCIDR: cidr(t, "10.0.0.0/16"), NodeIP: net.ParseIP("198.18.0.1"), Bridge: "cni0", Tunnel: "tunl0"}
	// What the bridge, geneve (whose tunnel is cilium_geneve), cilium and
	// calico-ipip datapaths say their nodes have (datapath.Datapath's
	// Devices), and built cilium and calico nodes' links (NodeOf).
	nodes := map[string][]string{
		"bridge":       {"cni0", "veth+"},
		"geneve":       {"cni0", "veth+", "cilium_geneve"},
		"none":         nil,
		"cilium":       {"cilium_host", "cilium_net", "cilium_vxlan", "lxc+"},
		"built cilium": {"lo", "eth1", "cilium_net", "cilium_host", "cilium_vxlan", "lxc0c3b1a2f9e8d"},
		"calico-ipip":  {"cali+", "tunl0"},
		"built calico": {"lo", "eth1", "tunl0", "cali0a1b2c3d4e5", "cali9f8e7d6c5b4"},
	}
	home := func(node string) string { return strings.TrimPrefix(node, "built ") }
	for _, name := range Names() {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		own, missing := "", ""
		switch {
		case strings.HasPrefix(name, "cilium"):
			own, missing = "cilium", "cilium_host"
		case strings.HasPrefix(name, "calico"):
			own, missing = "calico", "cali+"
		}
		for node, have := range nodes {
			n := base
			n.Devices = have
			err := g.Fits(n)
			refused := own != "" && !strings.HasPrefix(home(node), own)
			if (err != nil) != refused {
				t.Errorf("%s on a %s node %v: Fits = %v, want refused %v", name, node, have, err, refused)
				continue
			}
			if refused && (!strings.Contains(err.Error(), name+"'s rules match "+g.Home+"'s own devices ("+strings.Join(g.Devices, ", ")+")") ||
				!strings.Contains(err.Error(), "has no "+missing) || !strings.Contains(err.Error(), "use the "+g.Home+" datapath")) {
				t.Errorf("%s on a %s node: %v", name, node, err)
			}
		}
	}
}

// TestHasDevice: a node has what an iptables interface match names when
// it has the device, or for PREFIX+ a device or a family whose names
// all start with PREFIX; a family stands for no one device's name.
func TestHasDevice(t *testing.T) {
	for _, c := range []struct {
		have []string
		dev  string
		want bool
	}{
		{[]string{"cilium_host"}, "cilium_host", true},
		{[]string{"cilium_host0"}, "cilium_host", false},
		{[]string{"cilium_+"}, "cilium_host", false},
		{[]string{"lxc+"}, "lxc+", true},
		{[]string{"lxc1234"}, "lxc+", true},
		{[]string{"lxcfoo+"}, "lxc+", true},
		{[]string{"lx+"}, "lxc+", false},
		{[]string{"veth+", "cni0"}, "lxc+", false},
		{nil, "lxc+", false},
	} {
		if got := hasDevice(c.have, c.dev); got != c.want {
			t.Errorf("hasDevice(%v, %q) = %v, want %v", c.have, c.dev, got, c.want)
		}
	}
}
