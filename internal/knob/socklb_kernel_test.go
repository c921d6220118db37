package knob_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/socklb"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelNetfilterKnobSocketLB: Cilium's kube-proxy replacement on a
// cilium cluster (cilium-kpr's chains, 3 filler Services): the socket
// load balancer is attached for the pods and no kube-proxy chain exists
// on either node; the service path has a client pod on the other node
// reach the server through the ClusterIP (translated at connect: the
// server sees the client pod itself) and the server pod reach itself
// (hairpin); after the trial the ClusterIP is no longer translated, and
// after the pods the programs are gone.
func TestKernelNetfilterKnobSocketLB(t *testing.T) {
	kerneltest.RequireKernel(t, probe.SocketLB)
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	cg, err := cgroup2.Own()
	if err != nil {
		t.Fatal(err)
	}
	cl, pairs := workloadtest.Cluster(t, "cilium", 1)
	ctx := context.Background()
	srv, cli := pairs[0].Server, pairs[0].Client
	before := attachedOn(t, cg)
	dp := study.Datapath{Name: "cilium-kpr", Type: "cilium", Netfilter: &study.Netfilter{CNI: "cilium-kpr", KubeProxy: study.KubeProxyCilium, Services: 3}}
	env := &results.DatapathEnv{}
	tg := &knob.Target{Cluster: cl, Datapath: dp, Env: env, State: map[string]any{}, Local: true,
		Journal: kerneltest.Journal(t, kerneltest.RunID()), Servers: []engine.Pod{srv}, Clients: []engine.Pod{cli}}
	pods, err := knob.Apply(ctx, knob.Pods, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pods.Revert() })
	if got := attachedOn(t, cg); got != before+1 {
		t.Errorf("socket-LB programs on %s: %d, want %d", cg, got, before+1)
	}
	if env.Netfilter == nil || env.Netfilter.SocketLB == "" || env.Netfilter.Services != 3 {
		t.Errorf("env %+v: want the socket LB described and 3 Services", env.Netfilter)
	}
	for _, n := range []engine.Node{cl.Server(), cl.Client()} {
		snap, err := netfilter.Snapshot(ctx, netfilter.OnNode(n))
		if err != nil {
			t.Fatal(err)
		}
		// The kubelet's KUBE-FIREWALL and canaries are on every node;
		// kube-proxy's chains are not, where Cilium replaces it.
		if strings.Contains(string(snap), "KUBE-SERVICES") || strings.Contains(string(snap), "KUBE-PROXY-CANARY") || !strings.Contains(string(snap), "CILIUM_FORWARD") {
			t.Errorf("%s: want Cilium's chains and no kube-proxy chain:\n%s", n.Name(), snap)
		}
	}

	for _, target := range []string{study.TargetService, study.TargetHairpin} {
		tg.Workload = study.Workload{Name: "svc", Target: target}
		tg.Measured, tg.MeasuredClients, tg.Front = []engine.Pod{srv}, []engine.Pod{cli}, nil
		trial, err := knob.Apply(ctx, knob.Trial, tg)
		if err != nil {
			t.Fatal(err)
		}
		if len(tg.Front) != 1 || !tg.Front[0].Equal(netfilter.BenchClusterIP(0)) {
			t.Fatalf("front %v", tg.Front)
		}
		from := cli
		if target == study.TargetHairpin {
			from = srv
		}
		reach(t, srv, from, tg.Front[0], knob.BasePort)
		if err := trial.Revert(); err != nil {
			t.Fatal(err)
		}
	}
	if err := dialPod(cli, netfilter.BenchClusterIP(0), knob.BasePort); err == nil {
		t.Error("after the trial the ClusterIP still reaches the server")
	}
	if err := pods.Revert(); err != nil {
		t.Fatal(err)
	}
	if got := attachedOn(t, cg); got != before {
		t.Errorf("after the pods' undo: %d socket-LB programs on %s, want %d", got, cg, before)
	}
}

func attachedOn(t *testing.T, cg string) int {
	t.Helper()
	n, err := socklb.Attached(cg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dialPod connects from pod p to ip:port, giving up after a second.
func dialPod(p engine.Pod, ip net.IP, port int) error {
	return netns.Do(p.(interface{ Netns() string }).Netns(), func() error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}
