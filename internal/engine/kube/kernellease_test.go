package kube

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/tune"
)

const testBoot = "0f6c1e2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"

// TestUpClaimsTheKernel: nodes of one kernel (one boot ID: kind, the test
// cluster) share its machine-wide values, so a run on two other nodes of
// that kernel, from another namespace (which neither the node locks nor
// the Lease check see), is refused at its Up naming the run that holds
// the kernel, and leaves nothing behind; once the first run has closed,
// its claim is gone and the second comes up. Without the kernel claim the
// second Up went on, and both runs journaled each other's RFS table.
func TestUpClaimsTheKernel(t *testing.T) {
	cfg1 := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg1)
	place.Server.Status.NodeInfo.BootID, place.Client.Status.NodeInfo.BootID = testBoot, testBoot
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir()}
	ctx := context.Background()
	c1, err := Up(ctx, cs, fx, cfg1, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	leases := cs.CoordinationV1().Leases(DefaultAgentNamespace)
	if l, err := leases.Get(ctx, "cnibench-kernel-"+testBoot, metav1.GetOptions{}); err != nil || l.Labels[LabelRun] != "r1" {
		t.Fatalf("the kernel's Lease after r1's Up: %v, %v", l, err)
	}
	w3, w4 := node("w3", nil, true), node("w4", nil, true)
	w3.Status.NodeInfo.BootID, w4.Status.NodeInfo.BootID = testBoot, testBoot
	cfg2 := Config{RunID: "r2", Namespace: "other", Controller: "me/2/1"}.WithDefaults()
	// r1's runner renews its claim every 10 s while r2 watches it.
	clk := &fakeClock{t: time.Now(), renew: func() { renewKernels(cs, cfg1, kernelsOf(place)) }}
	setObserver(t, clk)
	_, err = Up(ctx, cs, fx, cfg2, Placement{Server: w3, Client: w4}, nil)
	var kb *KernelBusyError
	if !errors.Is(err, tune.ErrNodeBusy) || !errors.As(err, &kb) {
		t.Fatalf("second run's Up on other nodes of the kernel = %v; want a *KernelBusyError", err)
	}
	for _, want := range []string{"node w3, w4 runs on kernel " + testBoot, "run r1 on node w1, w2", "its runner me/1/1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if runs, _ := ListRuns(ctx, cs, "other", time.Now()); len(runs) != 0 {
		t.Errorf("the refused run left %+v", runs)
	}
	if l, err := leases.Get(ctx, "cnibench-kernel-"+testBoot, metav1.GetOptions{}); err != nil || l.Labels[LabelRun] != "r1" {
		t.Fatalf("the refused run released r1's claim: %v, %v", l, err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Get(ctx, "cnibench-kernel-"+testBoot, metav1.GetOptions{}); err == nil {
		t.Fatal("r1's Close left its kernel claim")
	}
	c2, err := Up(ctx, cs, fx, cfg2, place, nil)
	if err != nil {
		t.Fatalf("second run's Up once the first closed = %v", err)
	}
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
}

// fakeClock is the observer's clock: each sleep moves it on, and every
// 10 s of it (a runner's renewal period) renew, when set, runs.
type fakeClock struct {
	t, last time.Time
	renew   func()
}

func (f *fakeClock) observer() observer {
	f.last = f.t
	return observer{now: func() time.Time { return f.t }, poll: 2 * time.Second,
		sleep: func(_ context.Context, d time.Duration) error {
			f.t = f.t.Add(d)
			if f.renew != nil && f.t.Sub(f.last) >= LeaseSeconds*time.Second/3 {
				f.last = f.t
				f.renew()
			}
			return nil
		}}
}

// setObserver has Up judge kernel claims by clk for the test.
func setObserver(t *testing.T, clk *fakeClock) {
	old := kernelObserver
	kernelObserver = clk.observer()
	t.Cleanup(func() { kernelObserver = old })
}

// TestStaleKernelClaim: a runner killed with -9 stops renewing its
// kernel claim; once the next run has watched it unrenewed for
// LeaseSeconds of its own clock it takes it over, while one renewed
// meanwhile refuses it. `cleanup --kube` of the dead run (DeleteRun)
// deletes its claim with its Lease, but not one another run took over.
func TestStaleKernelClaim(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	k := []kernel{{bootID: testBoot, nodes: []string{"w1", "w2"}}}
	dead := Config{RunID: "dead", Controller: "me/9/9"}.WithDefaults()
	// The dead runner's clock ran 5 minutes ahead: its last renewal looks
	// fresh by this machine's clock, and is stale all the same.
	ahead := now.Add(5 * time.Minute)
	runLease := dead.Lease(ahead)
	runLease.Annotations[annotationKernels] = dead.kernelRefs(k)
	cs := fake.NewClientset(runLease, dead.KernelLease(testBoot, k[0].nodes, ahead))
	leases := cs.CoordinationV1().Leases(DefaultAgentNamespace)
	name := kernelLeaseName(testBoot)

	r2 := Config{RunID: "r2", Controller: "me/2/1"}.WithDefaults()
	clk := &fakeClock{t: now}
	if err := claimKernels(ctx, cs, r2, k, clk.observer(), discard(), func(kernel) {}); err != nil {
		t.Fatalf("claim over a dead run's kernel Lease = %v", err)
	}
	if w := clk.t.Sub(now); w < LeaseSeconds*time.Second {
		t.Errorf("took the claim over after watching it %v; want %d s", w, LeaseSeconds)
	}
	if l, _ := leases.Get(ctx, name, metav1.GetOptions{}); l.Labels[LabelRun] != "r2" || *l.Spec.HolderIdentity != "me/2/1" {
		t.Fatalf("kernel Lease after the take-over: %+v", l)
	}
	r3 := Config{RunID: "r3", Controller: "me/3/1"}.WithDefaults()
	clk = &fakeClock{t: now, renew: func() { renewKernels(cs, r2, k) }}
	if err := claimKernels(ctx, cs, r3, k, clk.observer(), discard(), func(kernel) {}); !errors.Is(err, tune.ErrNodeBusy) || !strings.Contains(err.Error(), "run r2") {
		t.Fatalf("claim over r2's renewed one = %v; want refused naming r2", err)
	}
	// The dead run's cleanup leaves r2's claim.
	if _, err := DeleteRun(ctx, cs, dead.Namespace, "dead", false); err != nil {
		t.Fatal(err)
	}
	if l, err := leases.Get(ctx, name, metav1.GetOptions{}); err != nil || l.Labels[LabelRun] != "r2" {
		t.Fatalf("the dead run's cleanup deleted r2's claim: %v, %v", l, err)
	}
	if err := renewKernels(cs, r2, k); err != nil {
		t.Fatalf("r2 renews its claim: %v", err)
	}

	// A dead run still holding its claim: its cleanup deletes it.
	cs = fake.NewClientset(runLease, dead.KernelLease(testBoot, k[0].nodes, ahead))
	deleted, err := DeleteRun(ctx, cs, dead.Namespace, "dead", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoordinationV1().Leases(DefaultAgentNamespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Errorf("cleanup of the dead run left its kernel claim (deleted %v)", deleted)
	}
	if want := "lease/" + DefaultAgentNamespace + "/" + name; !strings.Contains(strings.Join(deleted, " "), want) {
		t.Errorf("deleted %v; want %s named", deleted, want)
	}
}

// TestSkewedKernelClaimKept: a live run whose runner's clock is 5 minutes
// behind this machine's renews a claim whose renewTime looks 5 minutes
// old here; judged by that renewTime (as before) it was taken over at
// once, and two runs tuned one kernel. Watched by this machine's clock,
// it is renewed within LeaseSeconds and refused.
func TestSkewedKernelClaimKept(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	k := []kernel{{bootID: testBoot, nodes: []string{"w1", "w2"}}}
	behind := func() time.Time { return time.Now().Add(-5 * time.Minute) }
	r1 := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs := fake.NewClientset(r1.KernelLease(testBoot, k[0].nodes, behind()))
	leases := cs.CoordinationV1().Leases(DefaultAgentNamespace)
	renew := func() {
		l, _ := leases.Get(ctx, kernelLeaseName(testBoot), metav1.GetOptions{})
		t := metav1.NewMicroTime(behind())
		l.Spec.RenewTime = &t
		leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	r2 := Config{RunID: "r2", Controller: "me/2/1"}.WithDefaults()
	err := claimKernels(ctx, cs, r2, k, (&fakeClock{t: now, renew: renew}).observer(), discard(), func(kernel) {})
	var kb *KernelBusyError
	if !errors.As(err, &kb) || kb.Run != "r1" || !strings.Contains(err.Error(), "renewed its claim within the 10s this run watched it") {
		t.Fatalf("claim over r1's claim renewed by a clock 5 minutes behind = %v; want refused naming r1", err)
	}
	if l, _ := leases.Get(ctx, kernelLeaseName(testBoot), metav1.GetOptions{}); l.Labels[LabelRun] != "r1" {
		t.Fatalf("r1's live claim was taken over: %+v", l)
	}
}

// TestLostKernelClaimEndsRun: a run whose kernel claim another run took
// over (its runner did not renew it for LeaseSeconds while that run
// watched) stops: its agent sessions end (the agents revert its changes)
// and every later call fails naming the run that took it. Before, it
// logged a warning and went on tuning the kernel the other run had
// journaled.
func TestLostKernelClaimEndsRun(t *testing.T) {
	cs, place, c := upOnOneKernel(t)
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases(DefaultAgentNamespace)
	l, err := leases.Get(ctx, kernelLeaseName(testBoot), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := Config{RunID: "r2", Namespace: "other", Controller: "me/2/1"}.WithDefaults().KernelLease(testBoot, []string{"w3"}, time.Now())
	other.ResourceVersion = l.ResourceVersion
	if _, err := leases.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if left := renewTick(cs, c.cfg, kernelsOf(place), discard(), c.lose); len(left) != 0 {
		t.Errorf("claims renewed after the loss: %+v", left)
	}
	// The loss is recorded by the time renewTick returns (Close says
	// it); the sessions are aborted in a goroutine of lose's.
	c.mu.Lock()
	recorded := c.lost != nil
	c.mu.Unlock()
	if !recorded {
		t.Error("renewTick returned before the loss was recorded")
	}
	var kl *KernelLostError
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err = c.ServerNode().Agent().Read("", "proc", "sys/net/core/rps_sock_flow_entries"); errors.As(err, &kl) {
			break
		}
	}
	if !errors.As(err, &kl) || !errors.Is(err, tune.ErrNodeBusy) || !strings.Contains(err.Error(), "run r2 (runner me/2/1) took over this run's claim of kernel "+testBoot) {
		t.Fatalf("an agent call after the claim was lost = %v; want a *KernelLostError naming r2", err)
	}
	if _, err := c.ClientNode().Agent().Read("", "proc", "sys/net/core/rps_sock_flow_entries"); !errors.As(err, &kl) {
		t.Errorf("the client node's session after the loss: %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// kernelsOf: one claim per shared boot ID (both nodes', or one preflight
// found another node reporting), naming the run's nodes on it; a kernel
// of one node and nodes that report none claim nothing. kernelLeaseName keeps a valid name
// whatever the kubelet reports.
func TestKernelsOf(t *testing.T) {
	a, b := node("a", nil, true), node("b", nil, true)
	a.Status.NodeInfo.BootID, b.Status.NodeInfo.BootID = "x", "x"
	if got := kernelsOf(Placement{Server: a, Client: b}); len(got) != 1 || strings.Join(got[0].nodes, ",") != "a,b" {
		t.Errorf("one kernel: %+v", got)
	}
	b.Status.NodeInfo.BootID = "y"
	if got := kernelsOf(Placement{Server: a, Client: b}); len(got) != 0 {
		t.Errorf("two kernels, neither shared: %+v", got)
	}
	shared := map[string][]string{"y": {"b", "w9"}, "z": {"w7", "w8"}}
	if got := kernelsOf(Placement{Server: a, Client: b, SharedKernels: shared}); len(got) != 1 || got[0].bootID != "y" || strings.Join(got[0].nodes, ",") != "b" {
		t.Errorf("two kernels, b's shared with w9: %+v", got)
	}
	a.Status.NodeInfo.BootID, b.Status.NodeInfo.BootID = "", ""
	if got := kernelsOf(Placement{Server: a, Client: b}); len(got) != 0 {
		t.Errorf("no boot IDs: %+v", got)
	}
	if got := kernelLeaseName("AB_c/d-"); got != "cnibench-kernel-ab-c-d" {
		t.Errorf("kernelLeaseName = %q", got)
	}
}

// NodeBootIDs finds the nodes as preflight does (by name or selector)
// and reports their boot IDs, for the runner's machine-lock decision.
func TestNodeBootIDs(t *testing.T) {
	cfg := Config{}.WithDefaults()
	w1, w2 := node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true)
	w1.Status.NodeInfo.BootID = testBoot
	got, err := nodeBootIDs(context.Background(), fake.NewClientset(w1, w2), cfg)
	if err != nil || len(got) != 2 || got["w1"] != testBoot || got["w2"] != "" {
		t.Errorf("nodeBootIDs = %v, %v", got, err)
	}
	if _, err := nodeBootIDs(context.Background(), fake.NewClientset(w1), cfg); !errors.Is(err, ErrNoNode) {
		t.Errorf("no client node: %v", err)
	}
}

// kernelCluster is kubeFixture's cluster, with boot IDs set on its nodes
// by name (a node not yet in it is added, Ready, as another node of the
// cluster) and access reviews that deny the leases in the agent's
// namespace when denyKernel (RBAC applied before the kernel claims),
// counting those asked for in asked.
func kernelCluster(t *testing.T, cfg Config, boots map[string]string, denyKernel bool, asked *int) (*fake.Clientset, Placement) {
	t.Helper()
	cs, place := kubeFixture(t, cfg)
	ctx := context.Background()
	for name, id := range boots {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			n, err = cs.CoreV1().Nodes().Create(ctx, node(name, nil, true), metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		n.Status.NodeInfo.BootID = id
		if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	refuseDryRun(cs, "pods", nil)
	refuseDryRun(cs, "services", nil)
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		kernel := ra.Resource == "leases" && ra.Namespace == cfg.AgentNamespace
		if kernel {
			*asked++
		}
		r.Status.Allowed = !kernel || !denyKernel
		return true, r, nil
	})
	return cs, place
}

// TestDistinctKernelsClaimNone: on a cluster of machines with a kernel
// each (every node its own boot ID) the agents' node locks keep runs
// apart, so a run claims no kernel, and preflight neither asks for the
// Lease rights in the agent's namespace nor refuses RBAC applied before
// the claims, which lacks them. Before, every install had to re-apply its
// RBAC, and every run made a kernel Lease no other run could share.
func TestDistinctKernelsClaimNone(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	var asked int
	cs, _ := kernelCluster(t, cfg, map[string]string{"w1": "boot-a", "w2": "boot-b", "w3": "boot-c"}, true, &asked)
	ctx := context.Background()
	place, err := Preflight(ctx, cs, cfg)
	if err != nil {
		t.Fatalf("Preflight without lease rights in the agent namespace, on distinct kernels = %v", err)
	}
	if asked != 0 || len(place.SharedKernels) != 0 {
		t.Errorf("distinct kernels: %d access reviews of the agent namespace's leases, shared %v", asked, place.SharedKernels)
	}
	c, err := Up(ctx, cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if l, _ := cs.CoordinationV1().Leases(cfg.AgentNamespace).List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("distinct kernels: the run made %d Leases in the agent namespace", len(l.Items))
	}
	run, err := cs.CoordinationV1().Leases(cfg.Namespace).Get(ctx, leaseName("r1"), metav1.GetOptions{})
	if err != nil || run.Annotations[annotationKernels] != "" {
		t.Errorf("the run's Lease %v (%v) names kernel claims", run, err)
	}
}

// TestSharedKernelClaimed: a run's node sharing its kernel with another
// node of the cluster (not the run's), or the run's two nodes sharing
// one, makes preflight check the Lease rights in the agent's namespace,
// refusing RBAC without them with why, and the run claim that kernel
// (and only that one) as before.
func TestSharedKernelClaimed(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	ctx := context.Background()
	for _, tc := range []struct {
		boots map[string]string
		say   string
		nodes string
	}{
		{map[string]string{"w1": testBoot, "w2": "boot-b", "w9": testBoot}, "nodes w1 and w9 share one kernel (kind, k3d, one machine's test cluster; boot ID " + testBoot + ")", "w1"},
		{map[string]string{"w1": testBoot, "w2": testBoot}, "nodes w1 and w2 share one kernel (kind, k3d, one machine's test cluster; boot ID " + testBoot + ")", "w1,w2"},
	} {
		var asked int
		cs, _ := kernelCluster(t, cfg, tc.boots, true, &asked)
		_, err := Preflight(ctx, cs, cfg)
		for _, want := range []string{"create leases.coordination.k8s.io in namespace " + cfg.AgentNamespace, tc.say,
			"so the run claims it with a Lease in namespace " + cfg.AgentNamespace, "re-apply `cnibench kube manifests --rbac`"} {
			if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: Preflight = %v; want ErrForbidden saying %q", tc.boots, err, want)
			}
		}
		if asked != len(kernelPermissions) {
			t.Errorf("%v: %d access reviews of the agent namespace's leases", tc.boots, asked)
		}
		cs, _ = kernelCluster(t, cfg, tc.boots, false, &asked)
		place, err := Preflight(ctx, cs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Up(ctx, cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := cs.CoordinationV1().Leases(cfg.AgentNamespace).List(ctx, metav1.ListOptions{})
		if len(l.Items) != 1 || l.Items[0].Name != kernelLeaseName(testBoot) || l.Items[0].Annotations[annotationNodes] != tc.nodes {
			t.Errorf("%v: kernel Leases %+v; want one of %s", tc.boots, l.Items, tc.nodes)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if l, _ := cs.CoordinationV1().Leases(cfg.AgentNamespace).List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
			t.Errorf("%v: Close left %d kernel Leases", tc.boots, len(l.Items))
		}
	}
}

// The kernel claims are renewed only once they are the run's, each from
// its own claim on: a tick while claimKernels watches a dead run's claim
// (named for that run) renews none, so it is not taken for a takeover; a
// claim made is renewed at the next tick, while a second kernel's is
// still watched. Once a claim is lost (tick returns none) no claim is
// renewed again.
func TestRenewLoopRenewsEachClaimOnceMade(t *testing.T) {
	ticks := make(chan time.Time)
	done := make(chan struct{})
	claims := make(chan kernel, 2)
	got := make(chan []string)
	lose := false
	go renewLoop(ticks, done, claims, func(ks []kernel) []kernel {
		var ids []string
		for _, k := range ks {
			ids = append(ids, k.bootID)
		}
		drop := lose // read before got: the test sets it between ticks
		got <- ids
		if drop {
			return nil
		}
		return ks
	})
	defer close(done)
	step := func(want string) {
		t.Helper()
		ticks <- time.Now()
		if ids := strings.Join(<-got, ","); ids != want {
			t.Errorf("tick renewed %q, want %q", ids, want)
		}
	}
	step("")
	claims <- kernel{bootID: "k1"}
	step("k1")
	step("k1")
	claims <- kernel{bootID: "k2"}
	lose = true
	step("k1,k2")
	lose = false
	claims <- kernel{bootID: "k3"}
	step("")
}

// A claim deleted under the run (cleanup --kube, or the run that took it
// over has ended) is lost: the next run creates it at once, with no
// watch, and would tune beside this one.
func TestDeletedKernelClaimIsLost(t *testing.T) {
	cs, place, c := upOnOneKernel(t)
	ctx := context.Background()
	if err := cs.CoordinationV1().Leases(DefaultAgentNamespace).Delete(ctx, kernelLeaseName(testBoot), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := renewKernels(cs, c.cfg, kernelsOf(place))
	var kl *KernelLostError
	if !errors.As(err, &kl) || !kl.Deleted || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("renewing a deleted claim = %v, want a *KernelLostError saying it was deleted", err)
	}
}

// A claim found lost by the last renewal, in flight while Close ended
// the sessions, or after the run's last call, still fails Close: the
// run's last trials may have shared the kernel with the run that took
// it, and no call of the run's said so.
func TestCloseReportsALateLoss(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	lost := &KernelLostError{BootID: testBoot, Deleted: true}
	c := &Cluster{cs: fake.NewClientset(cfg.Lease(time.Now())), cfg: cfg}
	c.stopLease = func() { c.lose(lost) } // the renewal in flight finds it
	if err := c.Close(); !errors.Is(err, lost) {
		t.Errorf("Close = %v, want the lost claim", err)
	}
	early := &Cluster{cs: fake.NewClientset(cfg.Lease(time.Now())), cfg: cfg}
	early.lose(lost)
	if err := early.Close(); !errors.Is(err, lost) {
		t.Errorf("Close = %v, want the claim lost after the run's last call", err)
	}
}

// upOnOneKernel is run r1 up on two nodes of one kernel (testBoot), which
// it claims; Cleanup closes it.
func upOnOneKernel(t *testing.T) (*fake.Clientset, Placement, *Cluster) {
	t.Helper()
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	place.Server.Status.NodeInfo.BootID, place.Client.Status.NodeInfo.BootID = testBoot, testBoot
	c, err := Up(context.Background(), cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return cs, place, c
}
