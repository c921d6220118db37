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
