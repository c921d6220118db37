package netfilter

import (
	"net"
	"sort"
	"strings"
	"testing"
)

// kube-proxy's IPVS mode for two Services, one with an endpoint on this
// node: a virtual server per port with its real servers (rr), each
// ClusterIP bound once, the ClusterIP set holding ip,proto:port, the
// loop-back set only the local endpoint (ip,proto:port,ip), and the
// rules of writeIptablesRules in kube-proxy's order.
func TestKubeProxyIPVS(t *testing.T) {
	local := Service{Namespace: "ns", Name: "web", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 80,
		Endpoints: []Endpoint{{IP: net.ParseIP("10.244.1.5"), Port: 8080}, {IP: net.ParseIP("10.244.2.5"), Port: 8080}}}
	dns := Service{Namespace: "kube-system", Name: "dns", PortName: "dns", Protocol: "udp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 53,
		Endpoints: []Endpoint{{IP: net.ParseIP("10.244.2.9"), Port: 53}}}
	st, err := KubeProxyIPVS(cidr(t, "10.244.0.0/16"), cidr(t, "10.244.1.0/24"), []Service{local, dns})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Virtual) != 2 || len(st.Addrs) != 1 || !st.Addrs[0].Equal(net.ParseIP("10.96.0.10")) {
		t.Fatalf("virtual %+v addrs %v: want 2 virtual servers on one bound address", st.Virtual, st.Addrs)
	}
	for _, v := range st.Virtual {
		if v.Scheduler != "rr" || (v.Port == 80 && len(v.Dests) != 2) || (v.Port == 53 && (v.Protocol != "udp" || len(v.Dests) != 1)) {
			t.Errorf("virtual server %+v", v)
		}
	}
	entries := map[string][]string{}
	for _, s := range st.Sets {
		for _, e := range s.Entries {
			entries[s.Name] = append(entries[s.Name], e.String())
		}
	}
	want := map[string]string{
		setClusterIP: "10.96.0.10,tcp:80 10.96.0.10,udp:53",
		setLoopBack:  "10.244.1.5,tcp:8080,10.244.1.5",
		setIPVSIPs:   "10.96.0.10",
	}
	for set, w := range want {
		sort.Strings(entries[set])
		if got := strings.Join(entries[set], " "); got != w {
			t.Errorf("set %s: %q, want %q", set, got, w)
		}
	}
	if err := st.Rules.Validate(); err != nil {
		t.Fatal(err)
	}
	svc := st.Rules.ChainRules("nat", "KUBE-SERVICES")
	if len(svc) != 4 || !strings.HasPrefix(svc[0], "-s 127.0.0.0/8") || !strings.Contains(svc[1], "! -s 10.244.0.0/16") ||
		!strings.HasSuffix(svc[3], "--match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT") {
		t.Errorf("nat KUBE-SERVICES:\n%s", strings.Join(svc, "\n"))
	}
	if post := st.Rules.ChainRules("nat", "KUBE-POSTROUTING"); len(post) != 4 || !strings.Contains(post[0], "KUBE-LOOP-BACK dst,dst,src -j MASQUERADE") {
		t.Errorf("nat KUBE-POSTROUTING (hairpin first):\n%s", strings.Join(post, "\n"))
	}
	if f := st.Rules.ChainRules("filter", "KUBE-IPVS-FILTER"); len(f) != 6 || !strings.HasSuffix(f[5], "KUBE-IPVS-IPS dst -j REJECT") {
		t.Errorf("filter KUBE-IPVS-FILTER:\n%s", strings.Join(f, "\n"))
	}

	// No local endpoint: no loop-back entry, and no hairpin rule.
	st, err = KubeProxyIPVS(cidr(t, "10.244.0.0/16"), cidr(t, "10.244.3.0/24"), []Service{local})
	if err != nil {
		t.Fatal(err)
	}
	if post := st.Rules.ChainRules("nat", "KUBE-POSTROUTING"); len(post) != 3 {
		t.Errorf("without local endpoints KUBE-POSTROUTING has %d rules, want 3", len(post))
	}
	for _, bad := range [][]Service{{local, local}, {{Namespace: "a", Name: "b", Protocol: "sctp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 1}}} {
		if _, err := KubeProxyIPVS(cidr(t, "10.244.0.0/16"), cidr(t, "10.244.1.0/24"), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := KubeProxyIPVS(nil, cidr(t, "10.244.1.0/24"), nil); err == nil {
		t.Error("no cluster CIDR accepted")
	}
}

// kube-router's own proxy: the same virtual servers on kube-dummy-if,
// its three sets (the node's addresses, the Service IPs once, their
// ip,proto:port), KUBE-ROUTER-SERVICES entered from INPUT for Service
// IPs, and the SNAT of IPVS traffic from and to outside the pod subnet.
func TestKubeRouterProxy(t *testing.T) {
	web := Service{Namespace: "ns", Name: "web", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 80,
		Endpoints: []Endpoint{{IP: net.ParseIP("10.244.1.5"), Port: 8080}}}
	dns := Service{Namespace: "kube-system", Name: "dns", Protocol: "udp", ClusterIP: net.ParseIP("10.96.0.10"), Port: 53,
		Endpoints: []Endpoint{{IP: net.ParseIP("10.244.2.9"), Port: 53}}}
	st, err := KubeRouterProxy(net.ParseIP("192.168.0.1"), cidr(t, "10.244.1.0/24"), []net.IP{net.ParseIP("192.168.0.1"), net.ParseIP("127.0.0.1")}, []Service{web, dns})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dummy != "kube-dummy-if" || len(st.Virtual) != 2 || len(st.Addrs) != 1 {
		t.Errorf("dummy %s, %d virtual servers, addrs %v", st.Dummy, len(st.Virtual), st.Addrs)
	}
	entries := map[string][]string{}
	for _, s := range st.Sets {
		for _, e := range s.Entries {
			entries[s.Name] = append(entries[s.Name], e.String())
		}
		sort.Strings(entries[s.Name])
	}
	for set, w := range map[string]string{
		"kube-router-local-ips": "127.0.0.1 192.168.0.1",
		"kube-router-svip":      "10.96.0.10",
		"kube-router-svip-prt":  "10.96.0.10,tcp:80 10.96.0.10,udp:53",
	} {
		if got := strings.Join(entries[set], " "); got != w {
			t.Errorf("set %s: %q, want %q", set, got, w)
		}
	}
	if err := st.Rules.Validate(); err != nil {
		t.Fatal(err)
	}
	fw := st.Rules.ChainRules("filter", "KUBE-ROUTER-SERVICES")
	if len(fw) != 5 || !strings.Contains(fw[3], "kube-router-svip-prt dst,dst -j ACCEPT") || !strings.Contains(fw[4], "! --match-set kube-router-local-ips dst -j REJECT") {
		t.Errorf("KUBE-ROUTER-SERVICES:\n%s", strings.Join(fw, "\n"))
	}
	if in := st.Rules.ChainRules("filter", "INPUT"); len(in) != 1 || !strings.HasSuffix(in[0], "--match-set kube-router-svip dst -j KUBE-ROUTER-SERVICES") {
		t.Errorf("INPUT hook: %v", in)
	}
	if post := st.Rules.ChainRules("nat", "POSTROUTING"); len(post) != 1 ||
		!strings.Contains(post[0], "--vmethod MASQ") || !strings.Contains(post[0], "! -s 10.244.1.0/24 ! -d 10.244.1.0/24 -j SNAT --to-source 192.168.0.1") {
		t.Errorf("POSTROUTING: %v", post)
	}
	if _, err := KubeRouterProxy(nil, cidr(t, "10.244.1.0/24"), nil, nil); err == nil {
		t.Error("no node address accepted")
	}
	for _, p := range []Proxy{ProxyKubeProxy, ProxyKubeRouter} {
		l, err := Layout(p)
		if err != nil || l.Dummy == "" || len(l.Sets) == 0 {
			t.Errorf("layout of %s: %+v %v", p, l, err)
		}
	}
	if _, err := Layout("userspace"); err == nil {
		t.Error("unknown proxy has a layout")
	}
}
