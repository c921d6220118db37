package netfilter

import (
	"errors"
	"net"
)

// IPVS is kube-proxy's IPVS mode on one node: the kernel's layer-4
// load balancer holds a virtual server per Service port, every ClusterIP
// is bound to a dummy device so the node accepts it as local, ipsets
// hold the addresses and ports the few iptables rules match, and the
// iptables rules mark what must be masqueraded. Modelled on
// kubernetes/kubernetes pkg/proxy/ipvs/proxier.go (syncProxyRules,
// writeIptablesRules, acceptIPVSTraffic, iptablesJumpChain,
// iptablesChains, ipsetInfo, ipsetWithIptablesChain) and ipset.go (the
// set names and comments).
type IPVS struct {
	// Rules are the iptables chains, hooks and rules; they match the Sets,
	// which must exist before the rules are loaded.
	Rules *Ruleset
	Sets  []IPSet
	// Dummy is the device the ClusterIPs are bound to (kube-ipvs0, left
	// down as kube-proxy leaves it); Addrs are those addresses.
	Dummy string
	Addrs []net.IP
	// Virtual are the IPVS services, each with its real servers
	// (masquerading forwarding, weight 1).
	Virtual []VirtualServer
	// Sysctls are the per-namespace settings kube-proxy ensures at start
	// (NewProxier), by their path under /proc/sys.
	Sysctls map[string]string
}

// IPSet is one ipset and its entries.
type IPSet struct {
	Name, Type, Comment string
	Entries             []IPSetEntry
}

// IPSetEntry is an entry of a hash:ip, hash:ip,port or hash:ip,port,ip
// set (Port 0 and IP2 nil where the type has none).
type IPSetEntry struct {
	IP       net.IP
	Protocol string
	Port     int
	IP2      net.IP
}

// VirtualServer is one IPVS service.
type VirtualServer struct {
	IP        net.IP
	Protocol  string
	Port      int
	Scheduler string
	Dests     []Endpoint
}

// DummyDevice is kube-proxy's defaultDummyDevice.
const DummyDevice = "kube-ipvs0"

// The ipsets kube-proxy's IPVS rules match (ipsetInfo holds 17; the other
// ten serve NodePorts, LoadBalancers and source ranges, which are not
// generated here, and no rule matches them while they are empty).
const (
	setLoopBack     = "KUBE-LOOP-BACK"
	setClusterIP    = "KUBE-CLUSTER-IP"
	setExternalIP   = "KUBE-EXTERNAL-IP"
	setExternalLoc  = "KUBE-EXTERNAL-IP-LOCAL"
	setLoadBalancer = "KUBE-LOAD-BALANCER"
	setHealthCheck  = "KUBE-HEALTH-CHECK-NODE-PORT"
	setIPVSIPs      = "KUBE-IPVS-IPS"
)

// ipvsSets are the sets created on every node, in ipsetInfo's order.
var ipvsSets = []IPSet{
	{Name: setLoopBack, Type: "hash:ip,port,ip", Comment: "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose"},
	{Name: setClusterIP, Type: "hash:ip,port", Comment: "Kubernetes service cluster ip + port for masquerade purpose"},
	{Name: setExternalIP, Type: "hash:ip,port", Comment: "Kubernetes service external ip + port for masquerade and filter purpose"},
	{Name: setExternalLoc, Type: "hash:ip,port", Comment: "Kubernetes service external ip + port with externalTrafficPolicy=local"},
	{Name: setLoadBalancer, Type: "hash:ip,port", Comment: "Kubernetes service lb portal"},
	{Name: setHealthCheck, Type: "bitmap:port", Comment: "Kubernetes health check node port"},
	{Name: setIPVSIPs, Type: "hash:ip", Comment: "Addresses on the ipvs interface"},
}

// IPVSSetNames are the names of the sets KubeProxyIPVS creates.
func IPVSSetNames() []string {
	out := make([]string, len(ipvsSets))
	for i, s := range ipvsSets {
		out[i] = s.Name
	}
	return out
}

