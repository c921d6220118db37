package cilium

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
)

func TestCiliumCarriesTCPAndUDP(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := New()
	kerneltest.RequireFeatures(t, d)
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	srvNode := c.Nodes()[0].Netns()
	// Across nodes, both directions, larger than the MTU.
	dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
	dptest.TCPEcho(t, clients[1], servers[1], 1<<20)
	dptest.UDPEcho(t, servers[0], clients[0], d.MTU(1500)-28)
	dptest.UDPEcho(t, clients[1], servers[1], 1000)
	// Same node.
	dptest.TCPEcho(t, servers[0], servers[1], 256<<10)
	dptest.UDPEcho(t, servers[1], servers[0], 1000)

	s, err := d.NodeStats(srvNode)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server node BPF stats: %+v", s)
	if s.Local == 0 || s.Tunnel == 0 || s.Overlay == 0 {
		t.Errorf("server node: BPF programs did not steer every path: %+v", s)
	}
}

// iptablesCount returns the packet counter of the first rule of chain
// in table, inside ns.
func iptablesCount(t *testing.T, ns, table, chain string) uint64 {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "iptables", "-w", "-t", table, "-L", chain, "-v", "-x", "-n").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -L %s in %s: %v: %s", chain, ns, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("iptables -L %s: no rule:\n%s", chain, out)
	}
	n, err := strconv.ParseUint(strings.Fields(lines[2])[0], 10, 64)
	if err != nil {
		t.Fatalf("iptables counter: %v in %q", err, lines[2])
	}
	return n
}

func iptables(t *testing.T, ns string, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "iptables", "-w"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("iptables %s in %s: %v: %s", strings.Join(args, " "), ns, err, out)
	}
}

// TestCiliumIntraNodeBypassesNetfilterAndBridge is the acceptance
// test: pod-to-pod traffic on one node is not seen by the node's
// netfilter (counters on rules that match it in raw PREROUTING and filter
// FORWARD stay still) and crosses no bridge (the node has none). A
// control packet from a pod to the node itself must move the PREROUTING
// counter, so the rule does match when netfilter is on the path.
func TestCiliumIntraNodeBypassesNetfilterAndBridge(t *testing.T) {
	kerneltest.RequireRoot(t)
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("skipped: iptables is not installed (apt-get install iptables)")
	}
	d := New()
	kerneltest.RequireFeatures(t, d)
	c := dptest.Up(t, d, 1500)
	servers, _, err := c.ScalePods(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	node := c.Nodes()[0].Netns()
	pool := "10.0.0.0/8"
	if out, err := exec.Command("ip", "netns", "exec", node, "iptables", "-w", "-t", "raw", "-L", "PREROUTING", "-n").CombinedOutput(); err != nil {
		t.Skipf("skipped: iptables does not work in a namespace here (kernel without nf_tables/ip_tables?): %v: %s", err, strings.TrimSpace(string(out)))
	}
	iptables(t, node, "-t", "raw", "-I", "PREROUTING", "-s", pool)
	iptables(t, node, "-t", "filter", "-I", "FORWARD", "-s", pool)

	before, err := d.NodeStats(node)
	if err != nil {
		t.Fatal(err)
	}
	dptest.TCPEcho(t, servers[0], servers[1], 1<<20)
	dptest.UDPEcho(t, servers[1], servers[0], 1000)
	after, err := d.NodeStats(node)
	if err != nil {
		t.Fatal(err)
	}
	if after.Local-before.Local < 20 {
		t.Errorf("only %d packets were redirected by from_container; traffic did not take the BPF path", after.Local-before.Local)
	}
	if n := iptablesCount(t, node, "raw", "PREROUTING"); n != 0 {
		t.Errorf("raw PREROUTING saw %d pod packets; intra-node traffic traversed netfilter", n)
	}
	if n := iptablesCount(t, node, "filter", "FORWARD"); n != 0 {
		t.Errorf("FORWARD saw %d pod packets; intra-node traffic was forwarded by the node's stack", n)
	}

	// Control: pod -> node router address goes through the stack.
	// A refused TCP connection is enough: the SYN enters the node's stack.
	router := routerIP(datapath.Node{Index: 0}).String()
	_ = netns.Do(servers[0].Netns(), func() error {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(router, "1"), 2*time.Second)
		if err == nil {
			conn.Close()
		}
		return nil
	})
	if n := iptablesCount(t, node, "raw", "PREROUTING"); n == 0 {
		t.Errorf("control: a pod's ping to the node did not move the PREROUTING counter; the check above proves nothing")
	}

	h, err := netns.Handle(node)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	links, err := netns.Dump(h.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Type() == "bridge" {
			t.Errorf("node has bridge %s", l.Attrs().Name)
		}
		if l.Attrs().MasterIndex != 0 {
			t.Errorf("%s is enslaved to ifindex %d", l.Attrs().Name, l.Attrs().MasterIndex)
		}
	}
}

// TestCiliumServicesPerPacket: with a ClusterIP in the nodes' Service
// tables, TCP and UDP to it reach the server pod across nodes and on one
// node, translated per packet by from_container and translated back on
// the way into the client (a connected UDP socket accepts only replies
// from the ClusterIP); the counters show both directions; with the
// tables emptied the ClusterIP leads nowhere.
func TestCiliumServicesPerPacket(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := New()
	kerneltest.RequireFeatures(t, d)
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	vip := net.IPv4(10, 96, 100, 9).To4()
	be := servers[0].IP()
	svcs := []netfilter.Service{
		{Namespace: "t", Name: "echo", Protocol: "tcp", ClusterIP: vip, Port: 7000, Endpoints: []netfilter.Endpoint{{IP: be, Port: 7000}}},
		{Namespace: "t", Name: "echo", Protocol: "udp", ClusterIP: vip, Port: 7001, Endpoints: []netfilter.Endpoint{{IP: be, Port: 7001}}},
	}
	if err := d.SetServices(svcs); err != nil {
		t.Fatal(err)
	}
	srvNode, cliNode := c.Nodes()[0].Netns(), c.Nodes()[1].Netns()
	dptest.TCPEchoVia(t, servers[0], clients[0], vip, 1<<20)
	dptest.UDPEchoVia(t, servers[0], clients[0], vip, 1000)
	dptest.TCPEchoVia(t, servers[0], servers[1], vip, 256<<10)
	dptest.UDPEchoVia(t, servers[0], servers[1], vip, 1000)
	for _, ns := range []string{srvNode, cliNode} {
		s, err := d.NodeStats(ns)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", ns, s)
		if s.LB == 0 || s.RevNAT == 0 {
			t.Errorf("%s: %+v: want packets translated both ways", ns, s)
		}
	}
	if n := flows(t, d, cliNode); n == 0 {
		t.Error("client node: no translated flow in its tables")
	}
	if err := d.SetServices(nil); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{srvNode, cliNode} {
		if n := flows(t, d, ns); n != 0 {
			t.Errorf("%s: %d flow entries left after the Services went", ns, n)
		}
	}
	err := netns.Do(clients[0].Netns(), func() error {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(vip.String(), "7000"), time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	})
	if err == nil {
		t.Error("with the Service tables emptied the ClusterIP still reaches the server")
	}
}

// flows counts the entries of a node's flow tables (ct4 and revnat4).
func flows(t *testing.T, d *Datapath, ns string) int {
	t.Helper()
	st := d.state(ns)
	n := 0
	for _, m := range []*ebpf.Map{st.objs.Ct4, st.objs.Revnat4} {
		var k bpfCt4Key
		v := make([]byte, m.ValueSize())
		it := m.Iterate()
		for it.Next(&k, &v) {
			n++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
