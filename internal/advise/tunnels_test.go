package advise

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// tunnelMTUKnobs evaluates tunnel-mtu on in and returns its status and
// knobs.
func tunnelMTUKnobs(t *testing.T, in *inspect.Inspection) (string, string) {
	t.Helper()
	rs, err := Lookup("tunnel-mtu")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], in)
	return got.Status, knobText(got.Knobs)
}

// Flannel's ipip backend beside the ipip module's fallback tunl0, both
// IP-in-IP: the overlay is flannel.ipip whatever the order, and the
// target is the underlay's 9000 less IP-in-IP's 20 bytes.
func TestFlannelIPIPBesideTunl0(t *testing.T) {
	in := load(t, "calico-vxlan-jumbo")
	in.CNI = inspect.CNI{Name: "flannel", Mode: "ipip"}
	in.PodLinks = []inspect.LinkGroup{{Prefix: "veth", Count: 4, MinMTU: 1480, MaxMTU: 1480}}
	in.Tunnels = []inspect.Device{{Name: "tunl0", Kind: "ipip", MTU: 1480}, {Name: "flannel.ipip", Kind: "ipip", MTU: 1480}}
	if status, knobs := tunnelMTUKnobs(t, in); status != Candidate || knobs != "mtu on flannel.ipip: mtu=8980, pods=8980" {
		t.Errorf("tunnel-mtu: %s, knobs %q; want mtu on flannel.ipip: mtu=8980, pods=8980", status, knobs)
	}
}

// A dual-stack node: each overlay has an IPv6 device beside its IPv4
// one, whose packets carry a 20-byte longer outer header (Calico felix:
// vxlanV6MTUOverhead 70, wireguardV6MTUOverhead 80). The IPv4 device is
// the overlay the rules name, and the pods' MTU must fit the IPv6 one:
// pods at 1450 over IPv6 VXLAN would send 1520-byte frames on a 1500 link.
func TestDualStackTunnels(t *testing.T) {
	dual := func(underlay, pods int, tunnels ...inspect.Device) *inspect.Inspection {
		in := load(t, "calico-vxlan-jumbo")
		in.NICs[0].MTU = underlay
		in.PodLinks = []inspect.LinkGroup{{Prefix: "cali", Count: 4, MinMTU: pods, MaxMTU: pods}}
		in.Tunnels = tunnels
		return in
	}
	vx := func(mtu, mtu6 int) []inspect.Device {
		// Sorted as the inspection lists them: '-' before '.'.
		return []inspect.Device{{Name: "vxlan-v6.calico", Kind: "vxlan", IPv6: true, MTU: mtu6}, {Name: "vxlan.calico", Kind: "vxlan", MTU: mtu}}
	}
	for _, c := range []struct {
		name          string
		in            *inspect.Inspection
		status, knobs string
	}{
		{"calico vxlan at its defaults on 1500", dual(1500, 1430, vx(1450, 1430)...), NotApplicable, ""},
		{"calico vxlan, pods at the IPv4 MTU on 1500", dual(1500, 1450, vx(1450, 1450)...), NotApplicable, ""},
		{"calico vxlan on 9000", dual(9000, 1430, vx(1450, 1430)...), Candidate, "mtu on vxlan.calico: mtu=8930, pods=8930"},
		{"calico wireguard on 9000", func() *inspect.Inspection {
			in := dual(9000, 1420, inspect.Device{Name: "wg-v6.cali", Kind: "wireguard", IPv6: true, MTU: 1420},
				inspect.Device{Name: "wireguard.cali", Kind: "wireguard", MTU: 1440})
			in.CNI.Mode = "wireguard"
			return in
		}(), Candidate, "mtu on wireguard.cali: mtu=8920, pods=8920"},
	} {
		status, knobs := tunnelMTUKnobs(t, c.in)
		if status != c.status || knobs != c.knobs {
			t.Errorf("%s: tunnel-mtu %s, knobs %q; want %s, %q", c.name, status, knobs, c.status, c.knobs)
		}
	}
	// With pods at 1450 the overlay's MTU is above what IPv6 VXLAN
	// allows; tunnel-mtu does not propose it, and the target says 1430.
	in := dual(1500, 1450, vx(1450, 1450)...)
	if got, err := targetMTU(in); err != nil || got != 1430 {
		t.Errorf("target over a dual-stack 1500 underlay: %d %v, want 1430", got, err)
	}
	if p := primaryTunnel(in); p == nil || p.Name != "vxlan.calico" {
		t.Errorf("overlay of a dual-stack node: %+v, want vxlan.calico", p)
	}
	if !slices.Contains(Summarize(in), Finding{"tunnel vxlan-v6.calico", "vxlan over IPv6, MTU 1450; offloads unknown"}) {
		t.Errorf("the IPv6 tunnel is not said to be one: %v", Summarize(in))
	}
	for name, want := range map[string]string{"overhead": "70", "overhead_source": "vxlan over IPv6 (vxlan-v6.calico)"} {
		if got, err := params[name](in); err != nil || got != want {
			t.Errorf("{%s}: %q %v, want %q", name, got, err, want)
		}
	}
}

