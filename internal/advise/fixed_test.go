package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// nic-gro and tunnel-gro fired on GRO "off [fixed]", where ethtool -K gro
// on cannot succeed: a feature the driver fixes is no candidate, and the
// reason says so.
func TestFixedOffloadIsNoCandidate(t *testing.T) {
	rs, err := Lookup("nic-gro", "tunnel-gro")
	if err != nil {
		t.Fatal(err)
	}
	in := load(t, "flannel-nic-no-offload")
	if got := Evaluate(rs[0], in); got.Status != Candidate {
		t.Fatalf("nic-gro before: %s %q", got.Status, got.Why)
	}
	in.NICs[0].Offloads[inspect.FeatGRO] = inspect.Offload{On: false, Fixed: true}
	if got := Evaluate(rs[0], in); got.Status != NotApplicable || !strings.Contains(strings.Join(got.Why, " "), "off [fixed]: fixed by the driver") {
		t.Errorf("nic-gro on GRO off [fixed]: %s %q", got.Status, got.Why)
	}

	in = load(t, "calico-vxlan-jumbo")
	if got := Evaluate(rs[1], in); got.Status != Candidate {
		t.Fatalf("tunnel-gro before: %s %q", got.Status, got.Why)
	}
	tun := primaryTunnel(in)
	tun.Offloads[inspect.FeatGRO] = inspect.Offload{On: false, Fixed: true}
	if got := Evaluate(rs[1], in); got.Status != NotApplicable || !strings.Contains(strings.Join(got.Why, " "), "fixed by the driver") {
		t.Errorf("tunnel-gro on GRO off [fixed]: %s %q", got.Status, got.Why)
	}
}
