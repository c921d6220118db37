// Package nftrace finds the netfilter path of the measured packets alone:
// it marks the packets between the trial's addresses for nf_tables
// tracing (`meta nftrace set 1` in a table of its own, at a hook priority
// before raw and conntrack) and reads the kernel's trace events (`nft -a
// monitor trace`), which name every base chain a marked packet entered,
// every rule it matched (by handle) and every chain it jumped to.
//
// Why beside the counter collectors (packages iptables and nftables):
// those count the chains and rules whose counters moved over the window,
// whatever moved them. On an emulated node nothing else crosses netfilter,
// but on a real cluster's node the kubelet, the API server's exec streams
// and the CNI daemons do, and their INPUT/OUTPUT chains land in the count
// (on the test cluster, about half of an intra-node path). The trace sees
// only the packets it marked.
//
// Design notes:
//
//   - Tracing every packet of a 10 Gbit/s flow would cost the flow and
//     flood the monitor, so the marking is sampled: TCP SYN, FIN and RST
//     between the addresses up to ConnRate a second (a connection's first
//     packet is the only one the nat chains see; the bound keeps an HTTP
//     load's thousands of connections from flooding the monitor) and
//     otherwise at most Rate packets a second per rule, each with a burst
//     of as many, so the first packets of a UDP flow are traced too.
//   - Tunnel encapsulation scrubs the mark (skb_scrub_packet), so the outer
//     packets of the tunnels datapaths use (VXLAN, Geneve, Weave, Flannel's
//     UDP, WireGuard, IP-in-IP, GRE) are marked by their ports and
//     protocols, sampled the same way: other pods' tunnel traffic takes
//     the same outer path, so it adds no chain the measured flow does not
//     also meet.
//   - The table is named TablePrefix plus the PID and start time of the
//     process that owns it, so a sweep can delete the tables of processes
//     that died without removing theirs (Sweep).
//   - Only rules that matched appear in a trace (as with counters); a
//     chain is counted when a marked packet entered it, matched a rule in
//     it, or jumped to it.
package nftrace

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// TablePrefix starts the name of every trace table (family inet).
const TablePrefix = "cnibench_trace_"

// Rate is the sampled packets per second of each marking rule; ConnRate
// that of the rules marking TCP's SYN, FIN and RST.
const (
	Rate     = 50
	ConnRate = 500
)

// TunnelPorts are the UDP ports of the encapsulations the datapaths use:
// VXLAN (IANA, Linux's default), Geneve, Weave's sleeve and fast datapath,
// Flannel's UDP backend, WireGuard.
var TunnelPorts = []int{4789, 8472, 6081, 6783, 6784, 8285, 51820}

// TunnelProtocols are the IP protocols of IP-in-IP, IPv6-in-IPv4 and GRE.
var TunnelProtocols = []int{4, 41, 47}

