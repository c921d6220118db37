package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// overlayNode is the fixture's Calico IP-in-IP node turned into a node of
// cni in mode kind whose NIC segments IP-in-IP and GRE but not UDP
// tunnels (VXLAN, Geneve).
func overlayNode(t *testing.T, cni, kind, dev string) *inspect.Inspection {
	in := load(t, "ipip-nic-vxlan-offload")
	in.CNI = inspect.CNI{Name: cni, Mode: kind}
	in.Tunnels[0].Name, in.Tunnels[0].Kind = dev, kind
	in.NICs[0].Offloads[inspect.TunnelOffload["vxlan"]] = inspect.Offload{On: false, Fixed: true}
	in.NICs[0].Offloads[inspect.TunnelOffload["ipip"]] = inspect.Offload{On: true}
	in.NICs[0].Offloads[inspect.TunnelOffload["gre"]] = inspect.Offload{On: true}
	return in
}

// With Calico VXLAN on a NIC offloading IP-in-IP and GRE, overlay-offload
// proposed "ipip, gre" and printed a calicoctl patch that kept VXLAN
// (vxlanMode Always: a no-op), and GRE, for which Calico has no backend;
// it said UDP 4789 whatever the CNI. It now proposes the overlays the CNI
// has, the command goes to them, and the firewall line is the CNI's.
func TestOverlayOffloadTargetsTheCNIsOverlays(t *testing.T) {
	rs, err := Lookup("overlay-offload")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], overlayNode(t, "calico", "vxlan", "vxlan.calico"))
	if got.Status != Candidate || got.Knobs[0].Params["to"] != "ipip" {
		t.Fatalf("calico vxlan: %s %v %q", got.Status, got.Knobs, got.Why)
	}
	s := got.Permanent[0].Text
	if !strings.Contains(s, `{"spec":{"ipipMode":"Always","vxlanMode":"Never"}}`) || strings.Contains(s, `"vxlanMode":"Always"`) ||
		!strings.Contains(s, "IP protocol 4") || strings.Contains(s, "gre") {
		t.Errorf("calico vxlan to ipip:\n%s", s)
	}

	// Flannel IP-in-IP on a NIC with VXLAN offload only: Flannel's VXLAN
	// port is the kernel's 8472, not 4789; no GRE (Flannel has none).
	in := overlayNode(t, "flannel", "ipip", "flannel.ipip")
	in.NICs[0].Offloads[inspect.TunnelOffload["vxlan"]] = inspect.Offload{On: true}
	in.NICs[0].Offloads[inspect.TunnelOffload["ipip"]] = inspect.Offload{On: false}
	got = Evaluate(rs[0], in)
	if got.Status != Candidate || got.Knobs[0].Params["to"] != "vxlan" {
		t.Fatalf("flannel ipip: %s %v %q", got.Status, got.Knobs, got.Why)
	}
	if s := got.Permanent[0].Text; !strings.Contains(s, "UDP 8472") || strings.Contains(s, "4789") || !strings.Contains(s, `"Backend": {"Type": "vxlan"}`) {
		t.Errorf("flannel ipip to vxlan:\n%s", s)
	}

	// Flannel VXLAN on a NIC offloading GRE only: nothing Flannel has.
	in = overlayNode(t, "flannel", "vxlan", "flannel.1")
	in.NICs[0].Offloads[inspect.TunnelOffload["ipip"]] = inspect.Offload{On: false}
	if got = Evaluate(rs[0], in); got.Status != NotApplicable {
		t.Errorf("flannel vxlan, GRE offload only: %s %v %q", got.Status, got.Knobs, got.Why)
	}

	// A CNI whose overlays cnibench does not know: unknown, not a guess.
	if got = Evaluate(rs[0], overlayNode(t, "weave", "vxlan", "vxlan-6784")); got.Status != Unknown {
		t.Errorf("weave: %s %v %q", got.Status, got.Knobs, got.Why)
	}
}
