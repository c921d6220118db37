package netfilter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
)

// NFTTable is the table kube-proxy's nftables mode owns ("ip kube-proxy").
const NFTTable = "kube-proxy"

// NFTServiceChain names a Service port's cluster-policy chain as
// kube-proxy's nftables mode does (kubernetes/kubernetes
// pkg/proxy/nftables/proxier.go, servicePortChainNameBase and
// hashAndTruncate): "service-", 8 base32 characters of the sha256 of
// "ns/name/proto/port", "-", and that string.
func NFTServiceChain(s Service) string {
	return "service-" + nftHashed(fmt.Sprintf("%s/%s/%s/%s", s.Namespace, s.Name, s.Protocol, s.PortName))
}

// NFTEndpointChain names an endpoint's chain
// (servicePortEndpointChainNameBase): the Service part, "__", and
// "IP/port".
func NFTEndpointChain(s Service, e Endpoint) string {
	return "endpoint-" + nftHashed(fmt.Sprintf("%s/%s/%s/%s__%s/%d", s.Namespace, s.Name, s.Protocol, s.PortName, e.IP.To4(), e.Port))
}

func nftHashed(name string) string {
	h := sha256.Sum256([]byte(name))
	return base32.StdEncoding.EncodeToString(h[:])[:8] + "-" + name
}

// nftRule is a rule of the kube-proxy table: its match and its verdict
// or action, so a counter can go between them.
type nftRule struct{ chain, match, action string }

// KubeProxyNFT writes kube-proxy's nftables mode for services as `nft -f`
// input, modelled on kubernetes/kubernetes pkg/proxy/nftables/proxier.go:
// setupNFTables (the base chains filter-prerouting/-input/-forward/-output
// at dstnat-10, filter-output-post-dnat, nat-prerouting/-output at dstnat
// and nat-postrouting at srcnat; the jumps of nftablesJumpChains; the
// cluster-ips and nodeport-ips sets, the service-ips, service-nodeports,
// no-endpoint-services, no-endpoint-nodeports and firewall-ips verdict
// maps; masquerading and mark-for-masquerade) and syncProxyRules
// (per Service port a cluster-policy chain that marks traffic from
// outside clusterCIDR for masquerade and picks an endpoint with
// "numgen random mod N vmap", per endpoint a chain that marks hairpin
// traffic and DNATs). The table is deleted and rewritten, as kube-proxy
// rewrites it at start-up.
//
// kube-proxy puts no counters in its rules; with counters every rule gets
// one (before its verdict), so the path can be read from
// `nft -j list ruleset` (internal/metrics/nftables).
//
// nodePortIPs are the addresses NodePorts are accepted on. The nftables
// mode defaults --nodeport-addresses to "primary"
// (kubernetes/kubernetes v1.33.1 cmd/kube-proxy/app/server_linux.go:67-69),
// which becomes the node's IP/32 (cmd/kube-proxy/app/server.go:213-222),
// so kube-proxy fills the set nodeport-ips with the node's address and
// matches NodePorts with "ip daddr @nodeport-ips", not "fib daddr type
// local" (pkg/proxy/nftables/proxier.go:568-599, 634-651, 688-707): pass
// the node's address. Without one the set stays empty, as kube-proxy
// leaves it when it finds no node address (:584-587).
func KubeProxyNFT(clusterCIDR, serviceCIDR *net.IPNet, services []Service, counters bool, nodePortIPs ...net.IP) ([]byte, error) {
	if clusterCIDR == nil || clusterCIDR.IP.To4() == nil || serviceCIDR == nil || serviceCIDR.IP.To4() == nil {
		return nil, errors.New("kube-proxy (nftables) needs IPv4 cluster and service CIDRs")
	}
	for _, ip := range nodePortIPs {
		if ip.To4() == nil || ip.IsLoopback() {
			return nil, fmt.Errorf("kube-proxy (nftables): NodePort address %v: want the node's IPv4 address, not loopback", ip)
		}
	}
	svcs, err := nftSortedServices(services)
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	t := "ip " + NFTTable
	nftSkeleton(w, t)

	var rules []nftRule
	r := func(chain, match, action string) { rules = append(rules, nftRule{chain, match, action}) }
	nftFixedRules(r, serviceCIDR)
	elems := nftServices(w, r, t, svcs, clusterCIDR)
	for _, x := range rules {
		parts := []string{"add rule", t, x.chain}
		if x.match != "" {
			parts = append(parts, x.match)
		}
		if counters {
			parts = append(parts, "counter")
		}
		w("%s %s", strings.Join(parts, " "), x.action)
	}
	for _, ip := range nodePortIPs {
		w("add element %s nodeport-ips { %s }", t, ip.To4())
	}
	for _, e := range elems {
		w("%s", e)
	}
	return b.Bytes(), nil
}

