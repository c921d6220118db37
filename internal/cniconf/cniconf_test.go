package cniconf

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestMarshal(t *testing.T) {
	b, err := Marshal("cbr0", Bridge{Type: TypeBridge, Bridge: "cni0", MTU: 1450, IPAM: HostLocal{
		Type: TypeHostLocal, Ranges: [][]Range{{{Subnet: "10.244.1.0/24"}}}, Routes: []Route{{Dst: "10.244.0.0/16"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Every field a plugin reads is spelled as the plugins spell it, and
	// false booleans are written (flannel-cni writes ipMasq: false).
	want := `{"cniVersion":"1.0.0","name":"cbr0","plugins":[{"type":"bridge","bridge":"cni0","mtu":1450,"isGateway":false,"isDefaultGateway":false,"hairpinMode":false,"ipMasq":false,` +
		`"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.1.0/24"}]],"routes":[{"dst":"10.244.0.0/16"}]}}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if _, err := Marshal("", Bridge{}); err == nil {
		t.Error("a list without a name was accepted")
	}
	if _, err := Marshal("x"); err == nil {
		t.Error("a list without plugins was accepted")
	}
}

func TestTypes(t *testing.T) {
	b, err := Marshal("u", Underlay{Type: TypeMacvlan, Master: "eth1", Mode: "bridge", MTU: 1500, IPAM: HostLocal{Type: TypeHostLocal}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Types(b)
	if err != nil || !slices.Equal(got, []string{TypeMacvlan, TypeHostLocal}) {
		t.Errorf("Types = %v, %v", got, err)
	}
	got, err = Types(Loopback())
	if err != nil || !slices.Equal(got, []string{TypeLoopback}) {
		t.Errorf("Types(Loopback) = %v, %v", got, err)
	}
	for _, bad := range []string{`{`, `{"plugins":[]}`, `{"plugins":[{"ipam":{"type":"host-local"}}]}`} {
		if _, err := Types([]byte(bad)); err == nil {
			t.Errorf("Types(%s) succeeded", bad)
		}
	}
}

func TestLoopbackIsAList(t *testing.T) {
	var l List
	if err := json.Unmarshal(Loopback(), &l); err != nil {
		t.Fatal(err)
	}
	if l.CNIVersion != Version || l.Name != "cni-loopback" || len(l.Plugins) != 1 {
		t.Errorf("loopback list %+v", l)
	}
}
