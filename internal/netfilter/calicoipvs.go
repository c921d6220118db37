package netfilter

import (
	"fmt"
	"hash/fnv"
	"net"
	"sort"

	"github.com/cnibench/cnibench/internal/policy"
)

// Felix's IPVS support (Calico v3.29.7). Felix turns it on when
// kube-proxy's kube-ipvs0 device exists (felix/dataplane/driver.go
// StartDataplaneDriver: KubeIPVSSupportEnabled; Node.KubeIPVS here).
// kube-proxy's IPVS mode binds every ClusterIP to kube-ipvs0, so a pod's
// packet to a Service is local to the node: it walks filter INPUT, and
// the IPVS-forwarded packet then filter OUTPUT, instead of FORWARD.
// Felix therefore tags such a packet in cali-INPUT with a mark naming
// the pod it came from (cali-forward-check, cali-set-endpoint-mark and
// a cali-sm-<iface> chain per endpoint) and, in cali-OUTPUT, sends a
// packet carrying that mark through the endpoint's egress policy
// (cali-forward-endpoint-mark, cali-from-endpoint-mark) as cali-FORWARD
// would have.
//
// The endpoint mark is the bits of the mark mask left after accept,
// pass, scratch0 and scratch1 (driver.go: NextBlockBitsMark of the
// AvailableMarkBitCount): 0xfff00000 of the default 0xffff0000; its
// lowest bit, 0x100000, marks a packet from no Calico endpoint.
const (
	caliEPMask    = 0xfff00000
	caliEPNonCali = 0x100000
	// KubeNodePortRanges' default (felix/config/config_params.go).
	caliNodePorts = "30000:32767"
)

// The same as match and MARK arguments: no endpoint mark, and the
// non-Calico one.
const (
	caliEPClear       = "0x0/0xfff00000"
	caliEPNonCaliMark = "0x100000/0xfff00000"
)

// calicoIPVSInput are the rules filterInputChain (felix/rules/static.go)
// puts in cali-INPUT with IPVS support, after the IP-in-IP rules and
// before the workload goto: clear the endpoint mark, let
// cali-forward-check set it for a forwarded packet, and return such a
// packet to INPUT (for IPVS) without the "to the host" rules.
func calicoIPVSInput(rs *Ruleset) {
	rs.Append("filter", "cali-INPUT", "-j MARK --set-xmark %s", caliEPClear)
	rs.Append("filter", "cali-INPUT", "-j cali-forward-check")
	rs.Append("filter", "cali-INPUT", "-m mark ! --mark %s -j RETURN", caliEPClear)
}

// calicoIPVSOutput is the rule filterOutputChain puts in cali-OUTPUT
// with IPVS support, after accepting what is already accepted: a
// packet with an endpoint mark was forwarded by IPVS and goes (goto, so
// that a RETURN leaves cali-OUTPUT too) to cali-forward-endpoint-mark.
func calicoIPVSOutput(rs *Ruleset) {
	rs.Append("filter", "cali-OUTPUT", "-m mark ! --mark %s -g cali-forward-endpoint-mark", caliEPClear)
}

// calicoIPVSPostrouting is the rule StaticManglePostroutingChain puts
// in mangle cali-POSTROUTING with IPVS support, after the return of
// what filter FORWARD marked: IPVS-forwarded traffic meets no host
// endpoint policy either.
func calicoIPVSPostrouting(rs *Ruleset) {
	rs.Append("mangle", "cali-POSTROUTING", "-m mark ! --mark %s -j RETURN", caliEPClear)
}

// calicoIPVSChains writes the filter chains IPVS support adds:
// StaticFilterInputForwardCheckChain, StaticFilterOutputForwardEndpointMarkChain
// (felix/rules/static.go), EndpointMarkDispatchChains (felix/rules/dispatch.go
// endpointMarkDispatchChains) and, per endpoint, endpointSetMarkChain
// (felix/rules/endpoints.go WorkloadEndpointToIptablesChains).
//
// Felix's ipset this-host (cali40this-host: the addresses of the host's
// interfaces but the workloads' and kube-ipvs0, felix/dataplane/linux
// hostip_mgr.go) is written as the node's underlay address, nodeIP/32:
// its other members (127.0.0.1, tunl0's address) are not known here, so
// a pod's packet to one of them is taken for a forwarded one; a packet
// to a Service or to the node's address walks Felix's rules.
func calicoIPVSChains(rs *Ruleset, ifaces []string, nodeIP net.IP) error {
	if nodeIP == nil || nodeIP.To4() == nil {
		return fmt.Errorf("calico with kube-proxy's IPVS mode needs the node's IPv4 address (Felix's this-host set)")
	}
	host := nodeIP.To4().String() + "/32"
	marks, err := calicoEndpointMarks(ifaces)
	if err != nil {
		return err
	}
	rs.Chain("filter", "cali-forward-check", "cali-forward-endpoint-mark")

	// StaticFilterInputForwardCheckChain: an established connection is
	// not forwarded (a reply to a host process); a NodePort on the host,
	// or any address but the host's (a Service IP), is.
	fc := "cali-forward-check"
	rs.Append("filter", fc, "-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN")
	for _, proto := range []string{"tcp", "udp"} {
		rs.Append("filter", fc, "-d %s -p %s %s -m multiport --dports %s -g cali-set-endpoint-mark",
			host, proto, comment("To kubernetes NodePort service"), caliNodePorts)
	}
	rs.Append("filter", fc, "! -d %s %s -j cali-set-endpoint-mark", host, comment("To kubernetes service"))

	// StaticFilterOutputForwardEndpointMarkChain: the source endpoint's
	// egress policy by its mark (not for a packet from no Calico
	// endpoint), the destination's ingress policy by interface, then
	// clear the endpoint mark (an encapsulated copy would inherit it).
	fm := "cali-forward-endpoint-mark"
	rs.Append("filter", fm, "-m mark ! --mark %s -j cali-from-endpoint-mark", caliEPNonCaliMark)
	rs.Append("filter", fm, "-o cali+ -j cali-to-wl-dispatch")
	rs.Append("filter", fm, "-j cali-to-hep-forward")
	rs.Append("filter", fm, "-j MARK --set-xmark %s", caliEPClear)
	rs.Append("filter", fm, "%s -m mark --mark %s -j ACCEPT", comment("Policy explicitly accepted packet."), caliAccept)

	if err := calicoEndpointMarkDispatch(rs, ifaces, marks); err != nil {
		return err
	}
	for _, i := range ifaces {
		rs.Chain("filter", "cali-sm-"+i)
		rs.Append("filter", "cali-sm-"+i, "-j MARK --set-xmark %#x/%#x", marks[i], caliEPMask)
	}
	return nil
}