// KubeProxyIPVS returns kube-proxy's IPVS mode for services on a node
// whose pods are in podCIDR (their endpoints go in KUBE-LOOP-BACK, so a
// pod reaching itself through its Service is masqueraded: hairpin).
// clusterCIDR is --cluster-cidr: traffic from outside it to a ClusterIP
// is marked for masquerade (the local detector's IfNotLocal).
func KubeProxyIPVS(clusterCIDR, podCIDR *net.IPNet, services []Service) (*IPVS, error) {
	if clusterCIDR == nil || clusterCIDR.IP.To4() == nil || podCIDR == nil || podCIDR.IP.To4() == nil {
		return nil, errors.New("kube-proxy's IPVS mode needs IPv4 cluster and pod CIDRs")
	}
	svcs, err := sortedServices(services)
	if err != nil {
		return nil, err
	}

	st := &IPVS{Dummy: DummyDevice, Sysctls: map[string]string{
		"net/ipv4/vs/conntrack":                 "1",
		"net/ipv4/vs/expire_nodest_conn":        "1",
		"net/ipv4/vs/expire_quiescent_template": "1",
		"net/ipv4/ip_forward":                   "1",
	}}
	st.Sets = append([]IPSet(nil), ipvsSets...)
	sets := map[string]*IPSet{}
	for i := range st.Sets {
		sets[st.Sets[i].Name] = &st.Sets[i]
	}
	bound := map[string]bool{}
	for _, s := range svcs {
		ip := s.ClusterIP.To4()
		for _, e := range s.Endpoints {
			if podCIDR.Contains(e.IP) {
				ep := e.IP.To4()
				sets[setLoopBack].Entries = append(sets[setLoopBack].Entries, IPSetEntry{IP: ep, Protocol: s.Protocol, Port: e.Port, IP2: ep})
			}
		}
		sets[setClusterIP].Entries = append(sets[setClusterIP].Entries, IPSetEntry{IP: ip, Protocol: s.Protocol, Port: s.Port})
		st.Virtual = append(st.Virtual, VirtualServer{IP: ip, Protocol: s.Protocol, Port: s.Port, Scheduler: "rr", Dests: s.Endpoints})
		if !bound[ip.String()] {
			bound[ip.String()] = true
			st.Addrs = append(st.Addrs, ip)
			sets[setIPVSIPs].Entries = append(sets[setIPVSIPs].Entries, IPSetEntry{IP: ip})
		}
	}
	st.Rules = ipvsRules(clusterCIDR, sets)
	return st, nil
}

// ipvsJumps are kube-proxy's iptablesJumpChain, in its order.
var ipvsJumps = []struct{ table, from, to, comment string }{
	{"nat", "OUTPUT", "KUBE-SERVICES", "kubernetes service portals"},
	{"nat", "PREROUTING", "KUBE-SERVICES", "kubernetes service portals"},
	{"nat", "POSTROUTING", "KUBE-POSTROUTING", "kubernetes postrouting rules"},
	{"filter", "FORWARD", "KUBE-FORWARD", "kubernetes forwarding rules"},
	{"filter", "INPUT", "KUBE-NODE-PORT", "kubernetes health check rules"},
	{"filter", "INPUT", "KUBE-PROXY-FIREWALL", "kube-proxy firewall rules"},
	{"filter", "FORWARD", "KUBE-PROXY-FIREWALL", "kube-proxy firewall rules"},
	{"filter", "INPUT", "KUBE-IPVS-FILTER", "kubernetes ipvs access filter"},
	{"filter", "OUTPUT", "KUBE-IPVS-OUT-FILTER", "kubernetes ipvs access filter"},
}

