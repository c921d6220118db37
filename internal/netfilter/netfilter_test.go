package netfilter

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
)

func cidr(t testing.TB, s string) *net.IPNet {
	t.Helper()
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testNode(t testing.TB) Node {
	return Node{
		PodCIDR: cidr(t, "10.244.1.0/24"), ClusterCIDR: cidr(t, "10.244.0.0/16"),
		NodeIP: net.ParseIP("198.18.0.2"),
		Pods:   []Pod{{Iface: "cali0a", IP: net.ParseIP("10.244.1.2")}, {Iface: "cali0b", IP: net.ParseIP("10.244.1.3")}},
	}
}

// fixture reads a testdata list, one entry a line, '#' comments.
func fixture(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// Every CNI's rule set declares exactly the chains its daemon creates
// (fixtures from the projects' sources) and the kubelet's, validates, and survives a
// round trip through its iptables-restore text.
func TestGeneratorsChains(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			rs, err := Generate(name, testNode(t))
			if err != nil {
				t.Fatal(err)
			}
			// The kubelet's chains are on every node, whatever the CNI.
			want := append(fixture(t, "chains-"+name+".txt"), Kubelet().Chains()...)
			sortStrings(want)
			if got := rs.Chains(); !reflect.DeepEqual(got, want) {
				t.Errorf("chains\n got %v\nwant %v", got, want)
			}
			back, err := Parse(rs.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Bytes(), rs.Bytes()) || !reflect.DeepEqual(back.Chains(), rs.Chains()) {
				t.Error("rule set changed in a round trip through iptables-restore text")
			}
			if _, rules := rs.Count(); rules == 0 {
				t.Error("no rules")
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Rules that decide what a packet meets, per CNI, written as the
// daemons write them.
func TestGeneratorsKeyRules(t *testing.T) {
	n := testNode(t)
	for _, c := range []struct {
		cni, table, chain, rule string
	}{
		{"flannel", "filter", "FORWARD", `-m comment --comment "flanneld forward" -j FLANNEL-FWD`},
		{"flannel", "filter", "FLANNEL-FWD", `-s 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT`},
		{"flannel", "nat", "FLANNEL-POSTRTG", `-s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j RETURN`},
		{"flannel", "nat", "FLANNEL-POSTRTG", `-s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully`},
		{"calico-np-xsub", "filter", "cali-from-wl-dispatch", "-i cali0a -g cali-fw-cali0a"},
		{"calico-np-xsub", "filter", "cali-tw-cali0b", "-j cali-pri-kns.cnibench"},
		{"calico-wp-xsub", "filter", "cali-tw-cali0b", "-m mark --mark 0x0/0x20000 -j cali-pi-_cnibench-allow-pods"},
		{"calico-wp-ipip", "filter", "cali-INPUT", `-p 4 -s 198.18.0.0/24 -m addrtype --dst-type LOCAL -m comment --comment "Allow IPIP packets from Calico hosts" -j ACCEPT`},
		{"calico-np-xsub", "filter", "cali-FORWARD", "-m mark --mark 0x0/0x10000 -j cali-from-hep-forward"},
		{"calico-np-xsub", "nat", "cali-nat-outgoing", "-s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE --random-fully"},
		{"weave", "filter", "FORWARD", `-o weave -m comment --comment "NOTE: this must go before '-j KUBE-FORWARD'" -j WEAVE-NPC`},
		{"weave", "filter", "WEAVE-NPC", "-m state --state NEW -j WEAVE-NPC-DEFAULT"},
		{"cilium", "filter", "CILIUM_FORWARD", `-i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT`},
		{"cilium", "nat", "CILIUM_POST_nat", `-s 10.244.1.0/24 ! -d 10.244.1.0/24 ! -o cilium_+ -m comment --comment "cilium masquerade non-cluster" -j MASQUERADE`},
		{"kube-router", "filter", "KUBE-NWPLCY-TAIL", `-m comment --comment "accept netpol-ok" -m mark --mark 0x20000/0x20000 -j ACCEPT`},
		{"kube-router", "nat", "POSTROUTING", "-s 10.244.0.0/16 ! -d 10.244.0.0/16 -m iprange ! --dst-range 198.18.0.2-198.18.0.2 -j MASQUERADE --random-fully"},
		{"kube-router", "filter", "KUBE-NWPLCY-COMMON", `-m comment --comment "rule for stateful firewall for pod" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`},
	} {
		rs, err := Generate(c.cni, n)
		if err != nil {
			t.Fatal(err)
		}
		if !contains(rs.ChainRules(c.table, c.chain), c.rule) {
			t.Errorf("%s: %s/%s lacks %q; has:\n%s", c.cni, c.table, c.chain, c.rule, strings.Join(rs.ChainRules(c.table, c.chain), "\n"))
		}
	}
	// Felix's cali-FORWARD replaces internal/policy's short one: no
	// ACCEPT inside it (the accept is FORWARD's appended rule).
	rs, _ := Generate("calico-np-xsub", n)
	for _, r := range rs.ChainRules("filter", "cali-FORWARD") {
		if strings.HasSuffix(r, "-j ACCEPT") {
			t.Errorf("cali-FORWARD still accepts: %s", r)
		}
	}
	// Cilium's default node (no endpoint routes): four forward accepts,
	// none out to lxc+ (installForwardChainRulesIpX).
	cil, _ := Generate("cilium", n)
	if fwd := cil.ChainRules("filter", "CILIUM_FORWARD"); len(fwd) != 4 || contains(fwd, `-o lxc+ -m comment --comment "cilium: any->cluster on lxc+ forward accept" -j ACCEPT`) {
		t.Errorf("CILIUM_FORWARD: want the 4 rules of a node without endpoint routes:\n%s", strings.Join(fwd, "\n"))
	}
	// Cilium with kube-proxy replacement (BPF masquerade) leaves
	// CILIUM_POST_nat empty.
	kpr, _ := Generate("cilium-kpr", n)
	if r := kpr.ChainRules("nat", "CILIUM_POST_nat"); len(r) != 0 {
		t.Errorf("cilium-kpr masquerades in iptables: %v", r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kube-router's positioned rules carry a UUID computed over the chain
// and rule spec; it must be stable and differ per hook.
func TestKubeRouterUUID(t *testing.T) {
	a := uuidComment("INPUT", nil, "kube-router netpol", "-j", "KUBE-ROUTER-INPUT")
	b := uuidComment("FORWARD", nil, "kube-router netpol", "-j", "KUBE-ROUTER-FORWARD")
	if a == b || !strings.HasPrefix(a, `-m comment --comment "kube-router netpol - `) || len(a) != len(`-m comment --comment "kube-router netpol - `)+17 {
		t.Errorf("uuid comments %s / %s", a, b)
	}
}

func TestGenerateErrors(t *testing.T) {
	if _, err := Generate("contiv", testNode(t)); err == nil || !strings.Contains(err.Error(), "known: calico-np-ipip") {
		t.Errorf("unknown CNI: %v", err)
	}
	if _, err := Generate("flannel", Node{}); err == nil {
		t.Error("node without CIDRs accepted")
	}
	n := testNode(t)
	n.NodeIP = nil
	if _, err := Generate("calico-wp-ipip", n); err == nil || !strings.Contains(err.Error(), "IP-in-IP") {
		t.Errorf("calico ipip without node IP: %v", err)
	}
}

func TestValidate(t *testing.T) {
	rs := New()
	rs.Append("filter", "FORWARD", "-j NOPE-CHAIN")
	if err := rs.Validate(); err == nil {
		t.Error("jump to an undeclared chain accepted")
	}
	rs = New()
	rs.Append("filter", "X-CHAIN", "-j ACCEPT")
	if err := rs.Validate(); err == nil {
		t.Error("rule in an undeclared chain accepted")
	}
	rs = New()
	rs.Chain("filter", "X-CHAIN")
	rs.Append("filter", "FORWARD", "-j X-CHAIN")
	rs.Append("filter", "X-CHAIN", "-j MARK --set-xmark 0x1/0x1")
	if err := rs.Validate(); err != nil {
		t.Error(err)
	}
}

// Chain names are kube-proxy's: the fixture holds the names in
// kube-proxy's own test for ns1/svc1:p80.
func TestKubeProxyChainNames(t *testing.T) {
	for _, l := range fixture(t, "kube-proxy-chains.txt") {
		f := strings.Fields(l)
		var got string
		if len(f) == 3 {
			got = ServiceChain(f[1], f[2])
		} else {
			got = EndpointChainName(f[1], f[2], f[3])
		}
		if got != f[0] {
			t.Errorf("%v: got %s", f[1:], got)
		}
	}
	s := Service{Namespace: "ns1", Name: "svc1", PortName: "p80", Protocol: "tcp", ClusterIP: net.ParseIP("172.30.0.41"), Port: 80,
		Endpoints: []Endpoint{{IP: net.ParseIP("10.180.0.1"), Port: 80}}}
	if s.Chain() != "KUBE-SVC-XPGD46QRK7WJZT7O" || s.EndpointChain(s.Endpoints[0]) != "KUBE-SEP-SXIVWICOYRO3J4NJ" {
		t.Errorf("service chains %s %s", s.Chain(), s.EndpointChain(s.Endpoints[0]))
	}
}

// Endpoints are picked with probability 1/(n-i), the last one without
// a statistic match; a port without endpoints is rejected in filter.
func TestKubeProxyRules(t *testing.T) {
	bench := Service{Namespace: "cnibench", Name: "server", PortName: "tcp", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.100"), Port: 80,
		Endpoints: []Endpoint{{net.ParseIP("10.244.1.2"), 8080}, {net.ParseIP("10.244.1.3"), 8080}, {net.ParseIP("10.244.1.4"), 8080}}}
	empty := Service{Namespace: "cnibench", Name: "empty", Protocol: "udp", ClusterIP: net.ParseIP("10.96.0.101"), Port: 53}
	fill, err := Fillers(30, 2, cidr(t, "10.96.0.0/12"), cidr(t, "10.250.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := KubeProxy(cidr(t, "10.244.0.0/16"), append([]Service{bench, empty}, fill...))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(); err != nil {
		t.Fatal(err)
	}
	svc := rs.ChainRules("nat", bench.Chain())
	if len(svc) != 4 {
		t.Fatalf("%s: %v", bench.Chain(), svc)
	}
	for i, p := range []string{"--probability 0.33333333333", "--probability 0.50000000000", ""} {
		has := strings.Contains(svc[i+1], "-m statistic --mode random")
		if (p == "") == has || (p != "" && !strings.Contains(svc[i+1], p)) {
			t.Errorf("endpoint %d: %s", i, svc[i+1])
		}
	}
	sep := rs.ChainRules("nat", bench.EndpointChain(bench.Endpoints[0]))
	if len(sep) != 2 || !strings.HasSuffix(sep[1], "-j DNAT --to-destination 10.244.1.2:8080") || !strings.HasPrefix(sep[0], "-s 10.244.1.2/32") {
		t.Errorf("endpoint chain: %v", sep)
	}
	services := rs.ChainRules("nat", "KUBE-SERVICES")
	if len(services) != 32 || !strings.Contains(services[31], "KUBE-NODEPORTS") {
		t.Errorf("KUBE-SERVICES has %d rules, want 31 services + nodeports last", len(services))
	}
	if r := rs.ChainRules("filter", "KUBE-SERVICES"); len(r) != 1 || !strings.Contains(r[0], "has no endpoints") {
		t.Errorf("filter KUBE-SERVICES: %v", r)
	}
	chains, _ := rs.Count()
	// 3 canaries, 5 filter (the kubelet's KUBE-FIREWALL is Kubelet's),
	// 4 nat, 31 KUBE-SVC, 3+60 KUBE-SEP.
	if chains != 3+5+4+31+63 {
		t.Errorf("%d chains", chains)
	}
}

func TestKubeProxyErrors(t *testing.T) {
	ok := Service{Namespace: "a", Name: "b", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 80}
	for name, s := range map[string][]Service{
		"protocol":  {{Namespace: "a", Name: "b", Protocol: "sctp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 80}},
		"port":      {{Namespace: "a", Name: "b", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 0}},
		"ipv6":      {{Namespace: "a", Name: "b", Protocol: "tcp", ClusterIP: net.ParseIP("fd00::1"), Port: 80}},
		"duplicate": {ok, ok},
		"endpoint":  {{Namespace: "a", Name: "b", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.0.1"), Port: 80, Endpoints: []Endpoint{{net.ParseIP("10.0.0.1"), 0}}}},
	} {
		if _, err := KubeProxy(cidr(t, "10.244.0.0/16"), s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Fillers(-1, 1, cidr(t, "10.96.0.0/12"), cidr(t, "10.250.0.0/16")); err == nil {
		t.Error("negative filler count accepted")
	}
	if _, err := Fillers(300, 1, cidr(t, "10.96.0.0/24"), cidr(t, "10.250.0.0/16")); err == nil {
		t.Error("fillers beyond the service range accepted")
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"-A X -j ACCEPT\n", "*bogus\nCOMMIT\n", "*filter\n-A X\n", "*filter\n-I X 1 -j ACCEPT\nCOMMIT\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	rs, _ := Generate("calico-wp-ipip", testNode(f))
	f.Add(rs.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Parse(data)
		if err != nil {
			return
		}
		back, err := Parse(rs.Bytes())
		if err != nil {
			t.Fatalf("own output does not parse: %v", err)
		}
		if c1, r1 := rs.Count(); true {
			if c2, r2 := back.Count(); c1 != c2 || r1 != r2 {
				t.Fatalf("counts changed: %d/%d vs %d/%d", c1, r1, c2, r2)
			}
		}
	})
}

// nftables mode: chain names as kube-proxy's own doc comments give them
// (pkg/proxy/nftables/proxier.go: "ULMVA6XW-ns1/svc1/tcp/p80",
// "5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"); counters only on request;
// NodePorts on the node's address (nodeport-ips), not on any local one.
func TestKubeProxyNFT(t *testing.T) {
	s := Service{Namespace: "ns1", Name: "svc1", PortName: "p80", Protocol: "tcp", ClusterIP: net.ParseIP("172.30.0.41"), Port: 80,
		Endpoints: []Endpoint{{net.ParseIP("10.180.0.1"), 80}, {net.ParseIP("10.180.0.2"), 80}}}
	if got := NFTServiceChain(s); got != "service-ULMVA6XW-ns1/svc1/tcp/p80" {
		t.Errorf("service chain %s", got)
	}
	if got := NFTEndpointChain(s, s.Endpoints[0]); got != "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80" {
		t.Errorf("endpoint chain %s", got)
	}
	empty := Service{Namespace: "ns1", Name: "gone", Protocol: "udp", ClusterIP: net.ParseIP("172.30.0.42"), Port: 53}
	plain, err := KubeProxyNFT(cidr(t, "10.0.0.0/8"), cidr(t, "172.30.0.0/16"), []Service{s, empty}, false, net.ParseIP("198.18.0.2"))
	if err != nil {
		t.Fatal(err)
	}
	counted, err := KubeProxyNFT(cidr(t, "10.0.0.0/8"), cidr(t, "172.30.0.0/16"), []Service{s, empty}, true)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte(" counter ")) || bytes.Count(counted, []byte(" counter ")) != bytes.Count(counted, []byte("add rule ")) {
		t.Error("counters: none without, one per rule with")
	}
	for _, want := range []string{
		"add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 , 1 : goto endpoint-",
		"add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
		"add rule ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 meta l4proto tcp dnat to 10.180.0.1:80",
		"add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }",
		`add element ip kube-proxy no-endpoint-services { 172.30.0.42 . udp . 53 comment "ns1/gone" : goto reject-chain }`,
		// --nodeport-addresses primary: the node's IP in nodeport-ips.
		`add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`,
		"add element ip kube-proxy nodeport-ips { 198.18.0.2 }",
		"add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports",
		"add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports",
	} {
		if !bytes.Contains(plain, []byte(want)) {
			t.Errorf("missing %q", want)
		}
	}
	if bytes.Contains(plain, []byte("fib daddr")) {
		t.Error("NodePorts matched with fib daddr type local; the nftables mode's default --nodeport-addresses is primary: @nodeport-ips")
	}
	if _, err := KubeProxyNFT(cidr(t, "10.0.0.0/8"), cidr(t, "172.30.0.0/16"), []Service{s}, false, net.ParseIP("127.0.0.1")); err == nil {
		t.Error("loopback NodePort address accepted")
	}
	if _, err := KubeProxyNFT(cidr(t, "10.0.0.0/8"), nil, []Service{s}, false); err == nil {
		t.Error("no service CIDR accepted")
	}
	if _, err := KubeProxyNFT(cidr(t, "10.0.0.0/8"), cidr(t, "172.30.0.0/16"), []Service{s, s}, false); err == nil {
		t.Error("duplicate service port accepted")
	}
}

// The generators called directly refuse a node without CIDRs instead of
// panicking.
func TestGeneratorsRefuseEmptyNode(t *testing.T) {
	for _, g := range generators {
		if _, err := g.Gen(Node{}); err == nil {
			t.Errorf("%s accepted a node without CIDRs", g.Name)
		}
	}
}

// The generators whose rules were checked against one release say
// which (env.json records Source): Calico's marks are v3.29's, not
// v3.30's; kube-router's tail chain is v2.11's.
func TestSourcesNameTheirRelease(t *testing.T) {
	for cni, release := range map[string]string{
		"calico-np-xsub": "projectcalico/calico v3.29 ", "calico-wp-ipip": "projectcalico/calico v3.29 ",
		"kube-router": "cloudnativelabs/kube-router v2.11.1 ", "cilium": "cilium/cilium v1.17.4 ", "cilium-kpr": "cilium/cilium v1.17.4 ",
	} {
		g, err := Lookup(cni)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(g.Source, release) {
			t.Errorf("%s: source %q does not name %q", cni, g.Source, release)
		}
	}
}

// TestGeneratorFits: a CNI whose rules match pods' traffic by its bridge
// (weave, kube-router) is refused on a node with no bridge, where those
// rules would be installed and counted but never match; on a node with
// one, whatever its name, and for the CNIs that match no bridge, it fits.
// Both nodes have a tunnel and every CNI's own devices
// (TestGeneratorFitsTunnel and TestGeneratorFitsDevices refuse the
// rules that need them).
func TestGeneratorFits(t *testing.T) {
	bare := Node{PodCIDR: cidr(t, "10.244.1.0/24"), ClusterCIDR: cidr(t, "10.244.0.0/16"), Tunnel: "tunl0", Devices: ownDevices(t)}
	bridged := bare
	bridged.Bridge = "cni0"
	for _, name := range Names() {
		g, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		needs := name == "weave" || name == "kube-router"
		if err := g.Fits(bare); (err != nil) != needs {
			t.Errorf("%s on a node without a bridge: Fits = %v, want refused %v", name, err, needs)
		}
		if err := g.Fits(bridged); err != nil {
			t.Errorf("%s on a node with bridge cni0: %v", name, err)
		}
	}
	rs, err := Generate("kube-router", bridged)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rs.Bytes()), "-i cni0 -j ACCEPT") {
		t.Errorf("kube-router on a node with bridge cni0 accepts no traffic from cni0:\n%s", rs.Bytes())
	}
}
