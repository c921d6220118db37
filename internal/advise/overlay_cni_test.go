package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// Calico's IP-in-IP routes come from BGP (BIRD); a VXLAN install often
// runs without it, and the calicoctl patch alone cut pod traffic between
// nodes there. Under the tigera operator the patch is reverted from the
// Installation. The text now says what IP-in-IP needs (BGP, TCP 179,
// IPv4 only) and gives the operator's form with when to use which.
func TestOverlayOffloadCalicoNeedsBGPAndOperatorForm(t *testing.T) {
	rs, err := Lookup("overlay-offload")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], overlayNode(t, "calico", "vxlan", "vxlan.calico"))
	if got.Status != Candidate {
		t.Fatalf("calico vxlan: %s %q", got.Status, got.Why)
	}
	s := got.Permanent[0].Text
	for _, want := range []string{
		"routes come from BGP", "calico_backend: bird", "spec.calicoNetwork.bgp: Enabled", "clusterRoutingMode: Felix",
		"TCP 179", "IPv4 only", "tigera-operator v1.35", "reverts",
		`kubectl patch installation default --type=json -p '[{"op":"replace","path":"/spec/calicoNetwork/ipPools/0/encapsulation","value":"IPIP"}]'`,
		"IPIPCrossSubnet",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("calico vxlan to ipip lacks %q:\n%s", want, s)
		}
	}

	// IP-in-IP to VXLAN: no BGP needed, the operator's value is VXLAN.
	in := overlayNode(t, "calico", "ipip", "tunl0")
	in.NICs[0].Offloads[inspect.TunnelOffload["vxlan"]] = inspect.Offload{On: true}
	in.NICs[0].Offloads[inspect.TunnelOffload["ipip"]] = inspect.Offload{On: false}
	got = Evaluate(rs[0], in)
	if got.Status != Candidate {
		t.Fatalf("calico ipip: %s %q", got.Status, got.Why)
	}
	s = got.Permanent[0].Text
	if !strings.Contains(s, `"value":"VXLAN"`) || !strings.Contains(s, `"ipipMode":"Never","vxlanMode":"Always"`) || strings.Contains(s, "TCP 179") {
		t.Errorf("calico ipip to vxlan:\n%s", s)
	}
}

// Flannel's ConfigMap is elsewhere under Canal and before v0.19, and its
// backends.md says the backend should not be changed at runtime.
func TestOverlayOffloadFlannelConfigMapsAndRuntimeChange(t *testing.T) {
	rs, err := Lookup("overlay-offload")
	if err != nil {
		t.Fatal(err)
	}
	in := overlayNode(t, "flannel", "ipip", "flannel.ipip")
	in.NICs[0].Offloads[inspect.TunnelOffload["vxlan"]] = inspect.Offload{On: true}
	in.NICs[0].Offloads[inspect.TunnelOffload["ipip"]] = inspect.Offload{On: false}
	got := Evaluate(rs[0], in)
	if got.Status != Candidate {
		t.Fatalf("flannel ipip: %s %q", got.Status, got.Why)
	}
	s := got.Permanent[0].Text
	for _, want := range []string{"kube-system/canal-config", "kube-system/kube-flannel-cfg", "v0.19", `"should not be changed at runtime"`, "flannel.ipip", "reboot", "by hand"} {
		if !strings.Contains(s, want) {
			t.Errorf("flannel lacks %q:\n%s", want, s)
		}
	}
}

// Cilium's overlays (VXLAN, Geneve) share one NIC offload
// (tx-udp_tnl-segmentation), so no NIC offloads one and not the other:
// a Cilium entry could never propose anything. Every CNI listed must
// have overlays the NIC can tell apart; Cilium is not applicable.
func TestOverlayOffloadCNIOverlaysDiffer(t *testing.T) {
	for cni, kinds := range cniOverlays {
		seen := map[string]string{}
		for _, k := range kinds {
			if o, ok := seen[inspect.TunnelOffload[k]]; ok {
				t.Errorf("%s: %s and %s share the offload %s: neither can be proposed over the other", cni, o, k, inspect.TunnelOffload[k])
			}
			seen[inspect.TunnelOffload[k]] = k
		}
	}
	rs, err := Lookup("overlay-offload")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"vxlan", "geneve"} {
		got := Evaluate(rs[0], overlayNode(t, "cilium", kind, "cilium_"+kind))
		if got.Status != NotApplicable || !strings.Contains(strings.Join(got.Why, "; "), "share one offload flag") {
			t.Errorf("cilium %s: %s %v %q, want not applicable with the reason", kind, got.Status, got.Knobs, got.Why)
		}
	}
}

// native-routing's Calico line names the Installation form too: under
// the tigera operator a calicoctl ippool patch is reverted.
func TestNativeRoutingCalicoOperatorForm(t *testing.T) {
	rs, err := Lookup("native-routing")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], overlayNode(t, "calico", "vxlan", "vxlan.calico"))
	if got.Status != Candidate || len(got.Permanent) == 0 {
		t.Fatalf("calico vxlan: %s %q", got.Status, got.Why)
	}
	if s := got.Permanent[0].Text; !strings.Contains(s, "kubectl patch installation default") || !strings.Contains(s, `"value":"VXLANCrossSubnet"`) {
		t.Errorf("native-routing's Calico line lacks the operator's form:\n%s", s)
	}
}

// IP-in-IP carries IPv4 only: a Calico node whose overlay is IPv6 VXLAN
// (vxlan-v6.calico) is not offered IP-in-IP, whatever the NIC offloads.
func TestOverlayOffloadNoIPIPForIPv6(t *testing.T) {
	rs, err := Lookup("overlay-offload")
	if err != nil {
		t.Fatal(err)
	}
	in := overlayNode(t, "calico", "vxlan", "vxlan-v6.calico")
	in.Tunnels[0].IPv6 = true
	if got := Evaluate(rs[0], in); got.Status == Candidate {
		t.Errorf("calico IPv6 vxlan: %s %v, want no IP-in-IP proposed", got.Status, got.Knobs)
	}
}
