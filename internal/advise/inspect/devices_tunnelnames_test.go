package inspect

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cnitunnels"
)

// Every tunnel device of the table of CNIs' tunnel devices is told by
// its name alone, where sysfs says nothing of its kind, with the
// table's encapsulation and IPv6: among them the udp backend's TUN
// device of another number (flannel1) and OVS's VXLAN port, which
// CNI detection and the catalogue knew by name and inspection did not.
func TestTunnelKindsFromTable(t *testing.T) {
	files := map[string]string{"proc/sys/kernel/osrelease": "6.8.0\n"}
	want := map[string]cnitunnels.Device{}
	fill := strings.NewReplacer("[0-9]*", "1", "*", "x")
	for _, d := range cnitunnels.List {
		name := fill.Replace(d.Pattern)
		if _, dup := want[name]; dup {
			continue
		}
		want[name] = d
		files["sys/class/net/"+name+"/mtu"] = "1450\n"
	}
	in := Inspect(context.Background(), Env{Root: tree(t, files), Run: &fakeRunner{t: t}})
	got := map[string]Device{}
	for _, d := range in.Tunnels {
		got[d.Name] = d
	}
	for name, d := range want {
		if g, ok := got[name]; !ok || g.Kind != d.Encap || g.IPv6 != d.IPv6 {
			t.Errorf("%s: %+v, want kind %s (IPv6 %v) by its name", name, g, d.Encap, d.IPv6)
		}
	}
	for _, name := range []string{"flannel1", "vxlan_sys_4789"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not told a tunnel by its name", name)
		}
	}
}
