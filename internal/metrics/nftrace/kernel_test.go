package nftrace

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

func mustRun(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

// nftNamespaces skips without root, nft or nf_tables and returns
// throw-away network namespaces, one per name, removed when the test
// ends; nft failing in them after that fails the test.
func nftNamespaces(t *testing.T, names ...string) []string {
	t.Helper()
	kerneltest.RequireRoot(t)
	run := kerneltest.RunID()
	j := kerneltest.Journal(t, run)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = kerneltest.Netns(t, j, run, n)
	}
	kerneltest.RequireNfTables(t, out[0])
	return out
}

// inNetns starts commands in namespace ns (a Starter).
func inNetns(ns string) Starter {
	return func(c *exec.Cmd) error { return netns.Start(ns, nil, c) }
}

// send sends one UDP datagram from namespace ns to addr.
func send(t *testing.T, ns, addr string) {
	t.Helper()
	err := netns.Do(ns, func() error {
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("x"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKernelTraceCountsMarkedPacketsOnly: in a namespace with a rule per
// destination, the trace of the pair 10.9.0.1-10.9.0.2 counts the chain
// and rule its packets met and not the chain that only the traffic to
// another address jumped to; Stop removes the table, and Sweep removes a
// table whose owner is gone but keeps a live one.
func TestKernelTraceCountsMarkedPacketsOnly(t *testing.T) {
	ns := nftNamespaces(t, "a", "b")
	a, b := ns[0], ns[1]
	mustRun(t, "ip", "-n", a, "link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", b)
	mustRun(t, "ip", "-n", a, "addr", "add", "10.9.0.1/24", "dev", "v0")
	mustRun(t, "ip", "-n", b, "addr", "add", "10.9.0.2/24", "dev", "v1")
	mustRun(t, "ip", "-n", b, "addr", "add", "10.9.0.3/24", "dev", "v1")
	mustRun(t, "ip", "-n", a, "link", "set", "v0", "up")
	mustRun(t, "ip", "-n", b, "link", "set", "v1", "up")
	mustRun(t, "ip", "netns", "exec", a, "nft", "add table ip t; add chain ip t out { type filter hook output priority 0; }; "+
		"add chain ip t other; add rule ip t out ip daddr 10.9.0.2 counter; add rule ip t out ip daddr 10.9.0.3 counter jump other; "+
		"add rule ip t other counter")
	start := inNetns(a)
	tr, err := Start([]netip.Addr{netip.MustParseAddr("10.9.0.1"), netip.MustParseAddr("10.9.0.2")}, start)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		send(t, a, "10.9.0.2:9")
		send(t, a, "10.9.0.3:9")
	}
	p, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// Chain t/out and its first rule; the datagrams to 10.9.0.3 were not
	// marked, so t/other and the jump are not on the path.
	if p.Chains != 1 || p.Rules != 1 || p.Packets < 3 {
		t.Errorf("path %+v, want 1 chain, 1 rule, 3 or more packets marked", p)
	}
	out, _ := exec.Command("ip", "netns", "exec", a, "nft", "list", "tables").CombinedOutput()
	if strings.Contains(string(out), TablePrefix) {
		t.Errorf("trace table left after Stop:\n%s", out)
	}

	// A table of a dead owner is swept; this process's is kept.
	own, _ := OwnTable()
	for _, tb := range []string{TablePrefix + "1_1", own} {
		mustRun(t, "ip", "netns", "exec", a, "nft", "add", "table", "inet", tb)
	}
	gone, err := Sweep(start)
	if err != nil || len(gone) != 1 || gone[0] != TablePrefix+"1_1" {
		t.Errorf("sweep deleted %v (%v), want the dead owner's table only", gone, err)
	}
	out, _ = exec.Command("ip", "netns", "exec", a, "nft", "list", "tables").CombinedOutput()
	if !strings.Contains(string(out), own) || strings.Contains(string(out), TablePrefix+"1_1") {
		t.Errorf("after the sweep:\n%s", out)
	}
}

// TestKernelLegacyTablesSeen: Start does not trace a namespace where
// iptables-legacy made its filter table (a trace cannot see its rules)
// and names the table; in a fresh namespace it traces.
func TestKernelLegacyTablesSeen(t *testing.T) {
	if _, err := exec.LookPath("iptables-legacy"); err != nil {
		t.Skip("skipped: iptables-legacy is not installed (apt-get install iptables)")
	}
	ns := nftNamespaces(t, "f", "l")
	fresh, legacy := ns[0], ns[1]
	if out, err := exec.Command("ip", "netns", "exec", legacy, "iptables-legacy", "-t", "filter", "-A", "INPUT", "-j", "ACCEPT").CombinedOutput(); err != nil {
		// The kernel loads iptable_filter (and ip_tables) on the table's
		// first use where it can; the full-kernel VM loads it at boot.
		if os.Getenv("CNIBENCH_IN_VM") == "" && !kerneltest.HasModule("iptable_filter", "CONFIG_IP_NF_FILTER") {
			t.Skipf("skipped: the kernel has no x_tables filter table (iptable_filter): %v: %s", err, out)
		}
		t.Fatalf("iptable_filter is there, but iptables-legacy -A INPUT: %v: %s", err, out)
	}
	addrs := []netip.Addr{netip.MustParseAddr("10.9.0.1")}
	tr, err := Start(addrs, inNetns(fresh))
	if err != nil {
		t.Fatalf("a fresh namespace: %v", err)
	}
	if _, err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	if tr, err := Start(addrs, inNetns(legacy)); err == nil || !strings.Contains(err.Error(), "ip filter") {
		if err == nil {
			_, _ = tr.Stop()
		}
		t.Errorf("a namespace with a legacy filter table: %v", err)
	}
	if out, _ := exec.Command("ip", "netns", "exec", legacy, "nft", "list", "tables").CombinedOutput(); strings.Contains(string(out), TablePrefix) {
		t.Errorf("a trace table was made where no trace runs:\n%s", out)
	}
}

// TestKernelTraceWaitsForMonitor: nft joins the trace group only after
// reading the ruleset, which grows with it (200,000 rules took 10 s
// here); a packet marked before then is lost. With 60,000 rules in a
// chain no hook reaches, the packets sent as soon as Start returns are
// all reported.
func TestKernelTraceWaitsForMonitor(t *testing.T) {
	a := nftNamespaces(t, "w")[0]
	mustRun(t, "ip", "-n", a, "link", "set", "lo", "up")
	var rules strings.Builder
	rules.WriteString("add table ip big\nadd chain ip big unhooked\n")
	for i := range 60000 {
		fmt.Fprintf(&rules, "add rule ip big unhooked ip daddr 10.%d.%d.%d counter\n", i>>16, i>>8&255, i&255)
	}
	load := exec.Command("ip", "netns", "exec", a, "nft", "-f", "-")
	load.Stdin = strings.NewReader(rules.String())
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("nft -f of 60,000 rules: %v: %s", err, out)
	}
	tr, err := Start([]netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}, inNetns(a))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		send(t, a, "127.0.0.2:9")
	}
	p, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if p.Packets < 3 {
		t.Errorf("%d of the 3 packets sent after Start were reported: the monitor had not subscribed", p.Packets)
	}
}