// calicoEndpointMarkDispatch writes endpointMarkDispatchChains for the
// workloads (no host endpoints): cali-set-endpoint-mark, Felix's
// shallow prefix tree of the interface names (buildSingleDispatchChains,
// as the workload dispatch chains; a child chain has no end rules here,
// so an unknown name in it falls back to the caller), the drop of an
// unknown cali+ device, and the non-Calico mark for the rest; and
// cali-from-endpoint-mark, one goto per endpoint in name order (no
// tree) to its egress chain cali-fw-<iface>, and the drop of the rest.
func calicoEndpointMarkDispatch(rs *Ruleset, ifaces []string, marks map[string]uint32) error {
	const set, from = "cali-set-endpoint-mark", "cali-from-endpoint-mark"
	common, prefixes, bins, err := policy.PrefixTree(ifaces) // the workload dispatch chains' tree
	if err != nil {
		return err
	}
	var children []string
	for _, p := range prefixes {
		if len(bins[p]) > 1 {
			children = append(children, set+"-"+p[len(common):])
		}
	}
	rs.Chain("filter", children...)
	rs.Chain("filter", set, from)
	for _, p := range prefixes {
		if len(bins[p]) == 1 {
			rs.Append("filter", set, "-i %s -g cali-sm-%s", bins[p][0], bins[p][0])
			continue
		}
		child := set + "-" + p[len(common):]
		rs.Append("filter", set, "-i %s+ -g %s", p, child)
		for _, i := range bins[p] {
			rs.Append("filter", child, "-i %s -g cali-sm-%s", i, i)
		}
	}
	rs.Append("filter", set, "-i cali+ %s -j DROP", comment("Unknown endpoint"))
	rs.Append("filter", set, "%s -j MARK --set-xmark %s", comment("Non-Cali endpoint mark"), caliEPNonCaliMark)

	sorted := append([]string(nil), ifaces...)
	sort.Strings(sorted)
	for _, i := range sorted {
		rs.Append("filter", from, "-m mark --mark %#x/%#x -g cali-fw-%s", marks[i], caliEPMask, i)
	}
	rs.Append("filter", from, "%s -j DROP", comment("Unknown interface"))
	return nil
}

// calicoEndpointMarks allocates each endpoint's mark as Felix's
// endpoint mark mapper does (felix/rules/epmark.go GetEndpointMark):
// the position is the FNV-1 32-bit hash of the interface name modulo
// the 4096 positions of the 12 mask bits, the next free one on a
// collision, never 0 nor 1 (the non-Calico mark's); the mark is the
// position spread over the mask's bits (felix/markbits MapNumberToMark;
// the mask is contiguous, so a shift). Felix allocates in the order it
// learns of the endpoints; here in name order, which differs only when
// two names collide.
func calicoEndpointMarks(ifaces []string) (map[string]uint32, error) {
	const positions = 1 << 12
	sorted := append([]string(nil), ifaces...)
	sort.Strings(sorted)
	used := map[uint32]bool{caliEPNonCali >> 20: true}
	marks := map[string]uint32{}
	for _, name := range sorted {
		h := fnv.New32()
		h.Write([]byte(name))
		total := h.Sum32()
		found := false
		for i := uint32(0); i < positions; i++ {
			// Felix adds in int; a uint32 wraps at 2^32, a multiple
			// of positions, so the position is the same.
			pos := (total + i) % positions
			if pos != 0 && !used[pos] {
				used[pos], marks[name], found = true, pos<<20, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("calico ipvs: no endpoint mark left for %s", name)
		}
	}
	return marks, nil
}