// nftSortedServices checks the services and returns them sorted by
// their chain's name, so the script does not depend on their order.
func nftSortedServices(services []Service) ([]Service, error) {
	seen := map[string]bool{}
	for _, s := range services {
		if err := s.validate(); err != nil {
			return nil, err
		}
		if seen[NFTServiceChain(s)] {
			return nil, fmt.Errorf("service port %s given twice", s.portName())
		}
		seen[NFTServiceChain(s)] = true
	}
	svcs := append([]Service(nil), services...)
	sort.Slice(svcs, func(i, j int) bool { return NFTServiceChain(svcs[i]) < NFTServiceChain(svcs[j]) })
	return svcs, nil
}

// nftSkeleton writes the table, kube-proxy's chains, its set and its
// maps, as kube-proxy creates them whatever the services.
func nftSkeleton(w func(string, ...any), t string) {
	// add+delete+add: a fresh table whether or not one existed.
	w("add table %s", t)
	w("delete table %s", t)
	w("add table %s { comment %q ; }", t, "rules for kube-proxy")
	for _, bc := range []struct{ name, typ, hook, prio string }{
		// dstnat is -100 and srcnat 100; nft before 1.0.7 refuses the
		// names outside the nat hooks, so they are written as numbers.
		{"filter-prerouting", "filter", "prerouting", "-110"},
		{"filter-input", "filter", "input", "-110"},
		{"filter-forward", "filter", "forward", "-110"},
		{"filter-output", "filter", "output", "-110"},
		{"filter-output-post-dnat", "filter", "output", "-90"},
		{"nat-prerouting", "nat", "prerouting", "-100"},
		{"nat-output", "nat", "output", "-100"},
		{"nat-postrouting", "nat", "postrouting", "100"},
	} {
		w("add chain %s %s { type %s hook %s priority %s ; }", t, bc.name, bc.typ, bc.hook, bc.prio)
	}
	for _, c := range []string{"nodeport-endpoints-check", "service-endpoints-check", "firewall-check", "services",
		"masquerading", "cluster-ips-check", "mark-for-masquerade", "reject-chain"} {
		w("add chain %s %s", t, c)
	}
	w("add set %s cluster-ips { type ipv4_addr ; comment %q ; }", t, "Active ClusterIPs")
	w("add set %s nodeport-ips { type ipv4_addr ; comment %q ; }", t, "IPs that accept NodePort traffic")
	for _, m := range []struct{ name, typ, comment string }{
		{"no-endpoint-services", "ipv4_addr . inet_proto . inet_service : verdict", "vmap to drop or reject packets to services with no endpoints"},
		{"no-endpoint-nodeports", "inet_proto . inet_service : verdict", "vmap to drop or reject packets to service nodeports with no endpoints"},
		{"firewall-ips", "ipv4_addr . inet_proto . inet_service : verdict", "destinations that are subject to LoadBalancerSourceRanges"},
		{"service-ips", "ipv4_addr . inet_proto . inet_service : verdict", "ClusterIP, ExternalIP and LoadBalancer IP traffic"},
		{"service-nodeports", "inet_proto . inet_service : verdict", "NodePort traffic"},
	} {
		w("add map %s %s { type %s ; comment %q ; }", t, m.name, m.typ, m.comment)
	}
}

