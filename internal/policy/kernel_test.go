package policy_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/policy"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestCalicoPolicyEnforced installs the rule set on a calico-routed
// server node and checks what it lets through: with "wp" admitting only
// the client node's pod network, a client pod reaches a server pod and a
// pod on the server node's own network does not; "np" lets both through.
// Rewriting the chains keeps one set of FORWARD hooks (the jump at the
// top, the accept and mark at the end), a rewrite for fewer pods deletes
// the chains only the earlier rule set had, and iptables holds the
// chains Count reports.
func TestCalicoPolicyEnforced(t *testing.T) {
	workloadtest.RequireRoot(t)
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("skipped: iptables-restore not installed (apt-get install iptables)")
	}
	c, pairs := workloadtest.Cluster(t, "calico-routed", 2)
	srv := c.Server()
	s0, s1, c0 := pairs[0].Server, pairs[1].Server, pairs[0].Client
	veths, err := srv.HostVeths([]engine.Pod{s0, s1})
	if err != nil {
		t.Fatal(err)
	}
	eps := []policy.Endpoint{{Iface: veths[0].Name, IP: s0.IP()}, {Iface: veths[1].Name, IP: s1.IP()}}

	var held []string
	install := func(mode string, eps []policy.Endpoint, hook bool) []byte {
		t.Helper()
		rules, err := policy.Calico(mode, eps, policy.PodNetworks([]net.IP{c0.IP()}), hook)
		if err != nil {
			t.Fatal(err)
		}
		write, err := policy.Retire(rules, held)
		if err != nil {
			t.Fatal(err)
		}
		held = policy.Declared(rules)
		f := filepath.Join(t.TempDir(), "rules")
		if err := os.WriteFile(f, write, 0o600); err != nil {
			t.Fatal(err)
		}
		run(t, srv, "iptables-restore", "--noflush", f)
		return rules
	}

	rules := install(policy.With, eps, true)
	if !reaches(t, c0, s0) {
		t.Error("wp: client pod cannot reach server pod")
	}
	if reaches(t, s1, s0) {
		t.Error("wp: a pod outside the allowed network reaches the server pod")
	}
	saved := run(t, srv, "iptables-save", "-t", "filter")
	chains, _ := policy.Count(rules)
	if got := strings.Count(saved, "\n:cali-"); got != chains {
		t.Errorf("iptables has %d cali chains, the rule set declares %d", got, chains)
	}

	install(policy.Without, eps, false)
	if !reaches(t, s1, s0) {
		t.Error("np: pods of one node cannot reach each other")
	}
	saved = run(t, srv, "iptables-save", "-t", "filter")
	var fwd []string
	for _, l := range strings.Split(saved, "\n") {
		if strings.HasPrefix(l, "-A FORWARD ") {
			fwd = append(fwd, l)
		}
	}
	want := []string{"-A FORWARD -j cali-FORWARD",
		`-A FORWARD -m comment --comment "Policy explicitly accepted packet." -m mark --mark 0x10000/0x10000 -j ACCEPT`,
		"-A FORWARD -j MARK --set-xmark 0x10000/0x10000"}
	if strings.Join(fwd, "\n") != strings.Join(want, "\n") {
		t.Errorf("FORWARD after a rewrite:\n%s\nwant:\n%s", strings.Join(fwd, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(saved, "-j cali-pi-") {
		t.Error("np rewrite still jumps to the policy chain")
	}

	// One pod fewer: its endpoint chains and the policy chain go.
	rules = install(policy.Without, eps[1:], false)
	saved = run(t, srv, "iptables-save", "-t", "filter")
	chains, _ = policy.Count(rules)
	if got := strings.Count(saved, "\n:cali-"); got != chains {
		t.Errorf("after a rewrite for one pod iptables has %d cali chains, the rule set declares %d", got, chains)
	}
	if strings.Contains(saved, ":cali-fw-"+eps[0].Iface) {
		t.Errorf("the deleted endpoint's chain cali-fw-%s is left", eps[0].Iface)
	}
	if !reaches(t, c0, s1) {
		t.Error("np: the remaining server pod cannot be reached")
	}
}

func run(t *testing.T, n engine.Node, argv ...string) string {
	t.Helper()
	p, err := n.Start(context.Background(), argv)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := p.Wait()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return string(out)
}

// reaches reports whether a TCP connection from cli to srv completes.
func reaches(t *testing.T, cli, srv engine.Pod) bool {
	t.Helper()
	addr := net.JoinHostPort(srv.IP().String(), "7100")
	var ln net.Listener
	if err := netns.Do(podNetns(t, srv), func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	var conn net.Conn
	err := netns.Do(podNetns(t, cli), func() (err error) {
		conn, err = net.DialTimeout("tcp", addr, time.Second)
		return err
	})
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func podNetns(t *testing.T, p engine.Pod) string {
	n, ok := p.(interface{ Netns() string })
	if !ok {
		t.Fatalf("pod %s has no namespace", p.Name())
	}
	return n.Netns()
}
