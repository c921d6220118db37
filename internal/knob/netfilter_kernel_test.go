package knob_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelNetfilterKnob: on a flannel-vxlan cluster the knob installs
// Flannel's chains and kube-proxy's (iptables mode, 3 Services) on both
// nodes, counts them in env, rewrites them when the pods change without
// doubling the hooks, and its undo leaves each node's tables exactly as
// they were.
func TestKernelNetfilterKnob(t *testing.T) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	cl, pairs := workloadtest.Cluster(t, "flannel-vxlan", 2)
	ctx := context.Background()
	dp := study.Datapath{Name: "flannel-nf", Type: "flannel-vxlan", Netfilter: &study.Netfilter{CNI: "flannel", Services: 3}}
	env := &results.DatapathEnv{}
	target := func(n int) *knob.Target {
		tg := &knob.Target{Cluster: cl, Datapath: dp, Env: env, State: map[string]any{}}
		for _, p := range pairs[:n] {
			tg.Servers, tg.Clients = append(tg.Servers, p.Server), append(tg.Clients, p.Client)
		}
		return tg
	}
	save := func(n engine.Node) string {
		t.Helper()
		out, err := netfilter.Snapshot(ctx, netfilter.OnNode(n))
		if err != nil {
			t.Fatal(err)
		}
		return normalTables(string(out))
	}
	before := map[string]string{"server": save(cl.Server()), "client": save(cl.Client())}

	a, err := knob.Apply(ctx, knob.Pods, target(1))
	if err != nil {
		t.Fatal(err)
	}
	srv := save(cl.Server())
	for _, want := range []string{":FLANNEL-FWD", ":FLANNEL-POSTRTG", ":KUBE-SERVICES", "-j KUBE-SVC-"} {
		if !strings.Contains(srv, want) {
			t.Errorf("server node lacks %q after the knob:\n%s", want, srv)
		}
	}
	nf := env.Netfilter
	if nf == nil || nf.CNI != "flannel" || nf.KubeProxy != "iptables" || nf.Services != 3 || nf.Rules["server"] == 0 || nf.Chains["client"] == 0 {
		t.Errorf("env %+v: want flannel with kube-proxy (3 Services) counted on both nodes", nf)
	}
	// The pods change: revert and apply again, as the runner does per
	// replica count; the hook from FORWARD must be there once.
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	a, err = knob.Apply(ctx, knob.Pods, target(2))
	if err != nil {
		t.Fatal(err)
	}
	hooks := 0
	for _, l := range strings.Split(save(cl.Server()), "\n") {
		if strings.HasPrefix(l, "-A FORWARD ") && strings.HasSuffix(l, "-j FLANNEL-FWD") {
			hooks++
		}
	}
	if got := hooks; got != 1 {
		t.Errorf("after the second apply FORWARD jumps to FLANNEL-FWD %d times, want 1", got)
	}
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]engine.Node{"server": cl.Server(), "client": cl.Client()} {
		if got := save(n); got != before[name] {
			t.Errorf("%s node after undo differs from before:\nbefore:\n%s\nafter:\n%s", name, before[name], got)
		}
	}
}

// TestKernelNetfilterKnobNFT: kube-proxy's nftables mode goes into its
// own table, its NodePorts on the node's address, and undo deletes it.
func TestKernelNetfilterKnobNFT(t *testing.T) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("skipped: nft is not installed (apt-get install nftables)")
	}
	cl, pairs := workloadtest.Cluster(t, "bridge", 1)
	ctx := context.Background()
	dp := study.Datapath{Name: "kr", Type: "bridge", Netfilter: &study.Netfilter{CNI: "kube-router", KubeProxy: "nftables", Services: 2}}
	tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{},
		Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
	a, err := knob.Apply(ctx, knob.Pods, tg)
	if err != nil {
		t.Fatal(err)
	}
	run := netfilter.OnNode(cl.Server())
	out, err := run(ctx, []string{"nft", "list", "tables"}, nil)
	if err != nil || !strings.Contains(string(out), "table ip kube-proxy") {
		t.Errorf("no kube-proxy table after the knob: %s %v", out, err)
	}
	// NodePorts match the node's own address, as with kube-proxy's
	// default --nodeport-addresses=primary.
	ip, err := netfilter.UnderlayIP(cl.Server())
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(ctx, []string{"nft", "list", "set", "ip", "kube-proxy", "nodeport-ips"}, nil)
	if err != nil || !strings.Contains(string(out), ip.String()) {
		t.Errorf("set nodeport-ips lacks the node's address %s: %s %v", ip, out, err)
	}
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	out, _ = run(ctx, []string{"nft", "list", "tables"}, nil)
	if strings.Contains(string(out), "table ip kube-proxy") {
		t.Errorf("kube-proxy table left after undo: %s", out)
	}
}

// normalTables drops iptables-save's comment lines (they carry the time)
// and the tables that hold nothing (built-in chains only, all ACCEPT, no
// rule): an empty table and an absent one filter alike.
func normalTables(save string) string {
	var out []string
	var block []string
	empty := true
	for _, l := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(l, "#") || l == "":
		case strings.HasPrefix(l, "*"):
			block, empty = []string{l}, true
		case l == "COMMIT":
			if !empty {
				out = append(out, append(block, l)...)
			}
			block = nil
		default:
			block = append(block, l)
			if strings.HasPrefix(l, "-A") || !strings.Contains(l, " ACCEPT ") {
				empty = false
			}
		}
	}
	return strings.Join(out, "\n")
}
