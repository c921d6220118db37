package netfilter

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
)

// Service is one port of a ClusterIP Service and its ready endpoints.
type Service struct {
	Namespace, Name string
	// PortName is the Service port's name ("" for an unnamed port).
	PortName string
	// Protocol is "tcp" or "udp".
	Protocol  string
	ClusterIP net.IP
	Port      int
	Endpoints []Endpoint
}

// Endpoint is a backend of a Service port.
type Endpoint struct {
	IP   net.IP
	Port int
}

func (e Endpoint) String() string { return net.JoinHostPort(e.IP.String(), strconv.Itoa(e.Port)) }

// portName is kube-proxy's ServicePortName.String(): "ns/name" and
// ":port" when the port is named.
func (s Service) portName() string {
	n := s.Namespace + "/" + s.Name
	if s.PortName != "" {
		n += ":" + s.PortName
	}
	return n
}

// Chain is the Service port's KUBE-SVC-* chain.
func (s Service) Chain() string { return ServiceChain(s.portName(), s.Protocol) }

// EndpointChain is the KUBE-SEP-* chain of one of the port's endpoints.
func (s Service) EndpointChain(e Endpoint) string {
	return EndpointChainName(s.portName(), s.Protocol, e.String())
}

// ServiceChain names a Service port's chain as kube-proxy does
// (kubernetes/kubernetes pkg/proxy/iptables/proxier.go,
// servicePortChainName and portProtoHash): "KUBE-SVC-" and the first 16
// characters of the base32 sha256 of the port name and the lower-case
// protocol.
func ServiceChain(servicePortName, protocol string) string {
	return "KUBE-SVC-" + hash16(servicePortName+protocol)
}

// EndpointChainName names an endpoint's chain as kube-proxy does
// (servicePortEndpointChainName): the hash also covers "IP:port".
func EndpointChainName(servicePortName, protocol, endpoint string) string {
	return "KUBE-SEP-" + hash16(servicePortName+protocol+endpoint)
}

func hash16(s string) string {
	h := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(h[:])[:16]
}

func (s Service) validate() error {
	if s.Namespace == "" || s.Name == "" {
		return errors.New("service needs a namespace and a name")
	}
	if s.Protocol != "tcp" && s.Protocol != "udp" {
		return fmt.Errorf("service %s: protocol %q: want tcp or udp", s.portName(), s.Protocol)
	}
	if s.ClusterIP.To4() == nil {
		return fmt.Errorf("service %s: cluster IP %v is not IPv4", s.portName(), s.ClusterIP)
	}
	if s.Port <= 0 || s.Port > 65535 {
		return fmt.Errorf("service %s: port %d out of range", s.portName(), s.Port)
	}
	for _, e := range s.Endpoints {
		if e.IP.To4() == nil || e.Port <= 0 || e.Port > 65535 {
			return fmt.Errorf("service %s: bad endpoint %s", s.portName(), e)
		}
	}
	return nil
}

// kube-proxy's masquerade mark (--iptables-masquerade-bit 14).
const kubeMasqMark = "0x4000"

