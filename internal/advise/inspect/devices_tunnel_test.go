package inspect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestTunnelKinds: each CNI's tunnel device is told by its name, others
// by sysfs (DEVTYPE, link type).
func TestTunnelKinds(t *testing.T) {
	files := map[string]string{
		"proc/sys/kernel/osrelease": "6.8.0\n",
		"sys/class/net/lo/mtu":      "65536\n",
	}
	dev := func(name, mtu, devtype, typ string) {
		files["sys/class/net/"+name+"/mtu"] = mtu + "\n"
		if devtype != "" {
			files["sys/class/net/"+name+"/uevent"] = "DEVTYPE=" + devtype + "\nINTERFACE=" + name + "\n"
		}
		if typ != "" {
			files["sys/class/net/"+name+"/type"] = typ + "\n"
		}
	}
	// Flannel's ipip backend (pkg/backend/ipip: "flannel.ipip", an
	// Iptun) beside the ipip module's fallback tunl0.
	dev("flannel.ipip", "8980", "", "768")
	dev("tunl0", "8980", "", "768")
	dev("flannel.1", "8950", "vxlan", "1")
	// Dual stack: each CNI's IPv6 tunnel beside its IPv4 one (Calico
	// felix's vxlan-v6.calico and wg-v6.cali, Flannel's flannel-v6.<VNI>
	// and flannel-wg-v6), carried over IPv6.
	dev("vxlan.calico", "1450", "vxlan", "1")
	dev("vxlan-v6.calico", "1430", "vxlan", "1")
	dev("wireguard.cali", "1440", "wireguard", "65534")
	dev("wg-v6.cali", "1420", "wireguard", "65534")
	dev("flannel-v6.1", "1430", "vxlan", "1")
	dev("flannel-wg", "1420", "wireguard", "65534")
	dev("flannel-wg-v6", "1400", "wireguard", "65534")
	// IPsec: the ip_vti module's fallback device ip_vti0 and a VTI are
	// ARPHRD_TUNNEL as IP-in-IP is; the link kind tells them apart, and
	// where it is not known (an inspection from files alone) the names.
	dev("ip_vti0", "1480", "", "768")
	dev("vti7", "1480", "", "768")
	dev("sec0", "1480", "", "768")
	dev("vti-ipip", "1480", "", "768")
	kinds := func() (map[string]string, error) {
		return map[string]string{"sec0": "vti", "vti-ipip": "ipip", "flannel.ipip": "ipip", "tunl0": "ipip"}, nil
	}
	in := Inspect(context.Background(), Env{Root: tree(t, files), Run: &fakeRunner{t: t}, LinkKinds: kinds})
	var got []string
	for _, d := range in.Tunnels {
		s := d.Name + ":" + d.Kind
		if d.IPv6 {
			s += "/v6"
		}
		got = append(got, s)
	}
	want := []string{"flannel-v6.1:vxlan/v6", "flannel-wg:wireguard", "flannel-wg-v6:wireguard/v6", "flannel.1:vxlan",
		"flannel.ipip:ipip", "ip_vti0:vti", "sec0:vti", "tunl0:ipip", "vti-ipip:ipip", "vti7:vti",
		"vxlan-v6.calico:vxlan/v6", "vxlan.calico:vxlan", "wg-v6.cali:wireguard/v6", "wireguard.cali:wireguard"}
	if !slices.Equal(got, want) {
		t.Errorf("tunnels %v\nwant     %v", got, want)
	}
}

// The bytes each encapsulation adds: over IPv6 the outer header is 20
// bytes longer (Calico felix: vxlanV6MTUOverhead 70,
// wireguardV6MTUOverhead 80).
func TestEncapOverhead(t *testing.T) {
	for _, c := range []struct {
		d    Device
		want int
	}{
		{Device{Kind: "vxlan"}, 50},
		{Device{Kind: "vxlan", IPv6: true}, 70},
		{Device{Kind: "wireguard"}, 60},
		{Device{Kind: "wireguard", IPv6: true}, 80},
		{Device{Kind: "ipip"}, 20},
	} {
		if got, ok := c.d.EncapOverhead(); !ok || got != c.want {
			t.Errorf("%s (IPv6 %v): %d %v, want %d", c.d.Kind, c.d.IPv6, got, ok, c.want)
		}
	}
	if got, ok := (Device{Kind: "bridge"}).EncapOverhead(); ok {
		t.Errorf("a bridge's overhead: %d", got)
	}
}

// Link kinds that cannot be read leave the names to tell, and say so.
func TestLinkKindsUnreadable(t *testing.T) {
	root := tree(t, map[string]string{
		"proc/sys/kernel/osrelease":  "6.8.0\n",
		"sys/class/net/ip_vti0/mtu":  "1480\n",
		"sys/class/net/ip_vti0/type": "768\n",
	})
	kinds := func() (map[string]string, error) { return nil, errors.New("netlink: operation not permitted") }
	in := Inspect(context.Background(), Env{Root: root, Run: &fakeRunner{t: t}, LinkKinds: kinds})
	if len(in.Tunnels) != 1 || in.Tunnels[0].Kind != "vti" {
		t.Errorf("tunnels %+v, want ip_vti0 a vti by its name", in.Tunnels)
	}
	if !strings.Contains(in.Unknown["link kinds"], "operation not permitted") {
		t.Errorf("unknown %v", in.Unknown)
	}
}
