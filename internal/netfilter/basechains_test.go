package netfilter

import "testing"

func TestParseBaseChains(t *testing.T) {
	out := []byte(`table ip mangle {
	chain KUBE-PROXY-CANARY {
	}
	chain PREROUTING {
		type filter hook prerouting priority mangle; policy accept;
	}
}
table ip filter {
	chain FORWARD {
		type filter hook forward priority filter; policy accept;
	}
}
table ip kube-proxy {
	chain filter-forward {
		type filter hook forward priority -110; policy accept;
	}
}
`)
	got := parseBaseChains(out)
	want := map[string]bool{"mangle": true, "mangle/PREROUTING": true, "filter": true, "filter/FORWARD": true}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing %s in %v", k, got)
		}
	}
}

func TestChainHasRules(t *testing.T) {
	empty := []byte("table ip raw {\n\tchain PREROUTING {\n\t\ttype filter hook prerouting priority raw; policy accept;\n\t}\n}\n")
	full := []byte("table ip filter {\n\tchain FORWARD {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tcounter packets 0 bytes 0 jump FLANNEL-FWD\n\t}\n}\n")
	if chainHasRules(empty) || !chainHasRules(full) {
		t.Errorf("empty: %v, with a rule: %v", chainHasRules(empty), chainHasRules(full))
	}
}