// KubeProxy writes kube-proxy's iptables mode for services, modelled on
// kubernetes/kubernetes pkg/proxy/iptables/proxier.go (syncProxyRules and
// iptablesJumpChains; the expected dumps of proxier_test.go):
//
//   - nat: PREROUTING and OUTPUT -> KUBE-SERVICES, one rule per Service
//     port (-d clusterIP -p proto --dport port -j KUBE-SVC-*), then
//     KUBE-NODEPORTS for local addresses; KUBE-SVC-* marks traffic from
//     outside the cluster CIDR for masquerade (KUBE-MARK-MASQ) and picks
//     an endpoint with -m statistic --mode random --probability
//     1/(n-i); KUBE-SEP-* marks hairpin traffic and DNATs; POSTROUTING ->
//     KUBE-POSTROUTING masquerades what was marked.
//   - filter: KUBE-FORWARD (drop INVALID, accept marked and established
//     flows), KUBE-SERVICES (REJECT for ports without endpoints),
//     KUBE-EXTERNAL-SERVICES, KUBE-NODEPORTS, KUBE-PROXY-FIREWALL, hooked
//     from INPUT, FORWARD and OUTPUT as kube-proxy hooks them.
//   - KUBE-PROXY-CANARY in mangle, nat and filter. kube-proxy also
//     writes a copy of the kubelet's KUBE-FIREWALL, which changes
//     nothing on a node that has the kubelet's: that is Kubelet's,
//     in every CNI's rule set (Generate).
//
// kube-proxy ensures its hooks with Prepend (syncProxyRules,
// EnsureRule(utiliptables.Prepend, ...)); they are appended here in the
// order a node shows them and applied first, into empty built-in chains
// (internal/knob), so the CNI's hooks then go above them (Calico,
// Weave's FORWARD rules, kube-router, Cilium: inserted) or below
// (Flannel, Calico's FORWARD accept and nat POSTROUTING, Weave's INPUT
// and POSTROUTING: appended) as each daemon places them.
//
// kube-proxy writes Service ports in map order; here the measured
// Services sit together in the middle of the fillers (sortedServices),
// where a random position lands on average.
// clusterCIDR is kube-proxy's --cluster-cidr.
func KubeProxy(clusterCIDR *net.IPNet, services []Service) (*Ruleset, error) {
	if clusterCIDR == nil || clusterCIDR.IP.To4() == nil {
		return nil, errors.New("kube-proxy needs an IPv4 cluster CIDR")
	}
	svcs, err := sortedServices(services)
	if err != nil {
		return nil, err
	}

	rs := New()
	for _, t := range []string{"mangle", "nat", "filter"} {
		rs.Chain(t, "KUBE-PROXY-CANARY")
	}
	rs.Chain("filter", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-NODEPORTS", "KUBE-PROXY-FIREWALL")
	rs.Chain("nat", "KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ")

	// Hooks (iptablesJumpChains), filter.
	lbfw := comment("kubernetes load balancer firewall")
	rs.Append("filter", "INPUT", "-m conntrack --ctstate NEW %s -j KUBE-PROXY-FIREWALL", lbfw)
	rs.Append("filter", "INPUT", "%s -j KUBE-NODEPORTS", comment("kubernetes health check service ports"))
	rs.Append("filter", "INPUT", "-m conntrack --ctstate NEW %s -j KUBE-EXTERNAL-SERVICES", comment("kubernetes externally-visible service portals"))
	rs.Append("filter", "FORWARD", "-m conntrack --ctstate NEW %s -j KUBE-PROXY-FIREWALL", lbfw)
	rs.Append("filter", "FORWARD", "%s -j KUBE-FORWARD", comment("kubernetes forwarding rules"))
	rs.Append("filter", "FORWARD", "-m conntrack --ctstate NEW %s -j KUBE-SERVICES", comment("kubernetes service portals"))
	rs.Append("filter", "FORWARD", "-m conntrack --ctstate NEW %s -j KUBE-EXTERNAL-SERVICES", comment("kubernetes externally-visible service portals"))
	rs.Append("filter", "OUTPUT", "-m conntrack --ctstate NEW %s -j KUBE-PROXY-FIREWALL", lbfw)
	rs.Append("filter", "OUTPUT", "-m conntrack --ctstate NEW %s -j KUBE-SERVICES", comment("kubernetes service portals"))
	rs.Append("filter", "KUBE-FORWARD", "-m conntrack --ctstate INVALID -j DROP")
	rs.Append("filter", "KUBE-FORWARD", "%s -m mark --mark %s/%s -j ACCEPT", comment("kubernetes forwarding rules"), kubeMasqMark, kubeMasqMark)
	rs.Append("filter", "KUBE-FORWARD", "%s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", comment("kubernetes forwarding conntrack rule"))

	// Hooks, nat.
	rs.Append("nat", "PREROUTING", "%s -j KUBE-SERVICES", comment("kubernetes service portals"))
	rs.Append("nat", "OUTPUT", "%s -j KUBE-SERVICES", comment("kubernetes service portals"))
	rs.Append("nat", "POSTROUTING", "%s -j KUBE-POSTROUTING", comment("kubernetes postrouting rules"))
	rs.Append("nat", "KUBE-POSTROUTING", "-m mark ! --mark %s/%s -j RETURN", kubeMasqMark, kubeMasqMark)
	rs.Append("nat", "KUBE-POSTROUTING", "-j MARK --xor-mark %s", kubeMasqMark)
	rs.Append("nat", "KUBE-POSTROUTING", "%s -j MASQUERADE --random-fully", comment("kubernetes service traffic requiring SNAT"))
	rs.Append("nat", "KUBE-MARK-MASQ", "-j MARK --or-mark %s", kubeMasqMark)

	kubeProxyServices(rs, svcs, clusterCIDR.String(), largeCluster(svcs))
	rs.Append("nat", "KUBE-SERVICES", "%s -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS",
		comment("kubernetes service nodeports; NOTE: this must be the last rule in this chain"))
	return rs, nil
}

// sortedServices validates services, refuses a port given twice, and
// returns them in the order KUBE-SERVICES holds them: the fillers
// (Fillers, namespace FillerNamespace) sorted by chain name, and the
// measured Services (every other) together in their middle, at
// len(fillers)/2. kube-proxy writes one KUBE-SERVICES rule per Service
// port as it ranges over its svcPortMap, a Go map
// (kubernetes/kubernetes v1.33.1 pkg/proxy/iptables/proxier.go:976,
// "for svcName, svc := range proxier.svcPortMap"), so a Service's rule
// lands at a random place, on average the middle. Sorting everything
// by chain name put each measured Service wherever its hash fell: with
// 5000 fillers UDP to server 0 was checked against 44 rules and TCP to
// server 1 against 4930, a difference of the name, not of the datapath.
func sortedServices(services []Service) ([]Service, error) {
	seen := map[string]bool{}
	var fill, measured []Service
	for _, s := range services {
		if err := s.validate(); err != nil {
			return nil, err
		}
		if seen[s.Chain()] {
			return nil, fmt.Errorf("service port %s given twice", s.portName())
		}
		seen[s.Chain()] = true
		if s.Namespace == FillerNamespace {
			fill = append(fill, s)
		} else {
			measured = append(measured, s)
		}
	}
	byChain := func(svcs []Service) {
		sort.Slice(svcs, func(i, j int) bool { return svcs[i].Chain() < svcs[j].Chain() })
	}
	byChain(fill)
	byChain(measured)
	mid := len(fill) / 2
	out := make([]Service, 0, len(services))
	out = append(out, fill[:mid]...)
	out = append(out, measured...)
	return append(out, fill[mid:]...), nil
}

// largeClusterEndpointsThreshold is kube-proxy's: above it (endpoints
// of all Service ports together) it runs in "large cluster mode".
const largeClusterEndpointsThreshold = 1000

// largeCluster reports kube-proxy's large cluster mode for svcs
// (kubernetes/kubernetes v1.33.1 pkg/proxy/iptables/proxier.go:85-88,
// 963-968: more than 1000 endpoints in all).
func largeCluster(svcs []Service) bool {
	n := 0
	for _, s := range svcs {
		n += len(s.Endpoints)
	}
	return n > largeClusterEndpointsThreshold
}

// kubeProxyServices adds each service's chain and its endpoints' chains
// (KUBE-SVC-*, KUBE-SEP-*), picking an endpoint at random as
// kube-proxy's statistic rules do, and rejects services without
// endpoints. In large cluster mode (large) the endpoint-selection rules
// and the KUBE-SEP-* rules carry no comment, as kube-proxy drops them
// to shrink its rules (appendServiceCommentLocked, proxier.go:763-771;
// used at :1393 for both KUBE-SEP rules and in
// writeServiceToEndpointRules, :1605, :1625); the
// KUBE-SERVICES and masquerade rules keep theirs.
func kubeProxyServices(rs *Ruleset, svcs []Service, cluster string, large bool) {
	svcComment := func(c string) string {
		if large {
			return ""
		}
		return comment(c) + " "
	}
	for _, s := range svcs {
		name, dst := s.portName(), s.ClusterIP.To4().String()+"/32"
		match := fmt.Sprintf("-d %s -p %s %s -m %s --dport %d", dst, s.Protocol, comment(name+" cluster IP"), s.Protocol, s.Port)
		if len(s.Endpoints) == 0 {
			rs.Append("filter", "KUBE-SERVICES", "-d %s -p %s %s -m %s --dport %d -j REJECT --reject-with icmp-port-unreachable",
				dst, s.Protocol, comment(name+" has no endpoints"), s.Protocol, s.Port)
			continue
		}
		svc := s.Chain()
		rs.Chain("nat", svc)
		rs.Append("nat", "KUBE-SERVICES", "%s -j %s", match, svc)
		rs.Append("nat", svc, "! -s %s %s -j KUBE-MARK-MASQ", cluster, match)
		for i, e := range s.Endpoints {
			sep := s.EndpointChain(e)
			rs.Chain("nat", sep)
			to := svcComment(name + " -> " + e.String())
			if left := len(s.Endpoints) - i; left > 1 {
				rs.Append("nat", svc, "%s-m statistic --mode random --probability %0.11f -j %s", to, 1.0/float64(left), sep)
			} else {
				rs.Append("nat", svc, "%s-j %s", to, sep)
			}
			rs.Append("nat", sep, "-s %s/32 %s-j KUBE-MARK-MASQ", e.IP.To4(), svcComment(name))
			rs.Append("nat", sep, "-p %s %s-m %s -j DNAT --to-destination %s", s.Protocol, svcComment(name), s.Protocol, e)
		}
	}
}

// FillerNamespace is the namespace of the filler Services (Fillers):
// sortedServices tells them from the measured ones by it.
const FillerNamespace = "cnibench-filler"

// Fillers returns n ClusterIP Services of a cluster with endpoints
// endpoints each, to stand beside the benchmark Service: ClusterIPs from
// serviceCIDR after its first 16 addresses (kube-dns and the API server
// sit there), endpoints from endpointCIDR (addresses no test traffic
// goes to), every Service on tcp/80 to port 8080.
func Fillers(n, endpoints int, serviceCIDR, endpointCIDR *net.IPNet) ([]Service, error) {
	if n < 0 || endpoints < 0 {
		return nil, fmt.Errorf("filler services %d with %d endpoints: want counts >= 0", n, endpoints)
	}
	if serviceCIDR == nil || serviceCIDR.IP.To4() == nil || endpointCIDR == nil || endpointCIDR.IP.To4() == nil {
		return nil, errors.New("filler services need IPv4 service and endpoint CIDRs")
	}
	if size(serviceCIDR) < uint32(n)+18 || size(endpointCIDR) < uint32(n*endpoints)+2 {
		return nil, fmt.Errorf("%d filler services with %d endpoints each do not fit in %s and %s", n, endpoints, serviceCIDR, endpointCIDR)
	}
	out := make([]Service, n)
	for i := range out {
		s := Service{Namespace: FillerNamespace, Name: fmt.Sprintf("svc-%d", i), PortName: "http", Protocol: "tcp",
			ClusterIP: nth(serviceCIDR, uint32(16+i)), Port: 80}
		for j := 0; j < endpoints; j++ {
			s.Endpoints = append(s.Endpoints, Endpoint{IP: nth(endpointCIDR, uint32(1+i*endpoints+j)), Port: 8080})
		}
		out[i] = s
	}
	return out, nil
}

func size(n *net.IPNet) uint32 {
	ones, bits := n.Mask.Size()
	if bits-ones >= 32 {
		return ^uint32(0)
	}
	return 1 << uint(bits-ones)
}

func nth(n *net.IPNet, i uint32) net.IP {
	b := n.IP.To4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += i
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
}

// BenchClusterIP is the ClusterIP of the Service in front of measured
// server i (study.Workload.Target service or hairpin): 10.96.100.i, in
// the service CIDR and clear of the fillers (which start at 10.96.0.16).
func BenchClusterIP(i int) net.IP { return net.IPv4(10, 96, 100, byte(i)).To4() }

// BenchServices are the Services in front of the measured servers, as
// the kube engine makes them: server i on port base+i, TCP and UDP, one
// endpoint (the pod, same port).
func BenchServices(servers []net.IP, base int) []Service {
	var out []Service
	for i, ip := range servers {
		for _, proto := range []string{"tcp", "udp"} {
			out = append(out, Service{Namespace: "cnibench", Name: fmt.Sprintf("server-%d", i), PortName: proto, Protocol: proto,
				ClusterIP: BenchClusterIP(i), Port: base + i, Endpoints: []Endpoint{{IP: ip, Port: base + i}}})
		}
	}
	return out
}
