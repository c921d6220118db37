package catalog

import (
	"strings"
	"testing"
)

func TestBuildAppliesMTU(t *testing.T) {
	d, err := Build(Options{Type: "flannel-vxlan", MTU: 1400})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.MTU(1500); got != 1400 {
		t.Errorf("override ignored: MTU %d", got)
	}
	// A fresh value each time: the override does not stick to the catalog.
	d2, _ := Build(Options{Type: "flannel-vxlan"})
	if got := d2.MTU(1500); got != 1450 {
		t.Errorf("default MTU %d, want 1450", got)
	}
	if _, err := Build(Options{Type: "host", MTU: 1400}); err == nil {
		t.Error("host accepted an MTU")
	}
}

func TestBuildFlanneld(t *testing.T) {
	for typ, name := range map[string]string{"flannel-vxlan": "flannel-vxlan", "bridge": "flannel-host-gw"} {
		d, err := Build(Options{Type: typ, Implementation: "flanneld"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Name() != name {
			t.Errorf("%s by flanneld is %s, want %s", typ, d.Name(), name)
		}
	}
	if _, err := Build(Options{Type: "calico-vxlan", Implementation: "flanneld"}); err == nil || !strings.Contains(err.Error(), "bridge and flannel-vxlan") {
		t.Errorf("calico by flanneld: %v", err)
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		o     Options
		field string
		want  string
	}{
		{Options{Type: "flannel-vxlan", MTU: 1451}, "mtu", "at most 1450"},
		{Options{Type: "weave", MTU: 1450}, "", ""},
		{Options{Type: "weave", MTU: 1451}, "mtu", "at most 1450"},
		{Options{Type: "calico-ipip", MTU: 1480}, "", ""},
		{Options{Type: "host", MTU: 1400}, "mtu", "no MTU of its own"},
		{Options{Type: "bridge", Policy: "wp"}, "policy", "only Calico"},
		{Options{Type: "cilium", Policy: "np"}, "policy", "eBPF"},
		{Options{Type: "calico-routed", Policy: "wp"}, "", ""},
		{Options{Type: "macvlan", Implementation: "flanneld"}, "implementation", "only bridge and flannel-vxlan"},
	}
	for _, c := range cases {
		p := Check(c.o, 1500)
		if c.field == "" {
			if len(p) > 0 {
				t.Errorf("%+v: unexpected %v", c.o, p)
			}
			continue
		}
		if !strings.Contains(p[c.field], c.want) {
			t.Errorf("%+v: got %v, want %s: ...%s", c.o, p, c.field, c.want)
		}
	}
}

func TestCheckWiring(t *testing.T) {
	if p := Check(Options{Type: "flannel-vxlan", Wiring: "cni"}, 1500); len(p) > 0 {
		t.Errorf("flannel-vxlan cni: %v", p)
	}
	p := Check(Options{Type: "calico-vxlan", Wiring: "cni"}, 1500)
	if !strings.Contains(p["wiring"], "bridge, flannel-udp, flannel-vxlan, ipvlan, macvlan, wireguard") {
		t.Errorf("calico-vxlan cni: %v", p)
	}
	if p := Check(Options{Type: "host", Wiring: "cni"}, 1500); p["wiring"] == "" {
		t.Error("host accepted cni wiring")
	}
}
