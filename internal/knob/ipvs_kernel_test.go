package knob_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// ipvsState is what kube-proxy's IPVS mode left in a node namespace: the
// virtual servers, the dummy device's addresses (-1: no device) and the
// sets that exist.
func ipvsState(t *testing.T, ns string, l *netfilter.IPVS) (vs []netfilter.VirtualServer, addrs int, sets []string) {
	t.Helper()
	vs, err := netfilter.ReadIPVS(ns)
	if err != nil {
		t.Fatal(err)
	}
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	addrs = -1
	if d, err := h.LinkByName(l.Dummy); err == nil {
		a, _ := h.AddrList(d, netlink.FAMILY_V4)
		addrs = len(a)
	}
	for _, s := range l.Sets {
		if _, err := h.IpsetList(s.Name); err == nil {
			sets = append(sets, s.Name)
		}
	}
	return vs, addrs, sets
}

// TestKernelNetfilterKnobIPVS: an IPVS Service proxy on both nodes of a
// bridge cluster (kube-router's chains, 3 filler Services), kube-proxy's
// IPVS mode and kube-router's own proxy: each node has the 3 virtual
// servers, the dummy device with their ClusterIPs and the proxy's sets;
// the service path adds the measured Service (TCP and UDP), a client
// pod on the other node reaches the server through the ClusterIP (IPVS
// on the client's node translates, no SNAT inside the cluster), and each
// undo takes back exactly its part: the fillers after the trial,
// nothing (and the tables as before) after the pods.
func TestKernelNetfilterKnobIPVS(t *testing.T) {
	kerneltest.RequireKernel(t, probe.IPVS)
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	for _, m := range []struct {
		mode  string
		proxy netfilter.Proxy
	}{{study.KubeProxyIPVS, netfilter.ProxyKubeProxy}, {study.KubeProxyKubeRouter, netfilter.ProxyKubeRouter}} {
		t.Run(m.mode, func(t *testing.T) {
			l, err := netfilter.Layout(m.proxy)
			if err != nil {
				t.Fatal(err)
			}
			ipvsKnobs(t, m.mode, l)
		})
	}
}

func ipvsKnobs(t *testing.T, mode string, l *netfilter.IPVS) {
	cl, pairs := workloadtest.Cluster(t, "bridge", 1)
	ctx := context.Background()
	srvNS, cliNS := cl.Server().Netns(), cl.Client().Netns()
	before, err := netfilter.Snapshot(ctx, netfilter.OnNode(cl.Client()))
	if err != nil {
		t.Fatal(err)
	}
	dp := study.Datapath{Name: "kr", Type: "bridge", Netfilter: &study.Netfilter{CNI: "kube-router", KubeProxy: mode, Services: 3}}
	tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true,
		Journal: kerneltest.Journal(t, kerneltest.RunID()),
		Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
	pods, err := knob.Apply(ctx, knob.Pods, tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{srvNS, cliNS} {
		vs, addrs, sets := ipvsState(t, ns, l)
		if len(vs) != 3 || addrs != 3 || len(sets) != len(l.Sets) {
			t.Errorf("%s after the netfilter knob: %d virtual servers, %d addresses, sets %v; want 3, 3, all", ns, len(vs), addrs, sets)
		}
	}

	tg.Workload = study.Workload{Name: "svc", Target: study.TargetService}
	tg.Measured, tg.MeasuredClients = []engine.Pod{pairs[0].Server}, []engine.Pod{pairs[0].Client}
	trial, err := knob.Apply(ctx, knob.Trial, tg)
	if err != nil {
		t.Fatal(err)
	}
	if vs, addrs, _ := ipvsState(t, cliNS, l); len(vs) != 5 || addrs != 4 {
		t.Errorf("client node with the measured Service: %d virtual servers, %d addresses; want 5 (3 + TCP and UDP), 4", len(vs), addrs)
	}
	if len(tg.Front) != 1 {
		t.Fatalf("front %v", tg.Front)
	}
	reach(t, pairs[0].Server, pairs[0].Client, tg.Front[0], knob.BasePort)
	if err := trial.Revert(); err != nil {
		t.Fatal(err)
	}
	if vs, addrs, _ := ipvsState(t, cliNS, l); len(vs) != 3 || addrs != 3 {
		t.Errorf("after the trial: %d virtual servers, %d addresses; want the 3 fillers back", len(vs), addrs)
	}
	if err := pods.Revert(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{srvNS, cliNS} {
		if vs, addrs, sets := ipvsState(t, ns, l); len(vs) != 0 || addrs != -1 || len(sets) != 0 {
			t.Errorf("%s after undo: %d virtual servers, dummy addresses %d, sets %v; want none", ns, len(vs), addrs, sets)
		}
	}
	after, err := netfilter.Snapshot(ctx, netfilter.OnNode(cl.Client()))
	if err != nil {
		t.Fatal(err)
	}
	if normalTables(string(after)) != normalTables(string(before)) {
		t.Errorf("client node's tables after undo:\n%s\nwant:\n%s", after, before)
	}
}

// reach has a TCP connection from the client pod to ip:port arrive at a
// listener in the server pod.
func reach(t *testing.T, srv, cli engine.Pod, ip net.IP, port int) {
	t.Helper()
	podNS := func(p engine.Pod) string { return p.(interface{ Netns() string }).Netns() }
	var ln net.Listener
	if err := netns.Do(podNS(srv), func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(srv.IP().String(), strconv.Itoa(port)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			got <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	var conn net.Conn
	err := netns.Do(podNS(cli), func() (err error) {
		conn, err = net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)), 5*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("client to the Service %s:%d: %v", ip, port, err)
	}
	conn.Close()
	select {
	case from := <-got:
		if !strings.HasPrefix(from, cli.IP().String()+":") {
			t.Errorf("server saw %s, want the client pod %s (no masquerade inside the cluster)", from, cli.IP())
		}
	case <-time.After(30 * time.Second): // the emulated VM is slow; an accepted connection ends the wait
		t.Error("the server accepted nothing")
	}
}
