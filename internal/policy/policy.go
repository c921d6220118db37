// Package policy writes a CNI's network-policy rule set for a node, so a
// study can measure what policy enforcement costs (seed 004's Calico-wp
// vs Calico-np).
//
// Only Calico's style is modelled: the filter-table state Felix, the
// Calico agent, programs for workload endpoints on routed cali* veths,
// as Calico v3.29 (felix at v3.29.7) renders it:
//
//	FORWARD -> cali-FORWARD -> cali-from-hep-forward (empty: no host endpoints)
//	                        -> cali-from-wl-dispatch (-i caliX -g cali-fw-caliX, or a child chain per prefix)
//	                        -> cali-to-wl-dispatch   (-o caliX -g cali-tw-caliX, likewise)
//	                        -> cali-to-hep-forward, cali-cidr-block (empty)
//	FORWARD (end): accept what policy marked, then set the accept mark
//
// cali-FORWARD and the FORWARD hooks are felix/rules/static.go's
// StaticFilterForwardChains and StaticFilterForwardAppendRules, placed
// as Felix places them (the jump inserted at the top, the accept
// appended after whatever FORWARD holds, kube-proxy's hooks included);
// internal/netfilter's Calico writes the same. The dispatch chains are
// felix/rules/dispatch.go's prefix tree (dispatch.go here).
//
// Each endpoint chain is rendered as Felix's endpointIptablesChain
// (felix/rules/endpoints.go) renders it: accept established flows first
// (conntrack), drop invalid ones, clear the accept and pass marks, then
// (wp, the "to workload" chains) the policy's tier: clear pass ("Start of
// tier"), jump to the ingress policy chain (allow TCP, UDP and ICMP from
// the pod networks of the run) while pass is clear, return if it
// accepted, drop what no policy passed ("End of tier"); and last the
// namespace profile (allow all, Calico's default, which is all np has):
// jump, return if accepted, drop. The policy and profile chains are
// rendered as Felix renders a policy's rules (felixAllow). Accepted
// packets carry Felix's accept mark (0x10000). Felix matches sources
// with ipsets; this rule set matches each pod /24 with -s instead, so it
// needs no ipset support, and the per-packet cost of a rule that matches
// is the same order. Felix's rule comments are left out, except the one
// on FORWARD's accept, which internal/netfilter writes too.
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

// Chain names (felix/rules/rule_defs.go; the profile and policy chains
// as Felix names those of namespace "cnibench" and of policy
// "allow-pods" in tier "default").
const (
	chainForward  = "cali-FORWARD"
	chainProfOut  = "cali-pro-kns.cnibench"
	chainProfIn   = "cali-pri-kns.cnibench"
	chainPolicyIn = "cali-pi-_cnibench-allow-pods"
)

// forwardStatic are the static chains cali-FORWARD jumps to besides the
// dispatch chains: empty on a node without host endpoints.
var forwardStatic = []string{"cali-from-hep-forward", "cali-to-hep-forward", "cali-cidr-block"}

// rules collects a rule set's "-A" lines.
type rules struct{ b bytes.Buffer }

func (r *rules) add(chain, format string, a ...any) {
	fmt.Fprintf(&r.b, "-A %s %s\n", chain, fmt.Sprintf(format, a...))
}

// Calico returns iptables-restore input (filter table, for --noflush)
// with Felix-style chains for the node's endpoints. With hook the
// FORWARD hooks are added too (the jump into cali-FORWARD at the top,
// the accept at the end); leave them out when the chains are rewritten
// after pods were added, so they are not duplicated. allowFrom are the
// pod networks the wp policy admits.
func Calico(mode string, eps []Endpoint, allowFrom []*net.IPNet, hook bool) ([]byte, error) {
	if mode != With && mode != Without {
		return nil, fmt.Errorf("policy mode %q: want %s or %s", mode, With, Without)
	}
	names := make([]string, len(eps))
	for i, e := range eps {
		if e.Iface == "" {
			return nil, fmt.Errorf("endpoint %s has no host interface", e.IP)
		}
		names[i] = e.Iface
	}
	tree, err := divide(names)
	if err != nil {
		return nil, err
	}
	chains := append([]string{chainForward}, forwardStatic...)
	chains = append(chains, tree.chains()...)
	chains = append(chains, chainProfOut, chainProfIn)
	if mode == With {
		chains = append(chains, chainPolicyIn)
	}
	for _, n := range names {
		chains = append(chains, "cali-fw-"+n, "cali-tw-"+n)
	}
	var r rules
	fmt.Fprintln(&r.b, "*filter")
	for _, c := range chains {
		// Declaring a chain with --noflush creates or flushes it, so a
		// rewrite replaces the previous rules atomically.
		fmt.Fprintf(&r.b, ":%s - [0:0]\n", c)
	}
	if hook {
		forwardHooks(&r)
	}
	forward(&r)
	tree.write(&r)
	for _, n := range names {
		endpoint(&r, n, mode)
	}
	for _, c := range []string{chainProfOut, chainProfIn} {
		// Calico's default namespace profile: one rule, allow all.
		for _, rule := range felixAllow([]string{""}) {
			r.add(c, "%s", rule)
		}
	}
	if mode == With {
		policyChain(&r, allowFrom)
	}
	fmt.Fprintln(&r.b, "COMMIT")
	return r.b.Bytes(), nil
}

