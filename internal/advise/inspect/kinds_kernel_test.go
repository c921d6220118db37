package inspect

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// testNS makes a throw-away namespace and a netlink handle in it.
func testNS(t *testing.T) (string, *netns.NetlinkHandle) {
	t.Helper()
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	ns := kerneltest.Netns(t, j, id, "k")
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return ns, h
}

func linkAttrs(name string) netlink.LinkAttrs {
	a := netlink.NewLinkAttrs()
	a.Name = name
	return a
}

// inspectNS inspects the devices of namespace ns (its sysfs, its link
// kinds from netlink), as the agent inspects its node's.
func inspectNS(t *testing.T, ns string) (*Inspection, map[string]string) {
	t.Helper()
	var kinds map[string]string
	if err := netns.Do(ns, func() (err error) { kinds, err = netlinkKinds(); return err }); err != nil {
		t.Fatal(err)
	}
	var in *Inspection
	err := netns.WithSysfs(ns, netns.Read, func(sysRoot string) error {
		root := t.TempDir()
		if err := os.Symlink(sysRoot, filepath.Join(root, "sys")); err != nil {
			return err
		}
		in = Inspect(context.Background(), Env{Root: root, LinkKinds: func() (map[string]string, error) { return kinds, nil }})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return in, kinds
}

func tunnelKinds(in *Inspection) map[string]string {
	got := map[string]string{}
	for _, d := range in.Tunnels {
		got[d.Name] = d.Kind
	}
	return got
}

// TestKernelLinkKinds: netlink gives each device of a namespace its
// kind, and an inspection of that namespace finds its VXLAN device.
func TestKernelLinkKinds(t *testing.T) {
	kerneltest.RequireKernel(t, probe.Veth, probe.Vxlan)
	ns, h := testNS(t)
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: linkAttrs("va"), PeerName: "vb"}); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkAdd(&netlink.Vxlan{LinkAttrs: linkAttrs("vx9"), VxlanId: 9, Port: 4789, SrcAddr: net.ParseIP("10.77.0.1")}); err != nil {
		t.Fatal(err)
	}
	in, kinds := inspectNS(t, ns)
	if kinds["va"] != "veth" || kinds["vx9"] != "vxlan" {
		t.Errorf("link kinds %v; want va veth, vx9 vxlan", kinds)
	}
	got := tunnelKinds(in)
	if got["vx9"] != "vxlan" {
		t.Errorf("tunnels %v; want vx9 a vxlan", got)
	}
	// Beside it, only the devices a loaded tunnel module puts in every
	// namespace (the full-kernel VM loads ipip and ip_gre: tunl0, gre0).
	for name := range got {
		if name != "vx9" && !slices.Contains(moduleFallbacks, name) {
			t.Errorf("tunnels %v: %s is neither vx9 nor a module's fallback device", got, name)
		}
	}
}

// moduleFallbacks are the devices tunnel modules create in each network
// namespace once loaded.
var moduleFallbacks = []string{"tunl0", "gre0", "gretap0", "erspan0", "ip_vti0", "sit0", "ip6tnl0", "ip6gre0", "ip6_vti0"}

// TestKernelVTIAndIPIP: an IPsec VTI and an IP-in-IP device, alike in
// sysfs (ARPHRD_TUNNEL), are told apart by their netlink kind, whatever
// their names; the ip_vti module's fallback ip_vti0 is a vti too.
func TestKernelVTIAndIPIP(t *testing.T) {
	kerneltest.RequireKernel(t, probe.IPIP)
	ns, h := testNS(t)
	local := net.ParseIP("10.77.0.1")
	// Names that would mislead: the VTI named like no VTI, the IP-in-IP
	// device like one.
	if err := h.LinkAdd(&netlink.Iptun{LinkAttrs: linkAttrs("vti9"), Local: local, Remote: net.ParseIP("10.77.0.2")}); err != nil {
		t.Fatalf("ipip device: %v", err)
	}
	if err := h.LinkAdd(&netlink.Vti{LinkAttrs: linkAttrs("sec0"), Local: local, Remote: net.ParseIP("10.77.0.3"), IKey: 7, OKey: 7}); err != nil {
		if os.Getenv("CNIBENCH_IN_VM") != "" {
			t.Fatalf("in the full-kernel VM: vti device: %v", err)
		}
		t.Skipf("skipped: creating a vti device failed (this kernel lacks the ip_vti module?): %v", err)
	}
	in, kinds := inspectNS(t, ns)
	got := tunnelKinds(in)
	if got["sec0"] != "vti" || got["vti9"] != "ipip" {
		t.Errorf("tunnels %v (link kinds %v); want sec0 a vti, vti9 ipip", got, kinds)
	}
	if _, ok := kinds["ip_vti0"]; ok && got["ip_vti0"] != "vti" {
		t.Errorf("ip_vti0 is %q, want vti", got["ip_vti0"])
	}
	if _, ok := kinds["tunl0"]; ok && got["tunl0"] != "ipip" {
		t.Errorf("tunl0 is %q, want ipip", got["tunl0"])
	}
}