// An IPsec host: the ip_vti module's fallback ip_vti0, and a VTI a VPN
// uses, are no pod overlay (no CNI's overlay is a VTI, and ESP's
// overhead depends on the SA's cipher): the overlay rules do not apply,
// and beside Calico VXLAN the target stays the underlay less VXLAN's 50.
func TestIPsecVTIIsNoOverlay(t *testing.T) {
	for _, vti := range []string{"ip_vti0", "vti0"} {
		in := load(t, "calico-vxlan-jumbo")
		in.CNI = inspect.CNI{Name: "bridge"}
		in.PodLinks = nil
		in.Tunnels = []inspect.Device{{Name: vti, Kind: "vti", MTU: 1480}}
		for _, rule := range []string{"native-routing", "tunnel-mtu", "tunnel-gro", "overlay-offload"} {
			rs, err := Lookup(rule)
			if err != nil {
				t.Fatal(err)
			}
			if got := Evaluate(rs[0], in); got.Status != NotApplicable {
				t.Errorf("%s on a host with %s: %s (%q), knobs %q; want not applicable", rule, vti, got.Status, got.Why, knobText(got.Knobs))
			}
		}
		in = load(t, "calico-vxlan-jumbo")
		in.Tunnels = append([]inspect.Device{{Name: vti, Kind: "vti", MTU: 1480}}, in.Tunnels...)
		if status, knobs := tunnelMTUKnobs(t, in); status != Candidate || knobs != "mtu on vxlan.calico: mtu=8950, pods=8950" {
			t.Errorf("calico vxlan beside %s: tunnel-mtu %s, knobs %q; want mtu on vxlan.calico: mtu=8950, pods=8950", vti, status, knobs)
		}
	}
}

// A WireGuard overlay encrypts: native routing would drop the
// encryption, and no NIC segments it, so neither rule applies (Calico's
// WireGuard mode over BGP routes natively already; Cilium's over native
// routing too). Beside VXLAN as the CNI's mode, native-routing applies,
// and its A/B emulates the node's own overlay.
func TestWireGuardIsNoOverlayToLeave(t *testing.T) {
	for _, c := range []struct{ cni, dev string }{{"calico", "wireguard.cali"}, {"cilium", "cilium_wg0"}} {
		in := load(t, "calico-vxlan-jumbo")
		in.CNI = inspect.CNI{Name: c.cni, Mode: "wireguard"}
		in.Tunnels = []inspect.Device{{Name: c.dev, Kind: "wireguard", MTU: 8940}}
		for _, rule := range []string{"native-routing", "overlay-offload"} {
			rs, err := Lookup(rule)
			if err != nil {
				t.Fatal(err)
			}
			if got := Evaluate(rs[0], in); got.Status != NotApplicable {
				t.Errorf("%s on %s with %s: %s (%q), knobs %q; want not applicable", rule, c.cni, c.dev, got.Status, got.Why, knobText(got.Knobs))
			}
		}
	}
	rs, err := Lookup("native-routing")
	if err != nil {
		t.Fatal(err)
	}
	for fixture, want := range map[string]string{"ipip-nic-vxlan-offload": "calico-ipip", "calico-vxlan-jumbo": "calico-vxlan"} {
		in := load(t, fixture)
		if got := Evaluate(rs[0], in); got.Status != Candidate {
			t.Fatalf("%s: native-routing %s (%q)", fixture, got.Status, got.Why)
		}
		sets, err := rs[0].ProveSets(in)
		if err != nil {
			t.Fatal(err)
		}
		if j := strings.Join(sets, " "); !strings.Contains(j, "type: "+want) || !strings.Contains(j, "type: calico-routed") {
			t.Errorf("%s: native-routing's A/B %q, want the node's own overlay %s against calico-routed", fixture, j, want)
		}
	}
}

