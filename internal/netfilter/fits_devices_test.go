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
// Cilium's own devices (cilium_host, cilium_net, lxc+). On a node
// without them they were installed as they are and counted, their
// FORWARD accepts never matched, and packets walked on through chains a
// Cilium node's never enter, with nothing said. Such a node is refused,
// naming the missing device and the cilium datapath; the devices are not
// renamed onto the node's own as a bridge or a tunnel is. Every other
// CNI's rules fit a node without them.
func TestGeneratorFitsDevices(t *testing.T) {
	base := Node{PodCIDR: cidr(t, "10.0.1.0/24"), ClusterCIDR: cidr(t, "10.0.0.0/16"), NodeIP: net.ParseIP("198.18.0.1"), Bridge: "cni0", Tunnel: "tunl0"}
	// What the bridge, geneve (whose tunnel is cilium_geneve) and cilium
	// datapaths say their nodes have (datapath.Datapath's Devices).
	bridge := []string{"cni0", "veth+"}
	geneve := []string{"cni0", "veth+", "cilium_geneve"}
	cilium := []string{"cilium_host", "cilium_net", "cilium_vxlan", "lxc+"}
	// A built cilium node: concrete names (NodeOf lists its links).
	built := []string{"lo", "eth1", "cilium_net", "cilium_host", "cilium_vxlan", "lxc0c3b1a2f9e8d"}
	for _, name := range Names() {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		needs := strings.HasPrefix(name, "cilium")
		for _, have := range [][]string{bridge, geneve, nil} {
			n := base
			n.Devices = have
			err := g.Fits(n)
			if (err != nil) != needs {
				t.Errorf("%s on a node with devices %v: Fits = %v, want refused %v", name, have, err, needs)
				continue
			}
			if needs && (!strings.Contains(err.Error(), name+"'s rules match cilium's own devices (cilium_host, cilium_net, lxc+)") ||
				!strings.Contains(err.Error(), "has no cilium_host") || !strings.Contains(err.Error(), "use the cilium datapath")) {
				t.Errorf("%s on %v: %v", name, have, err)
			}
		}
		for _, have := range [][]string{cilium, built} {
			n := base
			n.Devices = have
			if err := g.Fits(n); err != nil {
				t.Errorf("%s on a node with devices %v: %v", name, have, err)
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
