package inspect

import (
	"context"
	"slices"
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
	in := Inspect(context.Background(), Env{Root: tree(t, files), Run: &fakeRunner{t: t}})
	var got []string
	for _, d := range in.Tunnels {
		got = append(got, d.Name+":"+d.Kind)
	}
	want := []string{"flannel.1:vxlan", "flannel.ipip:ipip", "tunl0:ipip"}
	if !slices.Equal(got, want) {
		t.Errorf("tunnels %v\nwant     %v", got, want)
	}
}
