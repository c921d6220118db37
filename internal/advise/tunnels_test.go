package advise

import (
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
