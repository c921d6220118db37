package catalog

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/calicorouted"
	"github.com/cnibench/cnibench/internal/datapath/kuberouter"
	"github.com/cnibench/cnibench/internal/probe"
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
		o        Options
		field    string
		want     string
		underlay int // 1500 when 0
	}{
		{o: Options{Type: "flannel-vxlan", MTU: 1451}, field: "mtu", want: "at most 1450"},
		// WireGuard's default leaves room for IPv6; the underlay is IPv4.
		{o: Options{Type: "wireguard", MTU: 1440}},
		{o: Options{Type: "wireguard", MTU: 1441}, field: "mtu", want: "at most 1440"},
		// Weave's fixed default is checked too, not only a given mtu.
		{o: Options{Type: "weave"}, underlay: 1400, field: "mtu", want: "default pod MTU 1376 is more than it carries over a 1400-byte underlay"},
		{o: Options{Type: "weave", MTU: 1350}, underlay: 1400},
		{o: Options{Type: "weave", MTU: 1450}, field: "", want: ""},
		{o: Options{Type: "weave", MTU: 1451}, field: "mtu", want: "at most 1450"},
		{o: Options{Type: "calico-ipip", MTU: 1480}, field: "", want: ""},
		{o: Options{Type: "host", MTU: 1400}, field: "mtu", want: "no MTU of its own"},
		{o: Options{Type: "bridge", Policy: "wp"}, field: "policy", want: "only Calico"},
		{o: Options{Type: "cilium", Policy: "np"}, field: "policy", want: "eBPF"},
		{o: Options{Type: "calico-routed", Policy: "wp"}, field: "", want: ""},
		{o: Options{Type: "macvlan", Implementation: "flanneld"}, field: "implementation", want: "only bridge and flannel-vxlan"},
		{o: Options{Type: "calico-routed", Implementation: "bird"}, field: "", want: ""},
		{o: Options{Type: "calico-routed", Implementation: "bird", MTU: 1400, Policy: "np"}, field: "", want: ""},
		{o: Options{Type: "calico-routed", Implementation: "bird", MTU: 1501}, field: "mtu", want: "at most 1500"},
		{o: Options{Type: "calico-ipip", Implementation: "bird"}, field: "implementation", want: "only calico-routed and kube-router have their routes distributed by BIRD here (not calico-ipip)"},
		{o: Options{Type: "calico-routed", Implementation: "gobgp"}, field: "implementation", want: `unknown implementation "gobgp" (builtin, flanneld, bird)`},
	}
	for _, c := range cases {
		p := Check(c.o, cmp.Or(c.underlay, 1500))
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
	if !strings.Contains(p["wiring"], "bridge, flannel-udp, flannel-vxlan, ipvlan, ipvlan-l3, kube-router, macvlan, wireguard") {
		t.Errorf("calico-vxlan cni: %v", p)
	}
	if p := Check(Options{Type: "host", Wiring: "cni"}, 1500); p["wiring"] == "" {
		t.Error("host accepted cni wiring")
	}
}

func TestBuildBird(t *testing.T) {
	for _, typ := range []string{"calico-routed", "kube-router"} {
		d, err := Build(Options{Type: typ, Implementation: "bird", MTU: 1400})
		if err != nil {
			t.Fatal(err)
		}
		switch d.(type) {
		case *calicorouted.BIRD, *kuberouter.BIRD:
		default:
			t.Errorf("%s by bird is %T", typ, d)
		}
		if d.Name() != typ {
			t.Errorf("%s by bird is named %s", typ, d.Name())
		}
		if !slices.Contains(d.Features(), probe.ToolBird) {
			t.Errorf("%s: features %v lack the bird tool, so the engine would not refuse it without BIRD", typ, d.Features())
		}
		if _, ok := d.(datapath.Closer); !ok {
			t.Errorf("%s: BIRD datapath is not a Closer: its daemons would outlive the run", typ)
		}
		if _, ok := d.(datapath.Daemons); !ok {
			t.Errorf("%s: BIRD datapath does not list its daemons", typ)
		}
		if d.MTU(1500) != 1400 {
			t.Errorf("%s: MTU override ignored: %d", typ, d.MTU(1500))
		}
		// The builtin one stays daemon-less.
		s, _ := Build(Options{Type: typ})
		if _, ok := s.(datapath.Closer); ok || slices.Contains(s.Features(), probe.ToolBird) {
			t.Errorf("builtin %s %T needs BIRD or closing", typ, s)
		}
	}
	for _, typ := range []string{"calico-vxlan", "bridge", "flannel-vxlan"} {
		if _, err := Build(Options{Type: typ, Implementation: "bird"}); err == nil {
			t.Errorf("%s by bird accepted", typ)
		}
	}
}

func TestVariantsBuild(t *testing.T) {
	for _, o := range Variants() {
		if _, err := Build(o); err != nil {
			t.Errorf("variant %+v: %v", o, err)
		}
	}
}

// The CPU cost per packet counts a datapath's own per-packet processes
// (datapath.PacketProcesses): flannel-udp's flanneld encapsulates in user
// space, while flanneld's vxlan and host-gw backends, BIRD, etcd and the
// local weave (its fast datapath alone: no sleeve router runs) leave
// every packet to the kernel. Each is named as perf reports a command:
// at most 15 characters (TASK_COMM_LEN).
func TestPacketProcesses(t *testing.T) {
	all := All()
	for _, o := range Variants() {
		d, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, d)
	}
	udp := 0
	for _, d := range all {
		got := datapath.PacketProcessesOf(d)
		want := []string(nil)
		if d.Name() == "flannel-udp" {
			want = []string{"flanneld"}
			udp++
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: per-packet processes %q, want %q", d.Name(), got, want)
		}
		for _, p := range got {
			if p == "" || len(p) > 15 {
				t.Errorf("%s: process %q is no command perf reports", d.Name(), p)
			}
		}
	}
	if udp == 0 {
		t.Error("the catalogue has no flannel-udp")
	}
}
