package advise

import (
	"strings"
	"testing"
)

// macvlan's permanent form once wrote /etc/cni/net.d/10-macvlan.conflist
// with a literal "POD_CIDR": the runtime takes the lexicographically first
// file there as every pod's network, so on a node whose CNI's file sorts
// after it (10-weave.conflist) every new pod would have had a broken
// macvlan network. It is now a Multus secondary network, a template the
// user completes, and nothing names a path in the CNI directory.
func TestMacvlanIsASecondaryNetwork(t *testing.T) {
	rs, err := Lookup("macvlan")
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(rs[0], load(t, "flannel-nic-no-offload"))
	if got.Status != Candidate || len(got.Permanent) == 0 {
		t.Fatalf("%s %q", got.Status, got.Why)
	}
	for _, p := range got.Permanent {
		if strings.HasPrefix(p.Path, "/etc/cni/") || strings.Contains(p.Text, "POD_CIDR") {
			t.Errorf("a file the runtime could take as every pod's network: %s\n%s", p.Path, p.Text)
		}
		for _, want := range []string{"TEMPLATE", "kind: NetworkAttachmentDefinition", `"master": "enp0s31f6"`, "FILL-IN", "k8s.v1.cni.cncf.io/networks: macvlan-pods", "Do not put this into /etc/cni/net.d"} {
			if !strings.Contains(p.Text, want) {
				t.Errorf("permanent form lacks %q:\n%s", want, p.Text)
			}
		}
	}
	if !strings.Contains(rs[0].Risk, "lexicographically first") {
		t.Errorf("risk does not say why it is no file in /etc/cni/net.d: %s", rs[0].Risk)
	}
}
