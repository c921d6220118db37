package netfilter

import (
	"reflect"
	"strings"
	"testing"
)

// restoreInto plays iptables-restore --noflush's placement of the rules
// in text on chains (table/chain -> specs): "-A" appends, "-I" without a
// rule number inserts at position 1, a declared user chain is flushed.
// Only the order is modelled, which is what Insert is about.
func restoreInto(t *testing.T, chains map[string][]string, text []byte) {
	t.Helper()
	table := ""
	for _, l := range strings.Split(string(text), "\n") {
		switch {
		case strings.HasPrefix(l, "*"):
			table = l[1:]
		case strings.HasPrefix(l, ":"):
			chains[table+"/"+strings.Fields(l[1:])[0]] = nil
		case strings.HasPrefix(l, "-A "), strings.HasPrefix(l, "-I "):
			chain, spec, _ := strings.Cut(l[3:], " ")
			k := table + "/" + chain
			if l[1] == 'A' {
				chains[k] = append(chains[k], spec)
			} else {
				chains[k] = append([]string{spec}, chains[k]...)
			}
		case l == "" || l == "COMMIT":
		default:
			t.Fatalf("unexpected line %q", l)
		}
	}
}

// Inserted hooks are written as "-I" lines in reverse, so that the
// chain holds them in the order they were made, above the rules it
// held; appended ones follow as "-A" lines.
func TestInsertRendering(t *testing.T) {
	rs := New()
	rs.Chain("filter", "A-1", "B-1")
	rs.Insert("filter", "FORWARD", "-j A-1")
	rs.Append("filter", "FORWARD", "-j ACCEPT")
	rs.Insert("filter", "FORWARD", "-j B-1")
	rs.Append("filter", "A-1", "-j RETURN")
	rs.Insert("nat", "POSTROUTING", "-j MASQUERADE")
	want := "*filter\n:A-1 - [0:0]\n:B-1 - [0:0]\n" +
		"-I FORWARD -j B-1\n-I FORWARD -j A-1\n" +
		"-A FORWARD -j ACCEPT\n-A A-1 -j RETURN\nCOMMIT\n" +
		"*nat\n-I POSTROUTING -j MASQUERADE\nCOMMIT\n"
	if got := string(rs.Bytes()); got != want {
		t.Errorf("Bytes:\n%s\nwant:\n%s", got, want)
	}
	if got := rs.ChainRules("filter", "FORWARD"); !reflect.DeepEqual(got, []string{"-j A-1", "-j B-1", "-j ACCEPT"}) {
		t.Errorf("ChainRules(FORWARD) = %q", got)
	}
	if c, r := rs.Count(); c != 2 || r != 5 {
		t.Errorf("Count = %d chains, %d rules; want 2, 5", c, r)
	}
	if err := rs.Validate(); err != nil {
		t.Error(err)
	}

	// Applied to a chain that holds rules already, the inserted ones go
	// above them in their order and the appended below.
	chains := map[string][]string{"filter/FORWARD": {"-j KUBE-FORWARD"}}
	restoreInto(t, chains, rs.Bytes())
	if got := chains["filter/FORWARD"]; !reflect.DeepEqual(got, []string{"-j A-1", "-j B-1", "-j KUBE-FORWARD", "-j ACCEPT"}) {
		t.Errorf("FORWARD after restore = %q", got)
	}

	// Round trip: Parse gives back the same rules, inserted ones marked.
	back, err := Parse(rs.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Bytes()) != want {
		t.Errorf("round trip:\n%s", back.Bytes())
	}
	var tops []string
	for _, r := range back.Rules() {
		if r.Top {
			tops = append(tops, r.Table+"/"+r.Chain+" "+r.Spec)
		}
	}
	if want := []string{"filter/FORWARD -j A-1", "filter/FORWARD -j B-1", "nat/POSTROUTING -j MASQUERADE"}; !reflect.DeepEqual(tops, want) {
		t.Errorf("parsed inserted rules %q, want %q", tops, want)
	}
	if c, r := back.Count(); c != 2 || r != 5 {
		t.Errorf("parsed Count = %d, %d", c, r)
	}
}

