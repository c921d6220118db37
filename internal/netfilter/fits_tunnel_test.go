package netfilter

import (
	"net"
	"strings"
	"testing"
)

// TestGeneratorFitsTunnel: Calico's IP-in-IP rules (calico-*-ipip)
// masquerade host-sourced packets leaving by the tunnel; on a node
// without a tunnel device they were written for tunl0, which no packet
// leaves by, and counted, saying nothing. Such a node is refused,
// naming the CNI and the rules that fit it; a node with a tunnel, under
// whatever name, fits, and the rule names that device.
func TestGeneratorFitsTunnel(t *testing.T) {
	bare := Node{PodCIDR: cidr(t, "10.244.1.0/24"), ClusterCIDR: cidr(t, "10.244.0.0/16"), NodeIP: net.ParseIP("192.168.100.1"), Bridge: "cni0", Devices: ownDevices(t)}
	for _, name := range Names() {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		needs := strings.HasSuffix(name, "-ipip")
		err = g.Fits(bare)
		if (err != nil) != needs {
			t.Errorf("%s on a node without a tunnel: Fits = %v, want refused %v", name, err, needs)
			continue
		}
		if needs && (!strings.Contains(err.Error(), name+"'s rules") || !strings.Contains(err.Error(), "no tunnel device") ||
			!strings.Contains(err.Error(), strings.TrimSuffix(name, "-ipip")+"-xsub")) {
			t.Errorf("%s: %v", name, err)
		}
		for _, tun := range []string{"tunl0", "vxlan.calico"} {
			n := bare
			n.Tunnel = tun
			if err := g.Fits(n); err != nil {
				t.Errorf("%s on a node with tunnel %s: %v", name, tun, err)
			}
		}
	}
	n := bare
	n.Tunnel = "tunl0"
	rs, err := Generate("calico-np-ipip", n)
	if err != nil {
		t.Fatal(err)
	}
	const masq = "-A cali-POSTROUTING -o tunl0 -m addrtype ! --src-type LOCAL --limit-iface-out -m addrtype --src-type LOCAL -j MASQUERADE"
	if !strings.Contains(string(rs.Bytes()), masq) {
		t.Errorf("calico-np-ipip on a node with tunl0 has no %q:\n%s", masq, rs.Bytes())
	}
}