// forwardHooks writes Felix's FORWARD hooks: the jump to cali-FORWARD
// inserted at the top (setUpIptablesNormal's InsertOrAppendRules, with
// the default ChainInsertMode "insert"), and
// StaticFilterForwardAppendRules appended after whatever FORWARD holds
// (kube-proxy's hooks on a real node): accept what policy marked, mark
// the rest as forwarded (for Felix's mangle POSTROUTING).
func forwardHooks(r *rules) {
	fmt.Fprintf(&r.b, "-I FORWARD -j %s\n", chainForward)
	r.add("FORWARD", "-m comment --comment %q -m mark --mark %s -j ACCEPT", "Policy explicitly accepted packet.", accept)
	r.add("FORWARD", "-j MARK --set-xmark %s", accept)
}

// forward writes cali-FORWARD as StaticFilterForwardChains does (v3.29.7
// felix/rules/static.go): clear Calico's marks but accept, the
// from-host-endpoint dispatch unless raw or pre-DNAT accepted, the
// workload dispatch chains, the to-host-endpoint dispatch and the
// service-CIDR loop block. It accepts nothing itself: FORWARD's appended
// rule does, after the hooks below Felix's.
func forward(r *rules) {
	r.add(chainForward, "-j MARK --set-xmark 0x0/0xe0000")
	r.add(chainForward, "-m mark --mark 0x0/0x10000 -j cali-from-hep-forward")
	r.add(chainForward, "-i cali+ -j %s", dispatchFrom)
	r.add(chainForward, "-o cali+ -j %s", dispatchTo)
	r.add(chainForward, "-j cali-to-hep-forward")
	r.add(chainForward, "-j cali-cidr-block")
}

// endpoint writes the endpoint chains of the interface n: from the pod
// (egress: no egress policy, the namespace profile allows it) and to it
// (ingress: the policy's tier with wp, then the profile).
func endpoint(r *rules, n, mode string) {
	fw, tw := "cali-fw-"+n, "cali-tw-"+n
	r.add(fw, "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT")
	r.add(fw, "-m conntrack --ctstate INVALID -j DROP")
	r.add(fw, "-j MARK --set-xmark %s", clearResult)
	r.add(fw, "-p udp -m udp --dport 4789 -j DROP") // no VXLAN from workloads
	r.add(fw, "-p 4 -j DROP")                       // no IP-in-IP from workloads
	profile(r, fw, chainProfOut)
	r.add(tw, "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT")
	r.add(tw, "-m conntrack --ctstate INVALID -j DROP")
	r.add(tw, "-j MARK --set-xmark %s", clearResult)
	if mode == With {
		// The policy's tier ("default"), as endpointIptablesChain
		// renders one: clear pass, jump to each policy while no
		// policy passed, return once one accepted, and drop at the
		// end of the tier what no policy passed.
		r.add(tw, "-j MARK --set-xmark %s", pass0)
		r.add(tw, "-m mark --mark %s -j %s", pass0, chainPolicyIn)
		r.add(tw, "-m mark --mark %s -j RETURN", accept)
		r.add(tw, "-m mark --mark %s -j DROP", pass0)
	}
	profile(r, tw, chainProfIn)
}

// profile appends an endpoint chain's end, as Felix renders it after the
// tiers: jump to the profile, return if it accepted, drop otherwise.
func profile(r *rules, chain, prof string) {
	r.add(chain, "-j %s", prof)
	r.add(chain, "-m mark --mark %s -j RETURN", accept)
	r.add(chain, "-j DROP")
}

// policyChain writes the wp policy's ingress chain: one allow rule per
// pod network and protocol, in that order.
func policyChain(r *rules, allowFrom []*net.IPNet) {
	var matches []string
	for _, n := range allowFrom {
		for _, proto := range []string{"tcp", "udp", "icmp"} {
			matches = append(matches, fmt.Sprintf("-p %s -s %s", proto, n))
		}
	}
	for _, rule := range felixAllow(matches) {
		r.add(chainPolicyIn, "%s", rule)
	}
}

// felixAllow renders a policy's or profile's allow rules (their match
// criteria, "" for none) as Felix does (v3.29.7 felix/rules/policy.go):
// an allow rule sets the accept mark where it matches and is followed
// by "return if accepted" (ProtoRuleToIptablesRules with
// CalculateActions: mark bit, then the Return action), so a packet
// leaves at the first rule that admits it; ProtoRulesToIptablesRules
// then strips the RETURNs at the end of the chain, which are no-ops. A
// rule k-th in the chain costs a packet it admits 2k-1 or 2k rules, one
// no rule admits 2N-1.
func felixAllow(matches []string) []string {
	var out []string
	for _, m := range matches {
		out = append(out,
			strings.TrimSpace(m+" -j MARK --set-xmark "+accept),
			"-m mark --mark "+accept+" -j RETURN")
	}
	for len(out) > 0 && strings.HasSuffix(out[len(out)-1], " -j RETURN") {
		out = out[:len(out)-1]
	}
	return out
}

// Count returns the chains a rule set declares and the rules it adds
// (appended or inserted).
func Count(restore []byte) (chains, rules int) {
	sc := bufio.NewScanner(bytes.NewReader(restore))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, ":"):
			chains++
		case strings.HasPrefix(l, "-A "), strings.HasPrefix(l, "-I "):
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