// nftFixedRules adds the rules kube-proxy has whatever the services.
func nftFixedRules(r func(chain, match, action string), serviceCIDR *net.IPNet) {
	for _, j := range []struct{ dst, src, extra string }{
		{"nodeport-endpoints-check", "filter-input", "ct state new"},
		{"service-endpoints-check", "filter-input", "ct state new"},
		{"service-endpoints-check", "filter-forward", "ct state new"},
		{"service-endpoints-check", "filter-output", "ct state new"},
		{"firewall-check", "filter-prerouting", "ct state new"},
		{"firewall-check", "filter-output", "ct state new"},
		{"services", "nat-output", ""},
		{"services", "nat-prerouting", ""},
		{"masquerading", "nat-postrouting", ""},
		{"cluster-ips-check", "filter-forward", "ct state new"},
		{"cluster-ips-check", "filter-output-post-dnat", "ct state new"},
	} {
		r(j.src, j.extra, "jump "+j.dst)
	}
	r("mark-for-masquerade", "", "mark set mark or "+kubeMasqMark)
	r("masquerading", "mark and "+kubeMasqMark+" == 0", "return")
	r("masquerading", "", "mark set mark xor "+kubeMasqMark)
	r("masquerading", "", "masquerade fully-random")
	r("cluster-ips-check", "ip daddr @cluster-ips", "reject")
	r("cluster-ips-check", "ip daddr { "+serviceCIDR.String()+" }", "drop")
	r("reject-chain", "", "reject")
	// A verdict map lookup is one statement, key included: a counter
	// goes before the key.
	r("service-endpoints-check", "", "ip daddr . meta l4proto . th dport vmap @no-endpoint-services")
	r("nodeport-endpoints-check", "ip daddr @nodeport-ips", "meta l4proto . th dport vmap @no-endpoint-nodeports")
	r("firewall-check", "", "ip daddr . meta l4proto . th dport vmap @firewall-ips")
	r("services", "", "ip daddr . meta l4proto . th dport vmap @service-ips")
	r("services", "ip daddr @nodeport-ips", "meta l4proto . th dport vmap @service-nodeports")
}

// nftServices writes each service's chain and its endpoints' chains,
// adds their rules, and returns the set and map elements, written after
// every rule.
func nftServices(w func(string, ...any), r func(chain, match, action string), t string, svcs []Service, clusterCIDR *net.IPNet) []string {
	var elems []string
	for _, s := range svcs {
		ip := s.ClusterIP.To4().String()
		elems = append(elems, fmt.Sprintf("add element %s cluster-ips { %s }", t, ip))
		if len(s.Endpoints) == 0 {
			elems = append(elems, fmt.Sprintf("add element %s no-endpoint-services { %s . %s . %d comment %q : goto reject-chain }", t, ip, s.Protocol, s.Port, s.portName()))
			continue
		}
		svc := NFTServiceChain(s)
		w("add chain %s %s", t, svc)
		elems = append(elems, fmt.Sprintf("add element %s service-ips { %s . %s . %d : goto %s }", t, ip, s.Protocol, s.Port, svc))
		r(svc, fmt.Sprintf("ip daddr %s %s dport %d ip saddr != %s", ip, s.Protocol, s.Port, clusterCIDR), "jump mark-for-masquerade")
		var arms []string
		for i, e := range s.Endpoints {
			ep := NFTEndpointChain(s, e)
			w("add chain %s %s", t, ep)
			arms = append(arms, fmt.Sprintf("%d : goto %s", i, ep))
			r(ep, "ip saddr "+e.IP.To4().String(), "jump mark-for-masquerade")
			r(ep, "meta l4proto "+s.Protocol, "dnat to "+e.String())
		}
		r(svc, "", fmt.Sprintf("numgen random mod %d vmap { %s }", len(s.Endpoints), strings.Join(arms, " , ")))
	}
	return elems
}

// ApplyNFT loads an `nft -f` script where run runs, on nft's stdin
// (nft -f -: nft(8), "If filename is -, read from stdin"). dir is no
// longer used (see Apply).
func ApplyNFT(ctx context.Context, run Runner, script []byte) error {
	if _, err := exec.LookPath("nft"); err != nil {
		return errors.New("nft is needed (apt-get install nftables)")
	}
	if _, err := run(ctx, []string{"nft", "-f", "-"}, input(script)); err != nil {
		return fmt.Errorf("nft -f: %w", err)
	}
	return nil
}