// A declared chain is written whole: inserting at its top is refused,
// as is a numbered insert in input (it would not be the top).
func TestInsertRefused(t *testing.T) {
	rs := New()
	rs.Chain("filter", "A-1")
	rs.Insert("filter", "A-1", "-j ACCEPT")
	if err := rs.Validate(); err == nil {
		t.Error("insert into a user chain validated")
	}
	if _, err := Parse([]byte("*filter\n-I FORWARD 2 -j ACCEPT\nCOMMIT\n")); err == nil {
		t.Error("numbered insert parsed")
	}
}

// On top of kube-proxy's rules, each CNI's hooks land where its daemon
// puts them (the reviewer's reading of the projects' sources): Calico,
// Weave's FORWARD rules, kube-router and Cilium above kube-proxy's;
// Flannel, Calico's FORWARD accept and nat POSTROUTING jump, and Weave's
// nat POSTROUTING jump below.
func TestHooksAroundKubeProxy(t *testing.T) {
	kp, err := KubeProxy(cidr(t, "10.244.0.0/16"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cni, chain string
		// before, after: a target of a CNI hook and one of kube-proxy's,
		// the first expected above the second.
		before, after string
	}{
		{"flannel", "filter/FORWARD", "KUBE-FORWARD", "FLANNEL-FWD"},
		{"flannel", "nat/POSTROUTING", "KUBE-POSTROUTING", "FLANNEL-POSTRTG"},
		{"calico-np-xsub", "filter/FORWARD", "cali-FORWARD", "KUBE-PROXY-FIREWALL"},
		{"calico-np-xsub", "filter/FORWARD", "KUBE-EXTERNAL-SERVICES", "MARK"},
		{"calico-np-xsub", "filter/INPUT", "cali-INPUT", "KUBE-PROXY-FIREWALL"},
		{"calico-np-xsub", "filter/OUTPUT", "cali-OUTPUT", "KUBE-PROXY-FIREWALL"},
		{"calico-np-xsub", "nat/PREROUTING", "cali-PREROUTING", "KUBE-SERVICES"},
		{"calico-np-xsub", "nat/OUTPUT", "cali-OUTPUT", "KUBE-SERVICES"},
		{"calico-np-xsub", "nat/POSTROUTING", "KUBE-POSTROUTING", "cali-POSTROUTING"},
		{"weave", "filter/FORWARD", "WEAVE-NPC-EGRESS", "KUBE-PROXY-FIREWALL"},
		{"weave", "filter/FORWARD", "DROP", "KUBE-FORWARD"},
		{"weave", "filter/INPUT", "KUBE-FIREWALL", "WEAVE-NPC-EGRESS"},
		{"weave", "nat/POSTROUTING", "KUBE-POSTROUTING", "WEAVE"},
		{"kube-router", "filter/FORWARD", "KUBE-ROUTER-FORWARD", "KUBE-PROXY-FIREWALL"},
		{"kube-router", "filter/FORWARD", "ACCEPT", "KUBE-PROXY-FIREWALL"},
		{"kube-router", "filter/INPUT", "KUBE-ROUTER-INPUT", "KUBE-PROXY-FIREWALL"},
		{"kube-router", "nat/POSTROUTING", "KUBE-POSTROUTING", "MASQUERADE"},
		{"cilium", "filter/FORWARD", "CILIUM_FORWARD", "KUBE-PROXY-FIREWALL"},
		{"cilium", "nat/POSTROUTING", "CILIUM_POST_nat", "KUBE-POSTROUTING"},
	} {
		rs, err := Generate(c.cni, testNode(t))
		if err != nil {
			t.Fatal(err)
		}
		chains := map[string][]string{}
		restoreInto(t, chains, kp.Bytes())
		restoreInto(t, chains, rs.Bytes())
		var order []string
		for _, spec := range chains[c.chain] {
			order = append(order, target(spec))
		}
		first := func(x string) int {
			for i, o := range order {
				if o == x {
					return i
				}
			}
			return -1
		}
		if b, a := first(c.before), first(c.after); b < 0 || a < 0 || b > a {
			t.Errorf("%s %s: want %s above %s; order %v", c.cni, c.chain, c.before, c.after, order)
		}
	}
}
