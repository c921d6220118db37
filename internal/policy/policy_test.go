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
		"-A cali-tw-cali1111 -j MARK --set-xmark 0x0/0x30000\n-A cali-tw-cali1111 -j MARK --set-xmark 0x0/0x20000\n" +
			"-A cali-tw-cali1111 -m mark --mark 0x0/0x20000 -j cali-pi-_cnibench-allow-pods\n" +
			"-A cali-tw-cali1111 -m mark --mark 0x10000/0x10000 -j RETURN\n-A cali-tw-cali1111 -m mark --mark 0x0/0x20000 -j DROP\n" +
			"-A cali-tw-cali1111 -j cali-pri-kns.cnibench\n-A cali-tw-cali1111 -m mark --mark 0x10000/0x10000 -j RETURN\n-A cali-tw-cali1111 -j DROP\n",
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
	// rule plus 3 protocols x 2 networks + 1 return, and per endpoint the
	// tier's 4 rules in its to-workload chain (2 endpoints).
	if wc != 5+1+4 || nc != 5+4 {
		t.Errorf("chains wp %d np %d", wc, nc)
	}
	if wr-nr != 1+6+1+2*4 {
		t.Errorf("rules wp %d np %d: policy should add 16", wr, nr)
	}
	if want := "-A cali-tw-cali2222 -j MARK --set-xmark 0x0/0x30000\n-A cali-tw-cali2222 -j cali-pri-kns.cnibench\n"; !strings.Contains(string(np), want) {
		t.Errorf("np's to-workload chain does not go straight to the profile:\n%s", np)
	}
	if _, err := Calico("strict", eps(), allow, true); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := Calico(With, []Endpoint{{IP: net.IPv4(1, 2, 3, 4)}}, allow, true); err == nil {
		t.Error("endpoint without interface accepted")
	}
}
