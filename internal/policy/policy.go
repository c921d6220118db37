// Package policy writes a CNI's network-policy rule set for a node, so a
// study can measure what policy enforcement costs (seed 004's Calico-wp
// vs Calico-np).
//
// Only Calico's style is modelled. The rule set follows what Felix, the
// Calico agent, programs in the filter table for workload endpoints on
// routed cali* veths:
//
//	FORWARD -> cali-FORWARD -> cali-from-wl-dispatch (-i caliX -> cali-fw-caliX)
//	                        -> cali-to-wl-dispatch   (-o caliX -> cali-tw-caliX)
//
// Each endpoint chain is rendered as Felix's endpointIptablesChain
// (felix/rules/endpoints.go) renders it: accept established flows first
// (conntrack), drop invalid ones, clear the accept and pass marks, then
// (wp, the "to workload" chains) the policy's tier: clear pass ("Start of
// tier"), jump to the ingress policy chain (allow TCP, UDP and ICMP from
// the pod networks of the run) while pass is clear, return if it
// accepted, drop what no policy passed ("End of tier"); and last the
// namespace profile (allow all, Calico's default, which is all np has):
// jump, return if accepted, drop. Accepted packets carry Felix's accept
// mark (0x10000). Felix matches sources with ipsets; this rule set matches
// each pod /24 with -s instead, so it needs no ipset support, and the
// per-packet cost of a rule that matches is the same order.
package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sort"
	"strings"
)

// Modes.
const (
	// With is "wp": an ingress policy selects every endpoint.
	With = "wp"
	// Without is "np": Felix's chains with the default allow profile.
	Without = "np"
)

// Endpoint is a pod on the node as the rule set matches it: by its
// host-side interface.
type Endpoint struct {
	Iface string
	IP    net.IP
}

// Felix's policy result mark bits, the first two it takes from its mark
// mask 0xffff0000 (felix/dataplane/driver.go: markAccept, then markPass).
const (
	// accept: "packet accepted by policy or profile".
	accept = "0x10000/0x10000"
	// clearResult clears accept and pass before an endpoint's policy.
	clearResult = "0x0/0x30000"
	// pass0 is the pass bit at 0: written with --set-xmark it clears
	// pass (start of a tier), matched with --mark it selects packets no
	// policy of the tier passed on.
	pass0 = "0x0/0x20000"
)

// profile appends an endpoint chain's end, as Felix renders it after the
// tiers: jump to the profile, return if it accepted, drop otherwise.
func profile(r func(string, ...any), chain, prof string) {
	r("%s -j %s", chain, prof)
	r("%s -m mark --mark %s -j RETURN", chain, accept)
	r("%s -j DROP", chain)
}