// The pods' MTU is the path's where it is below the tunnel's: pods
// started before an MTU raise keep theirs. tunnel-mtu then says where
// the low MTU is and its A/B starts from it, not from the tunnel's
// (an A/B of 8950 against 8950 could only find no gain). A Docker
// container's veth* beside Calico is none of its pods: on a jumbo node
// it neither fires the rule nor sets the MTU found.
func TestTunnelMTUOfThePods(t *testing.T) {
	rs, err := Lookup("tunnel-mtu")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "calico-vxlan-jumbo")
	for i := range in.Tunnels {
		in.Tunnels[i].MTU = 8950
	}
	in.PodLinks = []inspect.LinkGroup{{Prefix: "cali", Count: 4, MinMTU: 1450, MaxMTU: 8950}}
	got := Evaluate(rs[0], in)
	if got.Status != Candidate || !strings.Contains(got.Effect, "(1450, on the pods' cali* links (vxlan.calico is at 8950") {
		t.Errorf("pods below the tunnel: %s, effect %q", got.Status, got.Effect)
	}
	sets, err := rs[0].ProveSets(in)
	if err != nil {
		t.Fatal(err)
	}
	if j := strings.Join(sets, " "); !strings.Contains(j, "mtu: 1450") || !strings.Contains(j, "mtu: 8950") {
		t.Errorf("A/B %q, want 1450 against 8950", j)
	}
	in.PodLinks = []inspect.LinkGroup{{Prefix: "cali", Count: 4, MinMTU: 8950, MaxMTU: 8950}, {Prefix: "veth", Count: 2, MinMTU: 1500, MaxMTU: 1500}}
	if got := Evaluate(rs[0], in); got.Status != NotApplicable {
		t.Errorf("Calico pods at the target beside Docker's veths: %s (%q), effect %q", got.Status, got.Why, got.Effect)
	}
	// A link whose MTU could not be read (0) is no MTU of the path.
	in.PodLinks = []inspect.LinkGroup{{Prefix: "cali", Count: 4, MinMTU: 0, MaxMTU: 8950}}
	if got := Evaluate(rs[0], in); got.Status != NotApplicable {
		t.Errorf("a pod link of unread MTU: %s (%q), effect %q", got.Status, got.Why, got.Effect)
	}
	// Flannel's pods are veth*: theirs count.
	in.CNI = inspect.CNI{Name: "flannel", Mode: "vxlan"}
	in.Tunnels = []inspect.Device{{Name: "flannel.1", Kind: "vxlan", MTU: 8950}}
	in.PodLinks = []inspect.LinkGroup{{Prefix: "veth", Count: 2, MinMTU: 1450, MaxMTU: 1450}}
	if got := Evaluate(rs[0], in); got.Status != Candidate {
		t.Errorf("flannel pods at 1450 under a jumbo overlay: %s (%q)", got.Status, got.Why)
	}
}

// An Open vSwitch underlay (OpenShift's br-ex over ens3): the summary
// names the NIC under it, not a veth, and the NIC rules read ens3.
func TestOVSUnderlaySummary(t *testing.T) {
	in := load(t, "calico-vxlan-jumbo")
	nic := in.NICs[0]
	in.Underlay, in.UnderlayLower = "br-ex", []string{nic.Name}
	in.NICs = append(in.NICs, inspect.NIC{Name: "br-ex", MTU: nic.MTU, NUMANode: -1, Virtual: true})
	want := Finding{"NIC br-ex", "virtual (stacked over " + nic.Name + ": a VLAN, macvlan, bond or Open vSwitch port), MTU 9000, 0 rx / 0 tx queues"}
	if !slices.Contains(Summarize(in), want) {
		t.Errorf("summary %v, want %v", Summarize(in), want)
	}
	if ns, err := nics(in); err != nil || len(ns) != 1 || ns[0].Name != nic.Name {
		t.Errorf("NICs under br-ex: %v %v, want %s", ns, err, nic.Name)
	}
}
