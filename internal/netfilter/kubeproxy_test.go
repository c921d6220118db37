package netfilter

import (
	"net"
	"strings"
	"testing"
)

// kube-proxy writes KUBE-SERVICES in Go map order, so a Service's rule
// is on average in the middle: the measured Services sit together at
// len(fillers)/2, whatever their names hash to (sorted by chain name
// with 5000 fillers, UDP to server 0 came 44th and TCP to server 1
// 4930th).
func TestMeasuredServicesInTheMiddle(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000} {
		fill, err := Fillers(n, 1, cidr(t, "10.96.0.0/12"), cidr(t, "100.64.0.0/10"))
		if err != nil {
			t.Fatal(err)
		}
		bench := BenchServices([]net.IP{net.ParseIP("10.244.1.2"), net.ParseIP("10.244.1.3")}, 5201)
		rs, err := KubeProxy(cidr(t, "10.244.0.0/16"), append(fill, bench...))
		if err != nil {
			t.Fatal(err)
		}
		rules := rs.ChainRules("nat", "KUBE-SERVICES")
		if len(rules) != n+len(bench)+1 {
			t.Fatalf("%d fillers: KUBE-SERVICES has %d rules", n, len(rules))
		}
		for i, r := range rules[n/2 : n/2+len(bench)] {
			if !strings.Contains(r, "cnibench/server-") {
				t.Errorf("%d fillers: rule %d is no measured Service: %s", n, n/2+i, r)
			}
		}
	}
}

// Above 1000 endpoints in all kube-proxy runs in large cluster mode and
// writes the endpoint-selection and KUBE-SEP-* rules without comments
// (proxier.go appendServiceCommentLocked); at 1000 it keeps them.
func TestLargeClusterDropsComments(t *testing.T) {
	for _, c := range []struct {
		fillers  int
		comments bool
	}{{499, true}, {500, false}} {
		// Two endpoints per filler, one per measured Service (two).
		fill, err := Fillers(c.fillers, 2, cidr(t, "10.96.0.0/12"), cidr(t, "100.64.0.0/10"))
		if err != nil {
			t.Fatal(err)
		}
		bench := BenchServices([]net.IP{net.ParseIP("10.244.1.2")}, 5201)
		rs, err := KubeProxy(cidr(t, "10.244.0.0/16"), append(fill, bench...))
		if err != nil {
			t.Fatal(err)
		}
		s := bench[0]
		svc := rs.ChainRules("nat", s.Chain())
		sep := rs.ChainRules("nat", s.EndpointChain(s.Endpoints[0]))
		for _, r := range append(svc[1:], sep...) {
			if strings.Contains(r, "--comment") != c.comments {
				t.Errorf("%d endpoints: %q: comment %v, want %v", 2*c.fillers+2, r, !c.comments, c.comments)
			}
		}
		if !strings.Contains(svc[0], "cluster IP") {
			t.Errorf("%d endpoints: the masquerade rule lost its comment: %s", 2*c.fillers+2, svc[0])
		}
		for _, r := range rs.ChainRules("nat", "KUBE-SERVICES") {
			if !strings.Contains(r, "--comment") {
				t.Errorf("%d endpoints: KUBE-SERVICES rule without comment: %s", 2*c.fillers+2, r)
			}
		}
	}
}
