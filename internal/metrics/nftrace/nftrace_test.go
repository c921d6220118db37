package nftrace

import (
	"net/netip"
	"os"
	"strings"
	"testing"
)

// monitor-trace.txt is `nft -a monitor trace` on a node of the test
// cluster (kube-proxy's iptables-nft rules) while a TCP connection from
// the node to the other node's kubelet was marked: 8 packets, SYN to FIN.
func TestCounterOnRealTrace(t *testing.T) {
	f, err := os.Open("testdata/monitor-trace.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCounter("cnibench_trace_1_2")
	if err := c.Read(f); err != nil {
		t.Fatal(err)
	}
	// Rules (by handle): filter INPUT 5, 14; filter OUTPUT 3, 17, 22; nat
	// OUTPUT 5, POSTROUTING 10, KUBE-POSTROUTING 139. Chains: the five
	// chains with events, and the chains jumped to without a matching
	// rule in them: filter KUBE-NODEPORTS, KUBE-FIREWALL,
	// KUBE-PROXY-FIREWALL, KUBE-SERVICES and nat KUBE-SERVICES.
	want := Path{Chains: 10, Rules: 8, Packets: 8}
	if got := c.Path(); got != want {
		t.Errorf("path %+v, want %+v", got, want)
	}
	for _, k := range []string{"ip nat KUBE-SERVICES", "ip filter KUBE-SERVICES", "ip filter KUBE-FIREWALL"} {
		if !c.chains[k] {
			t.Errorf("chain %q (a jump target) not counted: %v", k, c.chains)
		}
	}
}

func TestCounterLines(t *testing.T) {
	c := NewCounter("cnibench_trace_9_9")
	for _, l := range []string{
		`trace id 1 inet cnibench_trace_9_9 pre packet: iif "veth1" ip saddr 10.0.0.1`,
		`trace id 1 inet cnibench_trace_9_9 pre rule ip saddr @a4 ip daddr @a4 meta nftrace set 1 # handle 7 (verdict continue)`,
		`trace id 1 ip filter FORWARD packet: iif "veth1" oif "cni0" ip saddr 10.0.0.1`,
		`trace id 1 ip filter FORWARD rule counter packets 3 bytes 180 jump FLANNEL-FWD # handle 9 (verdict jump FLANNEL-FWD)`,
		`trace id 1 ip filter FLANNEL-FWD rule ip saddr 10.244.0.0/16 counter packets 3 bytes 180 accept # handle 12 (verdict accept)`,
		`trace id 2 ip filter FORWARD rule counter packets 4 bytes 240 jump FLANNEL-FWD # handle 9 (verdict jump FLANNEL-FWD)`,
		`trace id 3 ip6 filter FORWARD verdict continue`,
		`trace id 4 ip raw PREROUTING rule counter goto CILIUM_PRE_raw (verdict goto CILIUM_PRE_raw)`,
		`trace id 5 ip nat KUBE-SERVICES unknown rule handle 31 (verdict jump KUBE-SVC-X)`,
		`trace id 5 ip nat KUBE-SERVICES unknown rule handle`,
		`something else`, `trace id`, `trace id 5 ip filter X unknown-kind`, ``,
		`# ERROR: We lost some netlink events!`, `# ERROR: We lost some netlink events!`, `# ERROR: Bad file descriptor`,
	} {
		c.Line(l)
	}
	// Chains: filter FORWARD, FLANNEL-FWD; ip6 filter FORWARD; raw
	// PREROUTING, CILIUM_PRE_raw; nat KUBE-SERVICES, KUBE-SVC-X (a rule
	// added after the monitor started: no text, its handle and verdict).
	// Rules: handles 9, 12, 31, and the raw rule without a handle once (by
	// its text). Two overflows of nft's socket noted.
	want := Path{Chains: 7, Rules: 4, Packets: 1, Lost: 2}
	if got := c.Path(); got != want {
		t.Errorf("path %+v, want %+v (chains %v, rules %v)", got, want, c.chains, c.rules)
	}
}

// monitor-trace-unknown.txt: the trace table was made after the monitor
// started, so its rules come as "unknown rule handle N": 3 datagrams and
// their 3 ICMP errors marked; the other table's chain and rule counted.
func TestCounterUnknownRules(t *testing.T) {
	b, err := os.ReadFile("testdata/monitor-trace-unknown.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCounter("cnibench_trace_24085_1390354")
	if err := c.Read(strings.NewReader(string(b))); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Path(), (Path{Chains: 1, Rules: 1, Packets: 6}); got != want {
		t.Errorf("path %+v, want %+v", got, want)
	}
}

func TestScript(t *testing.T) {
	s := Script("cnibench_trace_5_6", []netip.Addr{
		netip.MustParseAddr("10.244.1.2"), netip.MustParseAddr("::ffff:10.96.0.10"), netip.MustParseAddr("fd00::2"),
	})
	for _, want := range []string{
		"add table inet cnibench_trace_5_6",
		"add set inet cnibench_trace_5_6 a4 { type ipv4_addr; elements = { 10.244.1.2, 10.96.0.10 }; }",
		"add set inet cnibench_trace_5_6 a6 { type ipv6_addr; elements = { fd00::2 }; }",
		"add chain inet cnibench_trace_5_6 pre { type filter hook prerouting priority -350; policy accept; }",
		"add chain inet cnibench_trace_5_6 out { type filter hook output priority -350; policy accept; }",
		"add rule inet cnibench_trace_5_6 pre ip saddr @a4 ip daddr @a4 tcp flags & (syn | fin | rst) != 0 limit rate 500/second burst 500 packets meta nftrace set 1",
		"add rule inet cnibench_trace_5_6 out ip6 saddr @a6 ip6 daddr @a6 limit rate 50/second burst 50 packets meta nftrace set 1",
		"udp dport { 4789, 8472, 6081, 6783, 6784, 8285, 51820 }",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(Script("t", []netip.Addr{netip.MustParseAddr("10.0.0.1")}), "ip6") {
		t.Error("an IPv4-only trace has IPv6 rules")
	}
}

func TestOwnerAlive(t *testing.T) {
	own, err := OwnTable()
	if err != nil {
		t.Fatal(err)
	}
	if !ownerAlive(own) {
		t.Errorf("%s: this process taken for dead", own)
	}
	for _, dead := range []string{TablePrefix + "1_1", TablePrefix + "999999999_5"} {
		if ownerAlive(dead) {
			t.Errorf("%s taken for alive", dead)
		}
	}
	for _, foreign := range []string{TablePrefix + "x", TablePrefix + "12", TablePrefix + "-3_4"} {
		if !ownerAlive(foreign) {
			t.Errorf("%s: a name not ours would be deleted", foreign)
		}
	}
}

// FuzzCounter: any text is read without a panic, and the counts stay
// consistent with the lines read.
func FuzzCounter(f *testing.F) {
	b, err := os.ReadFile("testdata/monitor-trace.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("trace id 1 ip filter F rule x (verdict jump )\ntrace id 1 ip filter F rule # handle\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := NewCounter("cnibench_trace_1_2")
		_ = c.Read(strings.NewReader(s))
		p := c.Path()
		lines := strings.Count(s, "\n") + 1
		if p.Rules > lines || p.Packets > lines || p.Chains > 2*lines {
			t.Fatalf("%+v from %d lines", p, lines)
		}
		if p.Rules > 0 && p.Chains == 0 {
			t.Fatalf("rules without a chain: %+v", p)
		}
	})
}