// Calico returns iptables-restore input (filter table, for --noflush)
// with Felix-style chains for the node's endpoints. With hook the
// FORWARD jump into cali-FORWARD is added too; leave it out when the
// chains are rewritten after pods were added, so the jump is not
// duplicated. allowFrom are the pod networks the wp policy admits.
func Calico(mode string, eps []Endpoint, allowFrom []*net.IPNet, hook bool) ([]byte, error) {
	if mode != With && mode != Without {
		return nil, fmt.Errorf("policy mode %q: want %s or %s", mode, With, Without)
	}
	var b bytes.Buffer
	chains := []string{"cali-FORWARD", "cali-from-wl-dispatch", "cali-to-wl-dispatch", "cali-pro-kns.cnibench", "cali-pri-kns.cnibench"}
	if mode == With {
		chains = append(chains, "cali-pi-_cnibench-allow-pods")
	}
	for _, e := range eps {
		if e.Iface == "" {
			return nil, fmt.Errorf("endpoint %s has no host interface", e.IP)
		}
		chains = append(chains, "cali-fw-"+e.Iface, "cali-tw-"+e.Iface)
	}
	fmt.Fprintln(&b, "*filter")
	for _, c := range chains {
		// Declaring a chain with --noflush creates or flushes it, so a
		// rewrite replaces the previous rules atomically.
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	r := func(format string, a ...any) { fmt.Fprintf(&b, "-A "+format+"\n", a...) }
	if hook {
		r("FORWARD -j cali-FORWARD")
	}
	r("cali-FORWARD -j MARK --set-xmark 0x0/0xe0000")
	r("cali-FORWARD -i cali+ -j cali-from-wl-dispatch")
	r("cali-FORWARD -o cali+ -j cali-to-wl-dispatch")
	r("cali-FORWARD -m mark --mark %s -j ACCEPT", accept)
	for _, e := range eps {
		r("cali-from-wl-dispatch -i %s -g cali-fw-%s", e.Iface, e.Iface)
		r("cali-to-wl-dispatch -o %s -g cali-tw-%s", e.Iface, e.Iface)
	}
	r("cali-from-wl-dispatch -j DROP")
	r("cali-to-wl-dispatch -j DROP")
	for _, e := range eps {
		fw, tw := "cali-fw-"+e.Iface, "cali-tw-"+e.Iface
		// Egress from the pod: no egress policy, the namespace profile
		// allows it.
		r("%s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", fw)
		r("%s -m conntrack --ctstate INVALID -j DROP", fw)
		r("%s -j MARK --set-xmark %s", fw, clearResult)
		r("%s -p udp -m udp --dport 4789 -j DROP", fw) // no VXLAN from workloads
		r("%s -p 4 -j DROP", fw)                       // no IP-in-IP from workloads
		profile(r, fw, "cali-pro-kns.cnibench")
		// Ingress to the pod.
		r("%s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", tw)
		r("%s -m conntrack --ctstate INVALID -j DROP", tw)
		r("%s -j MARK --set-xmark %s", tw, clearResult)
		if mode == With {
			// The policy's tier ("default"), as endpointIptablesChain
			// renders one: clear pass, jump to each policy while no
			// policy passed, return once one accepted, and drop at the
			// end of the tier what no policy passed.
			r("%s -j MARK --set-xmark %s", tw, pass0)
			r("%s -m mark --mark %s -j cali-pi-_cnibench-allow-pods", tw, pass0)
			r("%s -m mark --mark %s -j RETURN", tw, accept)
			r("%s -m mark --mark %s -j DROP", tw, pass0)
		}
		profile(r, tw, "cali-pri-kns.cnibench")
	}
	for _, c := range []string{"cali-pro-kns.cnibench", "cali-pri-kns.cnibench"} {
		r("%s -j MARK --set-xmark %s", c, accept)
		r("%s -m mark --mark %s -j RETURN", c, accept)
	}
	if mode == With {
		for _, n := range allowFrom {
			for _, proto := range []string{"tcp", "udp", "icmp"} {
				r("cali-pi-_cnibench-allow-pods -p %s -s %s -j MARK --set-xmark %s", proto, n, accept)
			}
		}
		r("cali-pi-_cnibench-allow-pods -m mark --mark %s -j RETURN", accept)
	}
	fmt.Fprintln(&b, "COMMIT")
	return b.Bytes(), nil
}

// Count returns the chains a rule set declares and the rules it appends.
func Count(restore []byte) (chains, rules int) {
	sc := bufio.NewScanner(bytes.NewReader(restore))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, ":"):
			chains++
		case strings.HasPrefix(l, "-A "):
			rules++
		}
	}
	return chains, rules
}

// PodNetworks covers the pods' addresses with /24 networks (one rule per
// node's pod subnet, as an ipset of the pods would match), sorted.
func PodNetworks(ips []net.IP) []*net.IPNet {
	seen := map[string]*net.IPNet{}
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			n := &net.IPNet{IP: ip4.Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}
			seen[n.String()] = n
		}
	}
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*net.IPNet, 0, len(keys))
	for _, k := range keys {
		out = append(out, seen[k])
	}
	return out
}
