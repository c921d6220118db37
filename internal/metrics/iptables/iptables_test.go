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
			_ = Traversed(rs, rs)
		}
	})
}
