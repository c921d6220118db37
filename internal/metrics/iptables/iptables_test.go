package iptables

import (
	"os"
	"strings"
	"testing"
)

func TestParseCaptured(t *testing.T) {
	b, err := os.ReadFile("testdata/save-c-nat-chain.txt")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Chains) != 8 || len(rs.Rules) != 2 {
		t.Fatalf("chains %v rules %v", rs.Chains, rs.Rules)
	}
	if r := rs.Rules[1]; r.Table != "nat" || r.Chain != "POSTROUTING" || r.Spec != "-j CNB-TEST" {
		t.Errorf("rule %+v", r)
	}
}

func TestTraversed(t *testing.T) {
	before, _ := Parse([]byte("*filter\n:INPUT ACCEPT [5:500]\n:FORWARD ACCEPT [0:0]\n:X - [0:0]\n[1:10] -A INPUT -j X\n[0:0] -A X -j ACCEPT\n[0:0] -A X -j ACCEPT\n[0:0] -A FORWARD -j DROP\nCOMMIT\n"))
	after, _ := Parse([]byte("*filter\n:INPUT ACCEPT [9:900]\n:FORWARD ACCEPT [0:0]\n:X - [0:0]\n[4:40] -A INPUT -j X\n[0:0] -A X -j ACCEPT\n[3:30] -A X -j ACCEPT\n[0:0] -A FORWARD -j DROP\nCOMMIT\n"))
	p := Traversed(before, after)
	if p.Rules != 2 || p.Chains != 2 || p.TotalRules != 4 || p.TotalChains != 3 {
		t.Errorf("%+v", p)
	}
}

// kube-proxy's iptables-restore during a trial flushes and refills the
// chains it writes, restarting their counters: a rule at 5000 before and
// 200 after counted 200 packets since, where "after > before" missed it.
// A counter that went back is a reset (counted, and said); it is on the
// path when it counted since.
func TestTraversedAcrossReset(t *testing.T) {
	before, err := Parse([]byte("*nat\n:PREROUTING ACCEPT [900:9000]\n:KUBE-SVC - [0:0]\n[5000:300000] -A PREROUTING -j KUBE-SVC\n" +
		"[5000:300000] -A KUBE-SVC -j DNAT\n[40:2400] -A KUBE-SVC -j RETURN\nCOMMIT\n"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse([]byte("*nat\n:PREROUTING ACCEPT [3:180]\n:KUBE-SVC - [0:0]\n[200:12000] -A PREROUTING -j KUBE-SVC\n" +
		"[0:0] -A KUBE-SVC -j DNAT\n[40:2400] -A KUBE-SVC -j RETURN\nCOMMIT\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := Traversed(before, after)
	// Traversed: the PREROUTING rule (reset, 200 since) and chain; not
	// the DNAT rule (reset, nothing since) nor RETURN (unchanged).
	// Resets: the two rules and PREROUTING's policy.
	if p.Rules != 1 || p.Chains != 1 || p.Resets != 3 {
		t.Errorf("path %+v, want 1 rule, 1 chain, 3 resets", p)
	}
	if m := p.Metrics(); m[MetricResets] != 3 || m[MetricPathRules] != 1 {
		t.Errorf("metrics %v", m)
	}
	if s := p.Add(p); s.Resets != 6 || s.Rules != 2 || s.TotalRules != 6 {
		t.Errorf("sum %+v", s)
	}
	if q := Traversed(after, after); q.Resets != 0 || q.Rules != 0 {
		t.Errorf("no change: %+v", q)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"-A INPUT -j ACCEPT\n", "*filter\n[x:y] -A INPUT\n", ":INPUT ACCEPT [0:0]\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("accepted %q", strings.TrimSpace(in))
		}
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/save-c-nat-chain.txt")
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Parse(data)
		if err == nil {
			if p := Traversed(rs, rs); p.Rules != 0 || p.Chains != 0 || p.Resets != 0 {
				t.Fatalf("a ruleset against itself: %+v", p)
			}
		}
	})
}
