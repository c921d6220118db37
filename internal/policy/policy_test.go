package policy

import (
	"net"
	"strings"
	"testing"
)

func eps() []Endpoint {
	return []Endpoint{{"cali1111", net.IPv4(10, 0, 0, 2)}, {"cali2222", net.IPv4(10, 0, 0, 3)}}
}

func TestCalicoRuleSet(t *testing.T) {
	allow := PodNetworks([]net.IP{net.IPv4(10, 0, 0, 2), net.IPv4(10, 0, 1, 9), net.IPv4(10, 0, 0, 3)})
	if len(allow) != 2 || allow[0].String() != "10.0.0.0/24" || allow[1].String() != "10.0.1.0/24" {
		t.Fatalf("pod networks %v", allow)
	}
	wp, err := Calico(With, eps(), allow, true)
	if err != nil {
		t.Fatal(err)
	}
	np, err := Calico(Without, eps(), allow, false)
	if err != nil {
		t.Fatal(err)
	}
	s := string(wp)
	for _, want := range []string{
		"*filter\n", "-A FORWARD -j cali-FORWARD\n",
		"-A cali-to-wl-dispatch -o cali2222 -g cali-tw-cali2222\n",
		"-A cali-tw-cali1111 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n",
		"-A cali-tw-cali1111 -j cali-pi-_cnibench-allow-pods\n",
		"-A cali-pi-_cnibench-allow-pods -p tcp -s 10.0.1.0/24 -j MARK --set-xmark 0x10000/0x10000\n",
		"COMMIT\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("wp lacks %q", want)
		}
	}
	if strings.Contains(string(np), "-A FORWARD ") || strings.Contains(string(np), "cali-pi-") {
		t.Errorf("np without hook has a hook or a policy chain:\n%s", np)
	}
	wc, wr := Count(wp)
	nc, nr := Count(np)
	// Per endpoint 2 chains; wp adds the policy chain and, here, the hook
	// rule plus 3 protocols x 2 networks + 1 return.
	if wc != 5+1+4 || nc != 5+4 {
		t.Errorf("chains wp %d np %d", wc, nc)
	}
	if wr-nr != 1+6+1 {
		t.Errorf("rules wp %d np %d: policy should add 8", wr, nr)
	}
	if _, err := Calico("strict", eps(), allow, true); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := Calico(With, []Endpoint{{IP: net.IPv4(1, 2, 3, 4)}}, allow, true); err == nil {
		t.Error("endpoint without interface accepted")
	}
}
