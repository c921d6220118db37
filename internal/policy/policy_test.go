package policy

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
)

func eps() []Endpoint {
	return []Endpoint{{"cali1111", net.IPv4(10, 0, 0, 2)}, {"cali2222", net.IPv4(10, 0, 0, 3)}}
}

func load(t *testing.T, restore ...[]byte) table {
	t.Helper()
	tb := newTable()
	for _, r := range restore {
		tb.load(t, r)
	}
	return tb
}

func mustCalico(t *testing.T, mode string, e []Endpoint, allow []*net.IPNet, hook bool) []byte {
	t.Helper()
	b, err := Calico(mode, e, allow, hook)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCalicoRuleSet(t *testing.T) {
	allow := PodNetworks([]net.IP{net.IPv4(10, 0, 0, 2), net.IPv4(10, 0, 1, 9), net.IPv4(10, 0, 0, 3)})
	if len(allow) != 2 || allow[0].String() != "10.0.0.0/24" || allow[1].String() != "10.0.1.0/24" {
		t.Fatalf("pod networks %v", allow)
	}
	wp, np := mustCalico(t, With, eps(), allow, true), mustCalico(t, Without, eps(), allow, false)
	s := string(wp)
	for _, want := range []string{
		"*filter\n", "-I FORWARD -j cali-FORWARD\n",
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
	if strings.Contains(string(np), " FORWARD ") || strings.Contains(string(np), "cali-pi-") {
		t.Errorf("np without hook has a hook or a policy chain:\n%s", np)
	}
	wc, wr := Count(wp)
	nc, nr := Count(np)
	// Static 4 chains, 2 dispatch roots, 2 profiles, 2 per endpoint; wp
	// adds the policy chain and, here, the 3 FORWARD hooks, the policy's
	// 6 allow rules (2 each but the last) and per endpoint the tier's 4
	// rules in its to-workload chain (2 endpoints).
	if wc != 4+2+2+1+4 || nc != 4+2+2+4 {
		t.Errorf("chains wp %d np %d", wc, nc)
	}
	if wr-nr != 3+(2*6-1)+2*4 {
		t.Errorf("rules wp %d np %d: policy and hooks should add 22", wr, nr)
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
	if _, err := Calico(With, append(eps(), eps()[0]), allow, true); err == nil || !strings.Contains(err.Error(), "cali1111") {
		t.Errorf("an interface given twice: %v", err)
	}
}

// The policy and profile chains are Felix's rendering of their rules
// (felix/rules/policy.go): each allow rule is followed by its return, so
// a packet leaves at the first rule that admits it, and the chain's
// trailing return is dropped. Before, the policy chain was every
// set-mark rule and one return at the end (a packet passed all 3M+1)
// and each profile chain had a return after its one rule.
func TestPolicyChainsAsFelix(t *testing.T) {
	allow := PodNetworks([]net.IP{net.IPv4(10, 0, 0, 2), net.IPv4(10, 0, 1, 9)})
	tb := load(t, mustCalico(t, With, eps(), allow, true))
	var want []string
	for _, n := range []string{"10.0.0.0/24", "10.0.1.0/24"} {
		for _, p := range []string{"tcp", "udp", "icmp"} {
			want = append(want, "-p "+p+" -s "+n+" -j MARK --set-xmark 0x10000/0x10000", "-m mark --mark 0x10000/0x10000 -j RETURN")
		}
	}
	want = want[:len(want)-1]
	if got := tb[chainPolicyIn]; !reflect.DeepEqual(got, want) {
		t.Errorf("policy chain\n got %q\nwant %q", got, want)
	}
	for _, c := range []string{chainProfIn, chainProfOut} {
		if got := tb[c]; !reflect.DeepEqual(got, []string{"-j MARK --set-xmark 0x10000/0x10000"}) {
			t.Errorf("%s: %q, want Felix's one rule", c, got)
		}
	}
	// Rules a new packet from the first pod to the second is tested
	// against in the policy chain: 2k for the k-th allow rule, all 11
	// for a source no rule admits.
	for _, c := range []struct {
		proto, src string
		policy     int
		verdict    string
	}{
		{"tcp", "10.0.0.2", 2, "ACCEPT"},
		{"udp", "10.0.1.9", 10, "ACCEPT"},
		{"icmp", "10.0.1.9", 11, "ACCEPT"},
		{"tcp", "192.168.0.1", 11, "DROP"},
	} {
		p := packet{in: "cali1111", out: "cali2222", proto: c.proto, src: net.ParseIP(c.src), state: "NEW"}
		verdict, seen := tb.walk(t, p)
		if verdict != c.verdict || seen[chainPolicyIn] != c.policy || seen[chainProfOut] != 1 {
			t.Errorf("%s from %s: %s, %d policy rules, %d profile rules; want %s, %d, 1", c.proto, c.src, verdict, seen[chainPolicyIn], seen[chainProfOut], c.verdict, c.policy)
		}
	}
	// The whole path of the first TCP packet: FORWARD 2, cali-FORWARD 6,
	// dispatch 1 + 2, cali-fw 7 + profile 1, cali-tw 6 + policy 2.
	_, seen := tb.walk(t, packet{in: "cali1111", out: "cali2222", proto: "tcp", src: net.IPv4(10, 0, 0, 2), state: "NEW"})
	if n := total(seen); n != 27 {
		t.Errorf("a new TCP packet between the two pods is tested against %d rules, want 27: %v", n, seen)
	}
}

func total(seen map[string]int) (n int) {
	for _, v := range seen {
		n += v
	}
	return n
}

// The dispatch chains are Felix's prefix tree, checked against the
// cases of felix/rules/dispatch_test.go (v3.29.7, "interfaces sharing
// prefix" and "Multiple interfaces sharing multiple prefixes").
func TestDispatchPrefixTree(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  map[string][]string
	}{
		{[]string{"cali2444", "cali1234", "cali2333"}, map[string][]string{
			"cali-from-wl-dispatch-2": {"-i cali2333 -g cali-fw-cali2333", "-i cali2444 -g cali-fw-cali2444", "-j DROP"},
			"cali-from-wl-dispatch":   {"-i cali1234 -g cali-fw-cali1234", "-i cali2+ -g cali-from-wl-dispatch-2", "-j DROP"},
			"cali-to-wl-dispatch-2":   {"-o cali2333 -g cali-tw-cali2333", "-o cali2444 -g cali-tw-cali2444", "-j DROP"},
			"cali-to-wl-dispatch":     {"-o cali1234 -g cali-tw-cali1234", "-o cali2+ -g cali-to-wl-dispatch-2", "-j DROP"},
		}},
		{[]string{"cali11", "cali12", "cali13", "cali21", "cali22"}, map[string][]string{
			"cali-from-wl-dispatch-1": {"-i cali11 -g cali-fw-cali11", "-i cali12 -g cali-fw-cali12", "-i cali13 -g cali-fw-cali13", "-j DROP"},
			"cali-from-wl-dispatch-2": {"-i cali21 -g cali-fw-cali21", "-i cali22 -g cali-fw-cali22", "-j DROP"},
			"cali-from-wl-dispatch":   {"-i cali1+ -g cali-from-wl-dispatch-1", "-i cali2+ -g cali-from-wl-dispatch-2", "-j DROP"},
			"cali-to-wl-dispatch-1":   {"-o cali11 -g cali-tw-cali11", "-o cali12 -g cali-tw-cali12", "-o cali13 -g cali-tw-cali13", "-j DROP"},
			"cali-to-wl-dispatch-2":   {"-o cali21 -g cali-tw-cali21", "-o cali22 -g cali-tw-cali22", "-j DROP"},
			"cali-to-wl-dispatch":     {"-o cali1+ -g cali-to-wl-dispatch-1", "-o cali2+ -g cali-to-wl-dispatch-2", "-j DROP"},
		}},
	} {
		var e []Endpoint
		for _, n := range c.names {
			e = append(e, Endpoint{Iface: n})
		}
		tb := load(t, mustCalico(t, Without, e, nil, false))
		for chain, want := range c.want {
			if got := tb[chain]; !reflect.DeepEqual(got, want) {
				t.Errorf("%v: %s\n got %q\nwant %q", c.names, chain, got, want)
			}
		}
		for chain := range tb {
			if strings.Contains(chain, "-wl-dispatch") && c.want[chain] == nil {
				t.Errorf("%v: chain %s Felix does not make", c.names, chain)
			}
		}
	}
}

// With 40 pods named as the engine names them (cali + 11 hex digits),
// a packet to any pod passes at most the root's bins and its own bin's
// names, not one rule per pod before its own (a flat list: up to 40).
func TestDispatchCostWithManyPods(t *testing.T) {
	var e []Endpoint
	bins := map[byte]int{}
	for i := range 40 {
		sum := sha1.Sum([]byte(fmt.Sprintf("cnb-test-server-%d", i)))
		n := "cali" + hex.EncodeToString(sum[:])[:11]
		e = append(e, Endpoint{Iface: n, IP: net.IPv4(10, 0, 0, byte(2+i))})
		bins[n[4]]++
	}
	maxBin := 0
	for _, v := range bins {
		maxBin = max(maxBin, v)
	}
	tb := load(t, mustCalico(t, Without, e, nil, true))
	if got := len(tb[dispatchTo]); got != len(bins)+1 {
		t.Errorf("root dispatch chain has %d rules, want one per next character (%d) and the drop", got, len(bins))
	}
	worst := 0
	for _, x := range e {
		_, seen := tb.walk(t, packet{in: "eth1", out: x.Iface, proto: "tcp", src: net.IPv4(10, 0, 1, 2), state: "NEW"})
		n := 0
		for c, v := range seen {
			if strings.HasPrefix(c, dispatchTo) {
				n += v
			}
		}
		worst = max(worst, n)
	}
	if worst > len(bins)+maxBin || worst >= 40 {
		t.Errorf("a packet to a pod passes up to %d dispatch rules, want at most %d bins + %d names", worst, len(bins), maxBin)
	}
	t.Logf("40 pods: %d bins, largest %d; a packet passes at most %d dispatch rules", len(bins), maxBin, worst)
}

// FORWARD's hooks are Felix's: the jump to cali-FORWARD at the top, the
// accept of what policy marked and the forwarded mark appended after
// what FORWARD held (kube-proxy's hooks), once per node; cali-FORWARD is
// StaticFilterForwardChains and accepts nothing itself.
func TestForwardHooksAsFelix(t *testing.T) {
	kube := []byte("*filter\n:KUBE-FORWARD - [0:0]\n-A FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD\n" +
		"-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\nCOMMIT\n")
	allow := PodNetworks([]net.IP{net.IPv4(10, 0, 0, 2)})
	tb := load(t, kube, mustCalico(t, With, eps(), allow, true), mustCalico(t, With, eps(), allow, false))
	want := []string{
		"-j cali-FORWARD",
		`-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`,
		`-m comment --comment "Policy explicitly accepted packet." -m mark --mark 0x10000/0x10000 -j ACCEPT`,
		"-j MARK --set-xmark 0x10000/0x10000",
	}
	if got := tb["FORWARD"]; !reflect.DeepEqual(got, want) {
		t.Errorf("FORWARD after a hooked write and a rewrite\n got %q\nwant %q", got, want)
	}
	wantFwd := []string{
		"-j MARK --set-xmark 0x0/0xe0000",
		"-m mark --mark 0x0/0x10000 -j cali-from-hep-forward",
		"-i cali+ -j cali-from-wl-dispatch",
		"-o cali+ -j cali-to-wl-dispatch",
		"-j cali-to-hep-forward",
		"-j cali-cidr-block",
	}
	if got := tb[chainForward]; !reflect.DeepEqual(got, wantFwd) {
		t.Errorf("cali-FORWARD\n got %q\nwant %q", got, wantFwd)
	}
	// An accepted packet passes kube-proxy's hook before the accept.
	verdict, seen := tb.walk(t, packet{in: "cali1111", out: "cali2222", proto: "tcp", src: net.IPv4(10, 0, 0, 2), state: "NEW"})
	if verdict != "ACCEPT" || seen["KUBE-FORWARD"] != 1 || seen["FORWARD"] != 3 {
		t.Errorf("accepted packet: %s, FORWARD %d rules, KUBE-FORWARD %d; want ACCEPT, 3, 1", verdict, seen["FORWARD"], seen["KUBE-FORWARD"])
	}
}

// A rewrite for fewer pods deletes the chains only the earlier rule set
// declared (endpoint chains, a dispatch bin's child) in the same
// transaction, and keeps every chain it declares.
func TestRetire(t *testing.T) {
	many := []Endpoint{{Iface: "cali11"}, {Iface: "cali12"}, {Iface: "cali21"}}
	first := mustCalico(t, Without, many, nil, true)
	next := mustCalico(t, Without, many[1:], nil, false)
	rw, err := Retire(next, Declared(first))
	if err != nil {
		t.Fatal(err)
	}
	tb := load(t, first, rw)
	var got []string
	for c := range tb {
		if c != "FORWARD" {
			got = append(got, c)
		}
	}
	if want := Declared(next); len(got) != len(want) {
		t.Errorf("after the rewrite the table holds %d chains %v, the rule set declares %d %v", len(got), got, len(want), want)
	}
	for _, c := range []string{"cali-fw-cali11", "cali-from-wl-dispatch-1"} {
		if _, ok := tb[c]; ok {
			t.Errorf("stale chain %s kept", c)
		}
	}
	if same, _ := Retire(next, Declared(next)); string(same) != string(next) {
		t.Error("nothing stale, yet the rule set changed")
	}
}
