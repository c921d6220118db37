package netfilter

import (
	"errors"
	"net"
)

// KubeRouterDummy is kube-router's KubeDummyIf, where its service
// proxy binds the ClusterIPs.
const KubeRouterDummy = "kube-dummy-if"

// kube-router's service-proxy sets (localIPsIPSetName, serviceIPsIPSetName,
// serviceIPPortsSetName) and firewall chain (ipvsFirewallChainName).
const (
	krSetLocalIPs   = "kube-router-local-ips"
	krSetServiceIPs = "kube-router-svip"
	krSetSvcIPPorts = "kube-router-svip-prt"
	krServicesChain = "KUBE-ROUTER-SERVICES"
)

// krSets are the sets setupIpvsFirewall creates, in its order.
var krSets = []IPSet{{Name: krSetLocalIPs, Type: "hash:ip"}, {Name: krSetServiceIPs, Type: "hash:ip"}, {Name: krSetSvcIPPorts, Type: "hash:ip,port"}}

// KubeRouterProxy returns kube-router's own service proxy
// (--run-service-proxy, which replaces kube-proxy) on a node with
// address nodeIP, pod subnet podCIDR and local addresses localIPs,
// modelled on cloudnativelabs/kube-router v2.11.1 pkg/controllers/proxy:
//
//   - network_services_controller.go: Run's sysctls; setupIpvsFirewall
//     (the three sets, KUBE-ROUTER-SERVICES with the common ICMP accepts,
//     the accept of Service ip,port and the reject of anything else sent
//     to a Service IP, entered from INPUT for Service IPs: ipvsPermitAll,
//     the default); syncIpvsFirewall (the sets' entries: the node's
//     addresses, each IPVS service's IP and ip,proto:port);
//     ensureMasqueradeIptablesRule (IPVS-forwarded traffic from and to
//     outside the pod subnet is SNATed to the node's address; no
//     masquerade-all, the default);
//   - service_endpoints_sync.go: a virtual server per Service port with
//     the round-robin scheduler and masquerading real servers, its
//     ClusterIP bound to kube-dummy-if.
//
// Hairpin (a pod reaching itself through its Service) needs the
// kube-router.io/service.hairpin annotation or --hairpin-mode, neither
// of which is the default: no hairpin rules are written, as on a default
// node. The route kube-router puts in the local table for each bound
// address (src the node IP, for host-originated traffic) is left out.
func KubeRouterProxy(nodeIP net.IP, podCIDR *net.IPNet, localIPs []net.IP, services []Service) (*IPVS, error) {
	if nodeIP.To4() == nil || podCIDR == nil || podCIDR.IP.To4() == nil {
		return nil, errors.New("kube-router's service proxy needs the node's IPv4 address and pod subnet")
	}
	svcs, err := sortedServices(services)
	if err != nil {
		return nil, err
	}
	st := &IPVS{Dummy: KubeRouterDummy, Sysctls: map[string]string{
		"net/ipv4/vs/conntrack":                 "1",
		"net/ipv4/vs/expire_nodest_conn":        "1",
		"net/ipv4/vs/expire_quiescent_template": "1",
		"net/ipv4/vs/conn_reuse_mode":           "0",
		"net/ipv4/conf/all/arp_ignore":          "1",
		"net/ipv4/conf/all/arp_announce":        "2",
	}}
	st.Sets = append([]IPSet(nil), krSets...)
	for _, ip := range localIPs {
		if ip.To4() != nil {
			st.Sets[0].Entries = append(st.Sets[0].Entries, IPSetEntry{IP: ip.To4()})
		}
	}
	bound := map[string]bool{}
	for _, s := range svcs {
		ip := s.ClusterIP.To4()
		st.Virtual = append(st.Virtual, VirtualServer{IP: ip, Protocol: s.Protocol, Port: s.Port, Scheduler: "rr", Dests: s.Endpoints})
		st.Sets[2].Entries = append(st.Sets[2].Entries, IPSetEntry{IP: ip, Protocol: s.Protocol, Port: s.Port})
		if !bound[ip.String()] {
			bound[ip.String()] = true
			st.Addrs = append(st.Addrs, ip)
			st.Sets[1].Entries = append(st.Sets[1].Entries, IPSetEntry{IP: ip})
		}
	}
	st.Rules = kubeRouterProxyRules(nodeIP.To4(), podCIDR)
	return st, nil
}

func kubeRouterProxyRules(nodeIP net.IP, podCIDR *net.IPNet) *Ruleset {
	rs := New()
	rs.Chain("filter", krServicesChain)
	for _, icmp := range []struct{ typ, what string }{
		{"echo-request", "allow icmp echo requests"},
		{"destination-unreachable", "allow icmp destination unreachable messages"},
		{"time-exceeded", "allow icmp time exceeded messages"},
	} {
		rs.Append("filter", krServicesChain, "%s -p icmp --icmp-type %s -j ACCEPT", comment(icmp.what), icmp.typ)
	}
	rs.Append("filter", krServicesChain, "%s -m set --match-set %s dst,dst -j ACCEPT", comment("allow input traffic to ipvs services"), krSetSvcIPPorts)
	rs.Append("filter", krServicesChain, "%s -m set ! --match-set %s dst -j REJECT --reject-with icmp-port-unreachable",
		comment("reject all unexpected traffic to service IPs"), krSetLocalIPs)
	// setupIpvsFirewall inserts the INPUT jump at position 1;
	// ensureMasqueradeIptablesRule appends the SNAT (AppendUnique). The
	// proxy's rules go in before the CNI's (internal/knob), so a
	// kube-router CNI's netpol hook, which it keeps at position 1, ends
	// up above this jump as on a node.
	rs.Insert("filter", "INPUT", "%s -m set --match-set %s dst -j %s", comment("handle traffic to IPVS service IPs in custom chain"), krSetServiceIPs, krServicesChain)
	rs.Append("nat", "POSTROUTING", "-m ipvs --ipvs --vdir ORIGINAL --vmethod MASQ %s ! -s %s ! -d %s -j SNAT --to-source %s --random-fully",
		comment(""), podCIDR, podCIDR, nodeIP)
	return rs
}
