package nftables

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func load(t testing.TB, name string) *Ruleset {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestParseCaptured(t *testing.T) {
	rs := load(t, "ruleset-after.json")
	if got := strings.Join(rs.Tables, ","); got != "inet/cnbtest,ip/nat,ip/filter" {
		t.Errorf("tables %s", got)
	}
	if len(rs.Chains) != 7 || len(rs.Rules) != 11 {
		t.Errorf("%d chains, %d rules; want 7, 11", len(rs.Chains), len(rs.Rules))
	}
	byKey := map[string]Rule{}
	for _, r := range rs.Rules {
		byKey[r.ChainKey()+"#"+r.Spec[:min(len(r.Spec), 60)]] = r
	}
	counted := 0
	for _, r := range rs.Rules {
		if r.Counted {
			counted++
		}
		// Counter values never enter a rule's identity.
		if strings.Contains(r.Spec, `"packets"`) {
			t.Errorf("spec keeps counter values: %s", r.Spec)
		}
	}
	if counted != 9 {
		t.Errorf("%d counted rules, want 9 (all but the icmp match and the jump)", counted)
	}
	// The rule using the named counter takes its packets from the object.
	for _, r := range rs.Rules {
		if r.Chain == "out" && strings.Contains(r.Spec, `"counter":"named_c"`) && (!r.Counted || r.Packets != 5) {
			t.Errorf("named-counter rule %+v, want 5 packets", r)
		}
		if r.Chain == "INPUT" && strings.Contains(r.Spec, `"iifname"`) && r.Packets != 5 {
			t.Errorf("iptables-nft rule %+v, want 5 packets (iptables-save -c says [5:260])", r)
		}
	}
}

func TestTraversedCaptured(t *testing.T) {
	before, after := load(t, "ruleset-before.json"), load(t, "ruleset-after.json")
	p := Traversed(before, after)
	want := Path{Chains: 4, Rules: 5, TotalChains: 7, TotalRules: 11, CountedRules: 9}
	if p != want {
		t.Errorf("path %+v, want %+v\ntraversed: %s", p, want, strings.Join(TraversedRules(before, after), "\n"))
	}
	for _, r := range TraversedRules(before, after) {
		if strings.Contains(r, "127.0.0.3") || strings.Contains(r, "KUBE-SERVICES") {
			t.Errorf("rule no packet hit counted as traversed: %s", r)
		}
	}
	if p := Traversed(after, after); p.Rules != 0 || p.Chains != 0 {
		t.Errorf("no traffic, path %+v", p)
	}
	m := p.Metrics()
	if m[MetricPathRules] != 5 || m[MetricCountedRules] != 9 || m[MetricRules] != 11 || m[MetricChains] != 7 || m[MetricPathChains] != 4 {
		t.Errorf("metrics %v", m)
	}
	if s := p.Add(p); s.Rules != 10 || s.TotalRules != 22 {
		t.Errorf("sum %+v", s)
	}
}

// A ruleset rewritten with the same rules (new handles, as
// iptables-nft-restore leaves them) still matches rule for rule.
func TestRulesMatchAcrossHandles(t *testing.T) {
	a := []byte(`{"nftables":[{"table":{"family":"ip","name":"t","handle":1}},{"chain":{"family":"ip","table":"t","name":"c","handle":1}},
{"rule":{"family":"ip","table":"t","chain":"c","handle":2,"expr":[{"counter":{"packets":1,"bytes":60}},{"accept":null}]}},
{"rule":{"family":"ip","table":"t","chain":"c","handle":3,"expr":[{"counter":{"packets":7,"bytes":60}},{"accept":null}]}}]}`)
	b := []byte(`{"nftables":[{"table":{"family":"ip","name":"t","handle":9}},{"chain":{"family":"ip","table":"t","name":"c","handle":9}},
{"rule":{"family":"ip","table":"t","chain":"c","handle":20,"expr":[{"counter":{"packets":1,"bytes":60}},{"accept":null}]}},
{"rule":{"family":"ip","table":"t","chain":"c","handle":30,"expr":[{"counter":{"packets":9,"bytes":60}},{"accept":null}]}}]}`)
	ra, err := Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if p := Traversed(ra, rb); p.Rules != 1 || p.Chains != 1 {
		t.Errorf("path %+v, want the second identical rule only", p)
	}
}

// A ruleset rewritten during the trial (kube-proxy's nft -f, or
// iptables-nft-restore) restarts its counters: a rule at 5000 before
// and 200 after counted since, and is on the path; one back at 0 is not.
// Both are resets.
func TestTraversedAcrossReset(t *testing.T) {
	rule := func(h, pk int) string {
		return fmt.Sprintf(`{"rule":{"family":"ip","table":"t","chain":"c","handle":%d,"expr":[{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":%d}},{"counter":{"packets":%d,"bytes":0}},{"accept":null}]}}`, h, h, pk)
	}
	doc := func(a, b, c int) []byte {
		return []byte(`{"nftables":[{"table":{"family":"ip","name":"t","handle":1}},{"chain":{"family":"ip","table":"t","name":"c","handle":1}},` +
			rule(6, a) + "," + rule(17, b) + "," + rule(1, c) + `]}`)
	}
	before, err := Parse(doc(5000, 5000, 40))
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(doc(200, 0, 40))
	if err != nil {
		t.Fatal(err)
	}
	if p := Traversed(before, after); p.Rules != 1 || p.Chains != 1 || p.Resets != 2 || p.Metrics()[MetricResets] != 2 {
		t.Errorf("path %+v, want the first rule traversed and 2 resets\ntraversed: %v", p, TraversedRules(before, after))
	}
	if s := Traversed(before, after).Add(Traversed(before, after)); s.Resets != 4 {
		t.Errorf("sum %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"", "{", `{"other":[]}`, `{"nftables":[{"a":1,"b":2}]}`,
		`{"nftables":[{"rule":{"family":"ip","table":"t","chain":"c","expr":[{"counter":[1]}]}}]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	rs, err := Parse([]byte(`{"nftables":[{"metainfo":{"version":"1.0.6","json_schema_version":1}}]}`))
	if err != nil || len(rs.Rules) != 0 || len(rs.Tables) != 0 {
		t.Errorf("empty ruleset: %+v %v", rs, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"ruleset-before.json", "ruleset-after.json"} {
		b, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"nftables":[{"rule":{"family":"ip","table":"t","chain":"c","expr":[{"counter":"x"}]}},{"counter":{"family":"ip","table":"t","name":"x","packets":3}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := Parse(b)
		if err != nil {
			return
		}
		p := Traversed(rs, rs)
		if p.Rules != 0 || p.Chains != 0 || p.Resets != 0 {
			t.Fatalf("a ruleset against itself traverses %+v", p)
		}
		if p.CountedRules > p.TotalRules {
			t.Fatalf("more counted rules than rules: %+v", p)
		}
		empty := &Ruleset{}
		if q := Traversed(empty, rs); q.Rules > q.CountedRules || q.Chains > q.Rules || q.Resets != 0 {
			t.Fatalf("path from nothing %+v", q)
		}
	})
}
