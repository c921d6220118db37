package kube

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// teardownWatch records, on a fake cluster, when run r1's pods were
// marked Terminating and went, when its Lease was renewed and deleted.
type teardownWatch struct {
	mu                 sync.Mutex
	terminating, gone  time.Time
	renewals           []time.Time
	leaseDeleted       time.Time
	podsAtLeaseDelete  int
	podsStayForever    bool
	failListAfterPods  bool
	podDeletesReceived int
}

func (w *teardownWatch) renewedBetween(from, to time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.renewals {
		if r.After(from) && r.Before(to) {
			n++
		}
	}
	return n
}

// upTearingDownSlowly is run r1 up on two nodes of one kernel (testBoot),
// which it claims, with a server pod, its Service and a client pod, on a
// fake cluster whose pods terminate as a real one's do: deleting one
// marks it Terminating, and it goes after terminate (never, with
// w.podsStayForever). Cleanup closes it.
func upTearingDownSlowly(t *testing.T, terminate time.Duration, w *teardownWatch) (*fake.Clientset, *Cluster) {
	t.Helper()
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	place.Server.Status.NodeInfo.BootID, place.Client.Status.NodeInfo.BootID = testBoot, testBoot
	// The fake's reactors are set before Up: its Lease renewal reads
	// them unlocked.
	slowTeardown(cs, cfg, terminate, w)
	c, err := Up(context.Background(), cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, o := range []runtime.Object{cfg.ServerPod(0, "w1"), cfg.ServerService(0), cfg.ClientPod(0, "w2")} {
		if err := cs.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return cs, c
}

func slowTeardown(cs *fake.Clientset, cfg Config, terminate time.Duration, w *teardownWatch) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	workload := map[string]bool{cfg.ServerPod(0, "w1").Name: true, cfg.ClientPod(0, "w2").Name: true}
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		if a.GetNamespace() != cfg.Namespace || !workload[name] {
			return false, nil, nil
		}
		obj, err := cs.Tracker().Get(pods, a.GetNamespace(), name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*corev1.Pod)
		if p.DeletionTimestamp == nil {
			now := metav1.Now()
			p.DeletionTimestamp = &now
			if err := cs.Tracker().Update(pods, p, a.GetNamespace()); err != nil {
				return true, nil, err
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.podDeletesReceived++
		if w.terminating.IsZero() {
			w.terminating = time.Now()
		}
		if !w.podsStayForever {
			ns := a.GetNamespace()
			time.AfterFunc(terminate, func() {
				_ = cs.Tracker().Delete(pods, ns, name)
				w.mu.Lock()
				w.gone = time.Now()
				w.mu.Unlock()
			})
		}
		return true, nil, nil
	})
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.failListAfterPods && w.podDeletesReceived > 0 {
			return true, nil, apierrors.NewServiceUnavailable("the API server went away")
		}
		return false, nil, nil
	})
	cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == cfg.Namespace && a.(k8stesting.UpdateAction).GetObject().(metav1.Object).GetName() == leaseName(cfg.RunID) {
			w.mu.Lock()
			w.renewals = append(w.renewals, time.Now())
			w.mu.Unlock()
		}
		return false, nil, nil
	})
	cs.PrependReactor("delete", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == cfg.Namespace && a.(k8stesting.DeleteAction).GetName() == leaseName(cfg.RunID) {
			left, _ := cs.Tracker().List(pods, corev1.SchemeGroupVersion.WithKind("Pod"), cfg.Namespace)
			w.mu.Lock()
			w.leaseDeleted, w.podsAtLeaseDelete = time.Now(), len(left.(*corev1.PodList).Items)
			w.mu.Unlock()
		}
		return false, nil, nil
	})
}

// shortRenewals has runs renew their Leases every d for the test.
func shortRenewals(t *testing.T, d time.Duration) {
	t.Helper()
	old := renewEvery
	renewEvery = d
	t.Cleanup(func() { renewEvery = old })
}

// A run's Lease is renewed while Close waits for its pods to terminate,
// and deleted only once they are gone: a new run's preflight takes a
// stale Lease for a runner that died without its teardown, and pods
// often take longer than LeaseSeconds to go. Close stopped renewing
// first, so another run started while this one's pods terminated was
// refused, told to `cleanup --kube` a run that was cleaning up itself.
// The kernel claim the run holds is renewed with it, and released without
// a renewal taking it for lost.
func TestCloseRenewsTheLeaseWhilePodsTerminate(t *testing.T) {
	shortRenewals(t, 10*time.Millisecond)
	w := &teardownWatch{}
	// Many renewals long, as LeaseSeconds is short beside a slow pod's
	// grace period.
	cs, c := upTearingDownSlowly(t, 300*time.Millisecond, w)
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	w.mu.Lock()
	terminating, gone, deleted, podsLeft := w.terminating, w.gone, w.leaseDeleted, w.podsAtLeaseDelete
	w.mu.Unlock()
	if terminating.IsZero() || gone.IsZero() || deleted.IsZero() {
		t.Fatalf("pods marked terminating at %v, gone at %v, Lease deleted at %v: want all three", terminating, gone, deleted)
	}
	if n := w.renewedBetween(terminating, gone); n == 0 {
		t.Errorf("the Lease was not renewed in the %v the pods took to terminate: it goes stale while the run tears down", gone.Sub(terminating).Round(time.Millisecond))
	}
	if podsLeft != 0 || deleted.Before(gone) {
		t.Errorf("the Lease was deleted with %d pods left (at %v, pods gone at %v), want last", podsLeft, deleted, gone)
	}
	if n := w.renewedBetween(deleted, time.Now().Add(time.Hour)); n != 0 {
		t.Errorf("the Lease was renewed %d times after its deletion", n)
	}
	if _, err := cs.CoordinationV1().Leases(DefaultAgentNamespace).Get(context.Background(), kernelLeaseName(testBoot), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kernel claim after Close: %v, want released", err)
	}
}

// A teardown cut short while the pods terminate (here the API server
// goes away) still stops renewing the Lease, and leaves it: it goes stale,
// and `cleanup --kube` finishes the job.
func TestCloseCutShortLeavesALeaseToGoStale(t *testing.T) {
	shortRenewals(t, 10*time.Millisecond)
	w := &teardownWatch{podsStayForever: true, failListAfterPods: true}
	cs, c := upTearingDownSlowly(t, 0, w)
	err := c.Close()
	if err == nil {
		t.Fatal("Close = nil, want the failed wait for the pods")
	}
	var kl *KernelLostError
	if errors.As(err, &kl) {
		t.Errorf("Close = %v: a cut-short teardown is no lost claim", err)
	}
	if c.stopLease != nil {
		t.Error("Close left the Lease renewal running")
	}
	w.mu.Lock()
	n := len(w.renewals)
	w.mu.Unlock()
	time.Sleep(10 * renewEvery)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.renewals) != n {
		t.Errorf("the Lease was renewed %d times after Close returned", len(w.renewals)-n)
	}
	if !w.leaseDeleted.IsZero() {
		t.Error("the Lease was deleted though the pods were not gone")
	}
	if _, err := cs.CoordinationV1().Leases(c.cfg.Namespace).Get(context.Background(), leaseName(c.cfg.RunID), metav1.GetOptions{}); err != nil {
		t.Errorf("the run's Lease after a cut-short Close: %v, want it left", err)
	}
}
