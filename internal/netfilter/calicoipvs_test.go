package netfilter

import (
	"reflect"
	"strings"
	"testing"
)

// Felix with IPVS support (kube-proxy in IPVS mode) differs from Felix
// without it by exactly the rules of felix/rules/static.go's
// KubeIPVSSupportEnabled branches, in their positions, and the
// endpoint-mark chains (dispatch.go, endpoints.go), one cali-sm-<iface>
// per pod; everything else is the same rule for rule.
func TestCalicoIPVSRules(t *testing.T) {
	for _, name := range []string{"calico-np-xsub", "calico-wp-ipip"} {
		t.Run(name, func(t *testing.T) {
			n := testNode(t)
			plain, err := Generate(name, n)
			if err != nil {
				t.Fatal(err)
			}
			n.KubeIPVS = true
			ipvs, err := Generate(name, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := ipvs.Validate(); err != nil {
				t.Fatal(err)
			}
			const clear = "-m mark ! --mark 0x0/0xfff00000"
			// The chains that change, whole, with Felix's rules in place.
			for _, c := range []struct{ table, chain string }{
				{"filter", "cali-INPUT"}, {"filter", "cali-OUTPUT"}, {"mangle", "cali-POSTROUTING"},
			} {
				got, base := ipvs.ChainRules(c.table, c.chain), plain.ChainRules(c.table, c.chain)
				var want []string
				switch c.chain {
				case "cali-INPUT": // after the IP-in-IP rules, before the workload goto
					at := indexOf(base, "-i cali+ -g cali-wl-to-host")
					want = splice(base, at, "-j MARK --set-xmark 0x0/0xfff00000", "-j cali-forward-check", clear+" -j RETURN")
				case "cali-OUTPUT": // after the accept of what is accepted
					want = splice(base, 1, clear+" -g cali-forward-endpoint-mark")
				case "cali-POSTROUTING": // after the return of what FORWARD marked
					want = splice(base, 1, clear+" -j RETURN")
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s/%s with IPVS support:\n%s\nwant:\n%s", c.table, c.chain, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			wantIPVSChains(t, ipvs)
			// Nothing else changes: the same chains but the new ones,
			// the same rules but the new ones.
			pc, pr := plain.Count()
			ic, ir := ipvs.Count()
			if ic-pc != 6 || ir-pr != 5+4+5+4+3+2 {
				t.Errorf("IPVS support adds %d chains and %d rules; want 6 (forward-check, forward-endpoint-mark, set-endpoint-mark, from-endpoint-mark, 2 cali-sm-) and 23", ic-pc, ir-pr)
			}
		})
	}
}

// wantIPVSChains checks the chains IPVS support adds on testNode's
// pods cali0a and cali0b, rule for rule.
func wantIPVSChains(t *testing.T, rs *Ruleset) {
	t.Helper()
	for chain, want := range map[string][]string{
		"cali-forward-check": {
			"-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN",
			`-d 198.18.0.2/32 -p tcp -m comment --comment "To kubernetes NodePort service" -m multiport --dports 30000:32767 -g cali-set-endpoint-mark`,
			`-d 198.18.0.2/32 -p udp -m comment --comment "To kubernetes NodePort service" -m multiport --dports 30000:32767 -g cali-set-endpoint-mark`,
			`! -d 198.18.0.2/32 -m comment --comment "To kubernetes service" -j cali-set-endpoint-mark`,
		},
		"cali-forward-endpoint-mark": {
			"-m mark ! --mark 0x100000/0xfff00000 -j cali-from-endpoint-mark",
			"-o cali+ -j cali-to-wl-dispatch",
			"-j cali-to-hep-forward",
			"-j MARK --set-xmark 0x0/0xfff00000",
			`-m comment --comment "Policy explicitly accepted packet." -m mark --mark 0x10000/0x10000 -j ACCEPT`,
		},
		// cali0a and cali0b share "cali0", so each is its own bin.
		"cali-set-endpoint-mark": {
			"-i cali0a -g cali-sm-cali0a",
			"-i cali0b -g cali-sm-cali0b",
			`-i cali+ -m comment --comment "Unknown endpoint" -j DROP`,
			`-m comment --comment "Non-Cali endpoint mark" -j MARK --set-xmark 0x100000/0xfff00000`,
		},
		"cali-from-endpoint-mark": {
			"-m mark --mark 0xcc100000/0xfff00000 -g cali-fw-cali0a",
			"-m mark --mark 0xcc200000/0xfff00000 -g cali-fw-cali0b",
			`-m comment --comment "Unknown interface" -j DROP`,
		},
		"cali-sm-cali0a": {"-j MARK --set-xmark 0xcc100000/0xfff00000"},
		"cali-sm-cali0b": {"-j MARK --set-xmark 0xcc200000/0xfff00000"},
	} {
		if got := rs.ChainRules("filter", chain); !reflect.DeepEqual(got, want) {
			t.Errorf("filter/%s:\n%s\nwant:\n%s", chain, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// Felix's set-endpoint-mark chain is its prefix tree: names sharing a
// next character go through a child chain, which has no end rules.
func TestCalicoIPVSPrefixTree(t *testing.T) {
	n := testNode(t)
	n.KubeIPVS = true
	n.Pods = []Pod{{Iface: "cali2444"}, {Iface: "cali1234"}, {Iface: "cali2333"}}
	rs, err := Calico(n, CalicoNoPolicy, false)
	if err != nil {
		t.Fatal(err)
	}
	// dispatch_test.go's expectation for these names.
	if got, want := rs.ChainRules("filter", "cali-set-endpoint-mark"), []string{
		"-i cali1234 -g cali-sm-cali1234",
		"-i cali2+ -g cali-set-endpoint-mark-2",
		`-i cali+ -m comment --comment "Unknown endpoint" -j DROP`,
		`-m comment --comment "Non-Cali endpoint mark" -j MARK --set-xmark 0x100000/0xfff00000`,
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("cali-set-endpoint-mark:\n%s", strings.Join(got, "\n"))
	}
	if got, want := rs.ChainRules("filter", "cali-set-endpoint-mark-2"), []string{
		"-i cali2333 -g cali-sm-cali2333", "-i cali2444 -g cali-sm-cali2444",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("cali-set-endpoint-mark-2:\n%s", strings.Join(got, "\n"))
	}
}

// The endpoint marks are Felix's: FNV-1 of the name modulo 4096 in the
// mask 0xfff00000 (Felix's dispatch_test.go, with an 8-bit mask, expects
// 0xd4, 0xa7 and 0x52 for cali1234, cali2333 and cali2444: the low bits
// of these positions), the next free position on a collision, never the
// non-Calico mark's (1) nor 0.
func TestCalicoEndpointMarks(t *testing.T) {
	got, err := calicoEndpointMarks([]string{"cali2444", "cali1234", "cali2333", "cali7e", "cali1c0", "califc2", "califc3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint32{
		"cali1234": 0xcd400000, "cali2333": 0xfa700000, "cali2444": 0xc5200000,
		// Both hash to 1984; cali1c0 sorts first.
		"cali1c0": 0x7c000000, "cali7e": 0x7c100000,
		// califc2 hashes to 1 (taken), califc3 to 0 (never used): the next
		// free positions.
		"califc2": 0x200000, "califc3": 0x300000,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("marks %#v\nwant %#v", got, want)
	}
}

// Felix's this-host set is written as the node's address: without one
// the IPVS rules cannot be written.
func TestCalicoIPVSNeedsNodeIP(t *testing.T) {
	n := testNode(t)
	n.KubeIPVS, n.NodeIP = true, nil
	if _, err := Calico(n, CalicoNoPolicy, false); err == nil || !strings.Contains(err.Error(), "this-host") {
		t.Errorf("calico with IPVS support and no node address: %v", err)
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// splice is list with add inserted before index at.
func splice(list []string, at int, add ...string) []string {
	out := append(append([]string(nil), list[:at]...), add...)
	return append(out, list[at:]...)
}
