package netfilter_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

func requireIptables(t *testing.T) {
	t.Helper()
	kerneltest.RequireRoot(t)
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// scratch makes a journaled throw-away namespace "cnb-<run>-<name>".
func scratch(t *testing.T, j *journal.Journal, run, name string) string {
	t.Helper()
	return kerneltest.Netns(t, j, run, name)
}

func mustRun(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

func cidr(s string) *net.IPNet { _, n, _ := net.ParseCIDR(s); return n }

// Every CNI's rule set, and kube-proxy's with a few hundred Services,
// installs in a fresh node namespace: iptables then holds every chain
// the rule set declares and at least its rules.
func TestInstallEveryCNI(t *testing.T) {
	requireIptables(t)
	run := kerneltest.RunID()
	j := kerneltest.Journal(t, run)
	n := netfilter.Node{PodCIDR: cidr("10.244.1.0/24"), ClusterCIDR: cidr("10.244.0.0/16"), NodeIP: net.ParseIP("198.18.0.2"),
		Pods: []netfilter.Pod{{Iface: "cali0a", IP: net.ParseIP("10.244.1.2")}}}
	fill, err := netfilter.Fillers(200, 3, cidr("10.96.0.0/12"), cidr("10.250.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := netfilter.KubeProxy(n.ClusterCIDR, fill)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range append(netfilter.Names(), "kube-proxy") {
		rs := kp
		if name != "kube-proxy" {
			if rs, err = netfilter.Generate(name, n); err != nil {
				t.Fatal(err)
			}
		}
		ns := scratch(t, j, run, fmt.Sprintf("n%d", i))
		r := netfilter.InNetns(ns)
		ctx := context.Background()
		if err := netfilter.Test(ctx, r, rs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := netfilter.Apply(ctx, r, rs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		saved, err := netfilter.Save(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rs.Chains() {
			if _, ok := saved.Chains[c]; !ok {
				t.Errorf("%s: chain %s not installed", name, c)
			}
		}
		chains, rules := rs.Count()
		if len(saved.Rules) < rules {
			t.Errorf("%s: iptables holds %d rules, the rule set has %d", name, len(saved.Rules), rules)
		}
		t.Logf("%s: %d chains, %d rules installed", name, chains, rules)
	}
}

// server accepts TCP connections in a namespace and reports each
// client's address.
func server(t *testing.T, ns, addr string) <-chan string {
	t.Helper()
	var ln net.Listener
	if err := netns.Do(ns, func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatal(err)
	}
	peers := make(chan string, 16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return peers
}

// peer is the address the server accepted a connection from; a dial
// that went through but never reached the server fails the test after
// 30 s instead of hanging it until go test's timeout kills everything.
func peer(t *testing.T, peers <-chan string) string {
	t.Helper()
	select {
	case p := <-peers:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("the client connected, but the server accepted nothing in 30 s")
		return ""
	}
}

func dial(ns, addr string) error {
	return netns.Do(ns, func() error {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return err
		}
		// Wait for the server to close: the connection was accepted.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = c.Read(make([]byte, 1))
		return c.Close()
	})
}

// proxyMode installs kube-proxy's rules for services on a node and
// reads the chains whose counters a connection moved.
type proxyMode struct {
	name    string
	install func(t *testing.T, ns string, r netfilter.Runner, svcs []netfilter.Service)
	// read returns an opaque snapshot; moved compares two.
	read  func(t *testing.T, r netfilter.Runner) any
	moved func(before, after any) []string
	// chains of a Service and of one of its endpoints in moved's names.
	svcChain, epChain func(s netfilter.Service, e netfilter.Endpoint) string
	fillerChain       func(s netfilter.Service) string
}

// saveIptables and iptablesMoved read the chains a connection moved in
// iptables (the iptables and IPVS modes).
func saveIptables(t *testing.T, r netfilter.Runner) any {
	rs, err := netfilter.Save(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func iptablesMoved(b, a any) []string {
	return netfilter.Traversed(b.(*iptables.Ruleset), a.(*iptables.Ruleset)).Chains
}

var proxyModes = []proxyMode{
	{
		name: "iptables",
		install: func(t *testing.T, _ string, r netfilter.Runner, svcs []netfilter.Service) {
			rs, err := netfilter.KubeProxy(cidr("10.244.0.0/16"), svcs)
			if err != nil {
				t.Fatal(err)
			}
			if err := netfilter.Apply(context.Background(), r, rs); err != nil {
				t.Fatal(err)
			}
		},
		read:        saveIptables,
		moved:       iptablesMoved,
		svcChain:    func(s netfilter.Service, _ netfilter.Endpoint) string { return "nat/" + s.Chain() },
		epChain:     func(s netfilter.Service, e netfilter.Endpoint) string { return "nat/" + s.EndpointChain(e) },
		fillerChain: func(s netfilter.Service) string { return "nat/" + s.Chain() },
	},
	{
		name: "nftables",
		install: func(t *testing.T, _ string, r netfilter.Runner, svcs []netfilter.Service) {
			if _, err := exec.LookPath("nft"); err != nil {
				t.Skip("skipped: nft not installed (apt-get install nftables)")
			}
			script, err := netfilter.KubeProxyNFT(cidr("10.244.0.0/16"), cidr("10.96.0.0/12"), svcs, true, net.ParseIP("198.18.0.2"))
			if err != nil {
				t.Fatal(err)
			}
			if err := netfilter.ApplyNFT(context.Background(), r, script); err != nil {
				t.Fatal(err)
			}
		},
		read: func(t *testing.T, r netfilter.Runner) any {
			out, err := r(context.Background(), []string{"nft", "-j", "list", "ruleset"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := nftables.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			return rs
		},
		moved: func(b, a any) []string {
			was := map[string]uint64{}
			for _, r := range b.(*nftables.Ruleset).Rules {
				was[r.Key()] += r.Packets
			}
			grew := map[string]bool{}
			for _, r := range a.(*nftables.Ruleset).Rules {
				if r.Counted && r.Packets > was[r.Key()] {
					grew[r.ChainKey()] = true
				}
			}
			var out []string
			for c := range grew {
				out = append(out, c)
			}
			sort.Strings(out)
			return out
		},
		svcChain: func(s netfilter.Service, _ netfilter.Endpoint) string {
			return "ip/kube-proxy/" + netfilter.NFTServiceChain(s)
		},
		epChain: func(s netfilter.Service, e netfilter.Endpoint) string {
			return "ip/kube-proxy/" + netfilter.NFTEndpointChain(s, e)
		},
		fillerChain: func(s netfilter.Service) string { return "ip/kube-proxy/" + netfilter.NFTServiceChain(s) },
	},
	{
		// IPVS balances in the kernel's LOCAL_IN: no chain per Service or
		// endpoint; the ClusterIP's packets are accepted in KUBE-SERVICES
		// (the KUBE-CLUSTER-IP set) and let through KUBE-IPVS-FILTER.
		name: "ipvs",
		install: func(t *testing.T, ns string, r netfilter.Runner, svcs []netfilter.Service) {
			kerneltest.RequireKernel(t, probe.IPVS)
			st, err := netfilter.KubeProxyIPVS(cidr("10.244.0.0/16"), cidr("10.244.0.0/16"), svcs)
			if err != nil {
				t.Fatal(err)
			}
			if err := netfilter.SyncIPVS(ns, st); err != nil {
				t.Fatal(err)
			}
			if err := netfilter.Apply(context.Background(), r, st.Rules); err != nil {
				t.Fatal(err)
			}
		},
		read:        saveIptables,
		moved:       iptablesMoved,
		svcChain:    func(netfilter.Service, netfilter.Endpoint) string { return "nat/KUBE-SERVICES" },
		epChain:     func(netfilter.Service, netfilter.Endpoint) string { return "filter/KUBE-IPVS-FILTER" },
		fillerChain: func(netfilter.Service) string { return "" },
	},
}

// A client pod reaches a server pod through the benchmark Service's
// ClusterIP (kube-proxy's DNAT on the node, among filler Services), in
// each kube-proxy mode: the Service's and its endpoint's chains count
// the connection and no filler's does; the server reaching itself
// through its own Service (hairpin) works and is masqueraded to the
// node's address, as the endpoint chain's hairpin mark asks.
func TestKubeProxyClusterIP(t *testing.T) {
	for _, m := range proxyModes {
		t.Run(m.name, func(t *testing.T) { clusterIPPath(t, m) })
	}
}

func clusterIPPath(t *testing.T, mode proxyMode) {
	requireIptables(t)
	run := kerneltest.RunID()
	j := kerneltest.Journal(t, run)
	node, cli, srv := scratch(t, j, run, "node"), scratch(t, j, run, "cli"), scratch(t, j, run, "srv")
	for _, l := range []struct{ pod, host, peer, gw, ip string }{
		{cli, "vcli", "eth0", "10.244.1.1", "10.244.1.2"},
		{srv, "vsrv", "eth0", "10.244.2.1", "10.244.2.2"},
	} {
		mustRun(t, "ip", "-n", node, "link", "add", l.host, "type", "veth", "peer", "name", l.peer, "netns", l.pod)
		mustRun(t, "ip", "-n", node, "addr", "add", l.gw+"/24", "dev", l.host)
		mustRun(t, "ip", "-n", node, "link", "set", l.host, "up")
		mustRun(t, "ip", "-n", l.pod, "addr", "add", l.ip+"/24", "dev", l.peer)
		mustRun(t, "ip", "-n", l.pod, "link", "set", l.peer, "up")
		mustRun(t, "ip", "-n", l.pod, "link", "set", "lo", "up")
		mustRun(t, "ip", "-n", l.pod, "route", "add", "default", "via", l.gw)
	}
	ctx := context.Background()
	r := netfilter.InNetns(node)
	if _, err := r(ctx, []string{"sysctl", "-qw", "net.ipv4.ip_forward=1"}, nil); err != nil {
		t.Fatal(err)
	}
	bench := netfilter.Service{Namespace: "cnibench", Name: "server", PortName: "tcp", Protocol: "tcp",
		ClusterIP: net.ParseIP("10.96.0.100"), Port: 80, Endpoints: []netfilter.Endpoint{{IP: net.ParseIP("10.244.2.2"), Port: 8080}}}
	fill, err := netfilter.Fillers(50, 2, cidr("10.96.0.0/12"), cidr("10.250.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	mode.install(t, node, r, append(fill, bench))
	peers := server(t, srv, "10.244.2.2:8080")
	before := mode.read(t, r)
	if err := dial(cli, "10.96.0.100:80"); err != nil {
		kerneltest.Dump(t, node)
		if out, err := r(ctx, []string{"iptables-save", "-c"}, nil); err == nil {
			t.Logf("iptables-save -c:\n%s", out)
		}
		t.Fatalf("client to ClusterIP: %v", err)
	}
	if p := peer(t, peers); !strings.HasPrefix(p, "10.244.1.2:") {
		t.Errorf("server saw %s, want the client pod (no masquerade inside the cluster CIDR)", p)
	}
	moved := mode.moved(before, mode.read(t, r))
	has := func(c string) bool {
		for _, m := range moved {
			if m == c {
				return true
			}
		}
		return false
	}
	for _, c := range []string{mode.svcChain(bench, bench.Endpoints[0]), mode.epChain(bench, bench.Endpoints[0])} {
		if !has(c) {
			t.Errorf("%s did not count the connection; moved: %v", c, moved)
		}
	}
	for _, f := range fill {
		if has(mode.fillerChain(f)) {
			t.Errorf("filler %s counted a packet", mode.fillerChain(f))
		}
	}
	t.Logf("%s ClusterIP path: %d chains moved: %v", mode.name, len(moved), moved)

	if err := dial(srv, "10.96.0.100:80"); err != nil {
		t.Fatalf("hairpin: %v", err)
	}
	if p := peer(t, peers); !strings.HasPrefix(p, "10.244.2.1:") {
		t.Errorf("hairpin: server saw %s, want the node's address 10.244.2.1 (masqueraded)", p)
	}
}

// underlayIP is a node's address on eth1.
func underlayIP(t *testing.T, ns, dev string) net.IP {
	t.Helper()
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := h.AddrList(l, netlink.FAMILY_V4)
	if err != nil || len(addrs) == 0 {
		t.Fatalf("address of %s in %s: %v", dev, ns, err)
	}
	return addrs[0].IP
}

// nodeOf describes a local-engine node for the generators: its pods'
// /24, the /16 around it, its underlay address and its pods' host veths.
func nodeOf(t *testing.T, n engine.Node, pods []engine.Pod) netfilter.Node {
	t.Helper()
	ip := pods[0].IP().To4()
	nn := netfilter.Node{
		PodCIDR:     &net.IPNet{IP: ip.Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)},
		ClusterCIDR: &net.IPNet{IP: ip.Mask(net.CIDRMask(16, 32)), Mask: net.CIDRMask(16, 32)},
		NodeIP:      underlayIP(t, n.Netns(), n.Underlay().Name),
	}
	if tun, ok := n.Tunnel(); ok {
		nn.Tunnel = tun.Name
	}
	veths, err := n.HostVeths(pods)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pods {
		nn.Pods = append(nn.Pods, netfilter.Pod{Iface: veths[i].Name, IP: p.IP()})
	}
	return nn
}

func podNetns(t *testing.T, p engine.Pod) string {
	t.Helper()
	n, ok := p.(interface{ Netns() string })
	if !ok {
		t.Fatalf("pod %s has no namespace", p.Name())
	}
	return n.Netns()
}

// pathCase is one CNI on an emulated datapath and the chains Table III's
// path crosses: on the server node for an intra-host connection, and on
// each node for an inter-host one.
type pathCase struct {
	cni, datapath string
	// intra: chains a connection between two pods of the server node
	// moves there; inter: chains a connection from the client node's pod
	// moves on the client and on the server node. "%s" is replaced by
	// the server pod's (intra: the sending pod's) host veth.
	intra, interCli, interSrv []string
	// bridged intra-host traffic meets iptables only through
	// br_netfilter (bridge-nf-call-iptables).
	bridged bool
	// noIntra: intra-host traffic must move no counter at all.
	noIntra bool
	// never are chains no inter-host packet may cross.
	never []string
	// bridge is the datapath's bridge when it is not the CNI's own.
	bridge string
}

// TestTableIIIPaths installs a CNI's chains on both nodes of an emulated
// cluster wired by the matching datapath and checks that a connection
// intra- and inter-host moves the counters of the chains its path
// crosses, logging the counts beside the paper's Table III.
func TestTableIIIPaths(t *testing.T) {
	requireIptables(t)
	for _, c := range []pathCase{
		{cni: "flannel", datapath: "flannel-vxlan", bridged: true,
			intra:    []string{"filter/FLANNEL-FWD", "nat/FLANNEL-POSTRTG"},
			interCli: []string{"filter/FLANNEL-FWD", "nat/FLANNEL-POSTRTG"},
			interSrv: []string{"filter/FLANNEL-FWD", "nat/FLANNEL-POSTRTG"}},
		{cni: "calico-wp-ipip", datapath: "calico-ipip",
			intra:    []string{"raw/cali-PREROUTING", "filter/cali-FORWARD", "filter/cali-fw-%[1]s", "filter/cali-tw-%[2]s", "filter/cali-pi-_cnibench-allow-pods", "nat/cali-POSTROUTING"},
			interCli: []string{"raw/cali-PREROUTING", "filter/cali-fw-%[1]s", "filter/cali-pro-kns.cnibench", "nat/cali-POSTROUTING"},
			interSrv: []string{"filter/cali-INPUT", "filter/cali-tw-%[2]s", "filter/cali-pi-_cnibench-allow-pods", "mangle/cali-PREROUTING"}},
		{cni: "calico-wp-xsub", datapath: "calico-routed",
			intra:    []string{"filter/cali-fw-%[1]s", "filter/cali-tw-%[2]s", "filter/cali-pi-_cnibench-allow-pods"},
			interCli: []string{"filter/cali-fw-%[1]s", "filter/cali-pro-kns.cnibench"},
			interSrv: []string{"filter/cali-tw-%[2]s", "filter/cali-pi-_cnibench-allow-pods"}},
		{cni: "calico-np-xsub", datapath: "calico-routed",
			intra:    []string{"filter/cali-fw-%[1]s", "filter/cali-tw-%[2]s", "filter/cali-pri-kns.cnibench"},
			interCli: []string{"filter/cali-fw-%[1]s", "filter/cali-pro-kns.cnibench"},
			interSrv: []string{"filter/cali-tw-%[2]s", "filter/cali-pri-kns.cnibench"}},
		{cni: "weave", datapath: "weave", bridged: true,
			intra:    []string{"filter/WEAVE-NPC-EGRESS", "filter/WEAVE-NPC-EGRESS-DEFAULT", "filter/WEAVE-NPC", "filter/WEAVE-NPC-DEFAULT", "nat/WEAVE"},
			interCli: []string{"filter/WEAVE-NPC-EGRESS", "filter/WEAVE-NPC-EGRESS-DEFAULT", "filter/WEAVE-NPC"},
			interSrv: []string{"filter/WEAVE-NPC-EGRESS", "filter/WEAVE-NPC", "filter/WEAVE-NPC-DEFAULT"}},
		// Cilium's eBPF programs redirect pod to pod past netfilter; the
		// VXLAN packets its tunnel sends and receives are the host's own.
		{cni: "kube-router", datapath: "bridge", bridge: "cni0", bridged: true,
			intra:    []string{"filter/KUBE-ROUTER-FORWARD", "filter/FORWARD"},
			interCli: []string{"filter/KUBE-ROUTER-FORWARD", "filter/FORWARD"},
			interSrv: []string{"filter/KUBE-ROUTER-FORWARD", "filter/FORWARD"}},
		// A user chain moves when one of its rules counts: the feeders
		// in the built-in chains count, CILIUM_OUTPUT's host mark
		// matches, the proxy-mark rules do not.
		{cni: "cilium", datapath: "cilium", noIntra: true,
			interCli: []string{"raw/OUTPUT", "filter/OUTPUT", "filter/CILIUM_OUTPUT", "nat/POSTROUTING"},
			interSrv: []string{"raw/PREROUTING", "filter/INPUT"},
			never:    []string{"filter/FORWARD", "filter/CILIUM_FORWARD"}},
	} {
		// Each count on a fresh cluster: taking the CNI's rules out again
		// (a snapshot's restore) would declare every built-in chain, and
		// with iptables-nft a declared chain counts packets that a chain
		// no rule went into never meets.
		t.Run(c.cni, func(t *testing.T) { tablePath(t, c, false) })
		t.Run(c.cni+"+kube-proxy", func(t *testing.T) { tablePath(t, c, true) })
	}
}

// tablePath counts c's path on a fresh cluster, with kube-proxy's rules
// (iptables mode, a dozen Services) when kube is set: the paper's nodes
// ran it. They go in first, the CNI's after them, as knob netfilter
// writes them: kube-proxy's hooks, and the CNI's above or below them as
// its daemon places them.
func tablePath(t *testing.T, c pathCase, kube bool) {
	cl, pairs := workloadtest.Cluster(t, c.datapath, 2)
	ctx := context.Background()
	srvNode, cliNode := cl.Server(), cl.Client()
	s0, s1, c0 := pairs[0].Server, pairs[1].Server, pairs[0].Client
	srvPods, cliPods := []engine.Pod{s0, s1}, []engine.Pod{c0, pairs[1].Client}
	srvN, cliN := nodeOf(t, srvNode, srvPods), nodeOf(t, cliNode, cliPods)
	srvN.AllowFrom, cliN.AllowFrom = []*net.IPNet{srvN.ClusterCIDR}, []*net.IPNet{cliN.ClusterCIDR}
	srvN.Bridge, cliN.Bridge = c.bridge, c.bridge
	srvRun, cliRun := netfilter.OnNode(srvNode), netfilter.OnNode(cliNode)
	what := c.cni
	var kp *netfilter.Ruleset
	if kube {
		what += " + kube-proxy"
		fill, err := netfilter.Fillers(12, 2, cidr("10.96.0.0/12"), cidr("10.250.0.0/16"))
		if err != nil {
			t.Fatal(err)
		}
		if kp, err = netfilter.KubeProxy(srvN.ClusterCIDR, fill); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []struct {
		n netfilter.Node
		r netfilter.Runner
	}{{srvN, srvRun}, {cliN, cliRun}} {
		rs, err := netfilter.Generate(c.cni, x.n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*netfilter.Ruleset{kp, rs} {
			if r == nil {
				continue
			}
			if err := netfilter.Apply(ctx, x.r, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	s0Addr := net.JoinHostPort(s0.IP().String(), "7300")
	peers := server(t, podNetns(t, s0), s0Addr)

	// moved runs a connection and returns what moved on each node.
	moved := func(from engine.Pod) (srv, cli netfilter.Moved) {
		t.Helper()
		sb, err := netfilter.Save(ctx, srvRun)
		if err != nil {
			t.Fatal(err)
		}
		cb, err := netfilter.Save(ctx, cliRun)
		if err != nil {
			t.Fatal(err)
		}
		if err := dial(podNetns(t, from), s0Addr); err != nil {
			kerneltest.Dump(t, srvNode.Netns())
			t.Fatalf("%s to %s: %v", from.Name(), s0Addr, err)
		}
		peer(t, peers)
		sa, err := netfilter.Save(ctx, srvRun)
		if err != nil {
			t.Fatal(err)
		}
		ca, err := netfilter.Save(ctx, cliRun)
		if err != nil {
			t.Fatal(err)
		}
		return netfilter.Traversed(sb, sa), netfilter.Traversed(cb, ca)
	}
	want := func(where string, m netfilter.Moved, chains []string, from, to string) {
		t.Helper()
		for _, ch := range chains {
			ch = strings.ReplaceAll(strings.ReplaceAll(ch, "%[1]s", from), "%[2]s", to)
			if !m.Has(ch) {
				t.Errorf("%s: %s did not move; moved: %v", where, ch, m.Chains)
			}
		}
	}

	intra, _ := moved(s1)
	switch {
	case c.noIntra:
		if len(intra.Chains) != 0 {
			t.Errorf("intra-host: netfilter saw pod-to-pod traffic: %v", intra.Chains)
		}
	case c.bridged && !bridgeCallsIptables(t, srvNode.Netns()):
		t.Logf("intra-host: bridge-nf-call-iptables is off in %s: bridged traffic meets no iptables rule", srvNode.Netns())
	default:
		want("intra-host", intra, c.intra, srvN.Pods[1].Iface, srvN.Pods[0].Iface)
	}
	is, ic := moved(c0)
	want("inter-host, client node", ic, c.interCli, cliN.Pods[0].Iface, srvN.Pods[0].Iface)
	want("inter-host, server node", is, c.interSrv, cliN.Pods[0].Iface, srvN.Pods[0].Iface)
	for _, ch := range c.never {
		if is.Has(ch) || ic.Has(ch) {
			t.Errorf("inter-host: %s counted a packet", ch)
		}
	}
	// Table III counts the chains and rules of the path (built-in
	// chains included), inter-host on both nodes.
	logPath(t, what, intra, ic, is)
}

func logPath(t *testing.T, what string, intra, cli, srv netfilter.Moved) {
	t.Helper()
	t.Logf("%s intra-host: %d chains, %d rules; inter-host: %d chains, %d rules (client %v; server %v)", what,
		len(intra.Chains), len(intra.Rules), len(cli.Chains)+len(srv.Chains), len(cli.Rules)+len(srv.Rules), cli.Chains, srv.Chains)
}

// bridgeCallsIptables reads net.bridge.bridge-nf-call-iptables as the
// namespace sees it.
func bridgeCallsIptables(t *testing.T, ns string) bool {
	t.Helper()
	out, err := netfilter.InNetns(ns)(context.Background(), []string{"sysctl", "-n", "net.bridge.bridge-nf-call-iptables"}, nil)
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// An undo (Restore of the snapshot, then PruneBaseChains) leaves the
// namespace's nf_tables objects as they were: restoring iptables-save's
// text alone creates every built-in chain of raw, mangle, filter and
// nat, each then hooked on every packet (and counted by the path
// collectors in a later pod set).
func TestRestoreLeavesNoNewBaseChains(t *testing.T) {
	requireIptables(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skipf("skipped: no nft (%v)", err)
	}
	run := kerneltest.RunID()
	ns := scratch(t, kerneltest.Journal(t, run), run, "prune")
	r := netfilter.InNetns(ns)
	ctx := context.Background()
	// The node as a datapath may leave it: one FORWARD rule.
	mustRun(t, "ip", "netns", "exec", ns, "iptables", "-A", "FORWARD", "-s", "10.244.0.0/16", "-j", "ACCEPT")
	before, err := netfilter.BaseChains(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := netfilter.Snapshot(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := netfilter.KubeProxy(cidr("10.244.0.0/16"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := netfilter.Apply(ctx, r, kp); err != nil {
		t.Fatal(err)
	}
	if err := netfilter.Restore(ctx, r, snap); err != nil {
		t.Fatal(err)
	}
	grown, _ := netfilter.BaseChains(ctx, r)
	if err := netfilter.PruneBaseChains(ctx, r, before); err != nil {
		t.Fatal(err)
	}
	after, err := netfilter.BaseChains(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before %v; after Restore %d objects; after pruning %v", before, len(grown), after)
	if len(after) != len(before) {
		t.Errorf("after the undo %v, before %v", after, before)
	}
	for k := range before {
		if !after[k] {
			t.Errorf("%s was there before and is gone", k)
		}
	}
	if out, _ := exec.Command("ip", "netns", "exec", ns, "iptables", "-S", "FORWARD").CombinedOutput(); !strings.Contains(string(out), "10.244.0.0/16") {
		t.Errorf("the datapath's own rule is gone: %s", out)
	}
}