// Script is the nft command that creates table and marks the packets
// between addrs: one argument for `nft`, which reads the commands from its
// arguments (no shell sees it; the addresses are formatted from parsed
// values, never copied from input).
func Script(table string, addrs []netip.Addr) string {
	var v4, v6 []string
	for _, a := range addrs {
		switch {
		case a.Is4() || a.Is4In6():
			v4 = append(v4, a.Unmap().String())
		case a.Is6():
			v6 = append(v6, a.String())
		}
	}
	sample := fmt.Sprintf("limit rate %d/second burst %d packets meta nftrace set 1", Rate, Rate)
	conns := fmt.Sprintf("limit rate %d/second burst %d packets meta nftrace set 1", ConnRate, ConnRate)
	var b strings.Builder
	fmt.Fprintf(&b, "add table inet %s; ", table)
	for _, fam := range []struct {
		set, typ, match string
		addrs           []string
	}{{"a4", "ipv4_addr", "ip", v4}, {"a6", "ipv6_addr", "ip6", v6}} {
		if len(fam.addrs) > 0 {
			fmt.Fprintf(&b, "add set inet %s %s { type %s; elements = { %s }; }; ", table, fam.set, fam.typ, strings.Join(fam.addrs, ", "))
		}
	}
	for _, ch := range []struct{ name, hook string }{{"pre", "prerouting"}, {"out", "output"}} {
		fmt.Fprintf(&b, "add chain inet %s %s { type filter hook %s priority -350; policy accept; }; ", table, ch.name, ch.hook)
		for _, fam := range []struct {
			set, match string
			addrs      []string
		}{{"a4", "ip", v4}, {"a6", "ip6", v6}} {
			if len(fam.addrs) == 0 {
				continue
			}
			pair := fmt.Sprintf("%s saddr @%s %s daddr @%s", fam.match, fam.set, fam.match, fam.set)
			fmt.Fprintf(&b, "add rule inet %s %s %s tcp flags & (syn | fin | rst) != 0 %s; ", table, ch.name, pair, conns)
			fmt.Fprintf(&b, "add rule inet %s %s %s %s; ", table, ch.name, pair, sample)
		}
		fmt.Fprintf(&b, "add rule inet %s %s udp dport { %s } %s; ", table, ch.name, joinInts(TunnelPorts), sample)
		fmt.Fprintf(&b, "add rule inet %s %s meta nfproto ipv4 ip protocol { %s } %s; ", table, ch.name, joinInts(TunnelProtocols), sample)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// Path is what the marked packets traversed on one node.
type Path struct {
	// Chains and Rules outside the trace table: entered, jumped to or
	// matched in (chains), matched (rules).
	Chains int `json:"chains"`
	Rules  int `json:"rules"`
	// Packets is how many packets the trace table marked.
	Packets int `json:"packets"`
	// Lost counts nft's "lost some netlink events" notes: its socket
	// overflowed (ENOBUFS) and a rule seen only in the lost events is
	// missing from the counts.
	Lost int `json:"lost"`
}

// Metric names.
const (
	MetricChains  = "trace_path_chains_count"
	MetricRules   = "trace_path_rules_count"
	MetricPackets = "trace_packets_count"
	MetricLost    = "trace_lost_events_count"
)

// Metrics returns a path as metrics.
func (p Path) Metrics() map[string]float64 {
	return map[string]float64{MetricChains: float64(p.Chains), MetricRules: float64(p.Rules), MetricPackets: float64(p.Packets),
		MetricLost: float64(p.Lost)}
}

// Counter reads trace events line by line.
type Counter struct {
	table   string // the trace table, left out of the path
	chains  map[string]bool
	rules   map[string]bool
	packets int
	lost    int
}

// NewCounter counts the events of the trace table named table.
func NewCounter(table string) *Counter {
	return &Counter{table: table, chains: map[string]bool{}, rules: map[string]bool{}}
}

// Line reads one line of `nft -a monitor trace`:
//
//	trace id ID FAMILY TABLE CHAIN packet: ...
//	trace id ID FAMILY TABLE CHAIN rule EXPR... # handle N (verdict V [TARGET])
//	trace id ID FAMILY TABLE CHAIN unknown rule handle N (verdict V [TARGET])
//	trace id ID FAMILY TABLE CHAIN policy V
//	trace id ID FAMILY TABLE CHAIN verdict V
//
// The monitor renders rules from the ruleset it read when it started; a
// rule added later (the trace table's own, a kube-proxy resync's) comes as
// "unknown rule handle N", with its verdict. Anything else is ignored: an
// unknown line must not stop a count. nft notes an overflow of its
// socket as "# ERROR: We lost some netlink events!" (src/mnl.c).
func (c *Counter) Line(line string) {
	if strings.HasPrefix(line, "# ERROR: We lost some netlink events") {
		c.lost++
		return
	}
	f := strings.Fields(line)
	if len(f) < 7 || f[0] != "trace" || f[1] != "id" {
		return
	}
	fam, table, chain, kind := f[3], f[4], f[5], f[6]
	if fam == "inet" && table == c.table {
		// The packet's first event is in the chain that marked it.
		if kind == "packet:" {
			c.packets++
		}
		return
	}
	switch kind {
	case "packet:", "policy", "verdict":
	case "rule":
		c.rule(fam+" "+table+" "+chain, ruleID(line), line)
	case "unknown":
		if len(f) < 10 || f[7] != "rule" || f[8] != "handle" {
			return
		}
		c.rule(fam+" "+table+" "+chain, f[9], line)
	default:
		return
	}
	c.chains[fam+" "+table+" "+chain] = true
}

func (c *Counter) rule(chain, id, line string) {
	c.rules[chain+" #"+id] = true
	if target := jumpTarget(line); target != "" {
		c.chains[chain[:strings.LastIndex(chain, " ")]+" "+target] = true
	}
}

// ruleID is the rule's handle, or its text where nft printed none.
func ruleID(line string) string {
	i := strings.LastIndex(line, "# handle ")
	if i < 0 {
		if j := strings.LastIndex(line, " (verdict "); j >= 0 {
			line = line[:j]
		}
		return line[strings.Index(line, " rule ")+1:]
	}
	h := strings.Fields(line[i+len("# handle "):])
	if len(h) == 0 {
		return line[i:]
	}
	return h[0]
}

// jumpTarget is the chain a rule's verdict jumped or went to, if any.
func jumpTarget(line string) string {
	i := strings.LastIndex(line, "(verdict ")
	if i < 0 {
		return ""
	}
	v := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line[i+len("(verdict "):]), ")"))
	if len(v) == 2 && (v[0] == "jump" || v[0] == "goto") {
		return v[1]
	}
	return ""
}

// Path is what the lines read so far traversed.
func (c *Counter) Path() Path {
	return Path{Chains: len(c.chains), Rules: len(c.rules), Packets: c.packets, Lost: c.lost}
}

// Read counts every line of r.
func (c *Counter) Read(r io.Reader) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		c.Line(s.Text())
	}
	if err := s.Err(); err != nil {
		// Keep draining: a writer blocked on a full pipe would stall
		// the monitor, and the kernel would drop its events.
		_, _ = io.Copy(io.Discard, r)
		return fmt.Errorf("read trace events: %w", err)
	}
	return nil
}