// ipvsRules writes createAndLinkKubeChain's chains and hooks and
// writeIptablesRules' rules for ClusterIP Services (no NodePorts,
// LoadBalancers or external IPs), the masquerade bit 14 as in the
// iptables mode.
func ipvsRules(clusterCIDR *net.IPNet, sets map[string]*IPSet) *Ruleset {
	rs := New()
	rs.Chain("nat", "KUBE-SERVICES", "KUBE-POSTROUTING", "KUBE-NODE-PORT", "KUBE-LOAD-BALANCER", "KUBE-MARK-MASQ")
	rs.Chain("filter", "KUBE-FORWARD", "KUBE-NODE-PORT", "KUBE-PROXY-FIREWALL", "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER")
	// iptablesJumpChain (kubernetes/kubernetes v1.33.1
	// pkg/proxy/ipvs/proxier.go:423-438), each ensured in that order
	// with EnsureRule(Prepend) (createAndLinkKubeChain, :1766-1771), so
	// a built-in chain holds its jumps in reverse: INPUT is
	// KUBE-IPVS-FILTER, KUBE-PROXY-FIREWALL, KUBE-NODE-PORT and FORWARD
	// KUBE-PROXY-FIREWALL, KUBE-FORWARD. They are appended here in that
	// order, into built-in chains still empty: kube-proxy's rules are
	// applied before the CNI's (internal/knob), whose hooks then go above
	// or below them as each daemon places its own, and the kubelet's
	// KUBE-FIREWALL (Kubelet) below them.
	for i := len(ipvsJumps) - 1; i >= 0; i-- {
		j := ipvsJumps[i]
		rs.Append(j.table, j.from, "%s -j %s", comment(j.comment), j.to)
	}

	rs.Append("nat", "KUBE-SERVICES", "-s 127.0.0.0/8 -j RETURN")
	if loop := sets[setLoopBack]; len(loop.Entries) > 0 {
		rs.Append("nat", "KUBE-POSTROUTING", "%s -m set --match-set %s dst,dst,src -j MASQUERADE", comment(loop.Comment), loop.Name)
	}
	if cip := sets[setClusterIP]; len(cip.Entries) > 0 {
		rs.Append("nat", "KUBE-SERVICES", "%s -m set --match-set %s dst,dst ! -s %s -j KUBE-MARK-MASQ", comment(cip.Comment), cip.Name, clusterCIDR)
	}
	rs.Append("nat", "KUBE-SERVICES", "-m addrtype --dst-type LOCAL -j KUBE-NODE-PORT")
	rs.Append("nat", "KUBE-LOAD-BALANCER", "-j KUBE-MARK-MASQ")
	rs.Append("filter", "KUBE-SOURCE-RANGES-FIREWALL", "-j DROP")
	// acceptIPVSTraffic: the last rule of KUBE-SERVICES.
	if len(sets[setClusterIP].Entries) > 0 {
		rs.Append("nat", "KUBE-SERVICES", "-m set --match-set %s dst,dst -j ACCEPT", setClusterIP)
	}
	rs.Append("filter", "KUBE-FORWARD", "%s -m mark --mark %s/%s -j ACCEPT", comment("kubernetes forwarding rules"), kubeMasqMark, kubeMasqMark)
	rs.Append("filter", "KUBE-FORWARD", "%s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", comment("kubernetes forwarding conntrack rule"))
	rs.Append("filter", "KUBE-NODE-PORT", "%s -m set --match-set %s dst -j ACCEPT", comment(sets[setHealthCheck].Comment), setHealthCheck)
	for _, s := range []string{setLoadBalancer, setClusterIP, setExternalIP, setExternalLoc} {
		rs.Append("filter", "KUBE-IPVS-FILTER", "-m set --match-set %s dst,dst -j RETURN", s)
	}
	rs.Append("filter", "KUBE-IPVS-FILTER", "-m set --match-set %s dst -j RETURN", setHealthCheck)
	rs.Append("filter", "KUBE-IPVS-FILTER", "-m conntrack --ctstate NEW -m set --match-set %s dst -j REJECT", setIPVSIPs)
	rs.Append("nat", "KUBE-POSTROUTING", "-m mark ! --mark %s/%s -j RETURN", kubeMasqMark, kubeMasqMark)
	rs.Append("nat", "KUBE-POSTROUTING", "-j MARK --xor-mark %s", kubeMasqMark)
	rs.Append("nat", "KUBE-POSTROUTING", "%s -j MASQUERADE --random-fully", comment("kubernetes service traffic requiring SNAT"))
	rs.Append("nat", "KUBE-MARK-MASQ", "-j MARK --or-mark %s", kubeMasqMark)
	return rs
}
