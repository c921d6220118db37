package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// What a start-up burst leaves is the next burst's problem: every burst
// names its pods cnb-RUN-start-I, so a pod of this one still there
// fails the next one's create (AlreadyExists), its retries, and every
// later trial of the workload. A burst pod that may still exist when
// StartPods returns is said (engine.ErrLeftBehind, naming the pod and
// the cleanup command), so the runner ends the run; one that failed to
// start but is gone is an ordinary failure, retried. Before, every
// failure came back unmarked.

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// burstPodsLeft are the names of the start-up pods in cs's run
// namespace.
func burstPodsLeft(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods("cnibench").List(context.Background(), metav1.ListOptions{LabelSelector: LabelRole + "=" + RoleStartup})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

// onBurstPod has cs's verb on pods answered by do for the start-up pod
// named name; the rest go on down the chain.
func onBurstPod(cs *fake.Clientset, verb, name string, do func(k8stesting.Action) (runtime.Object, error)) {
	cs.PrependReactor(verb, "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var got string
		switch a := a.(type) {
		case k8stesting.CreateAction:
			got = a.GetObject().(*corev1.Pod).Name
		case k8stesting.DeleteAction:
			got = a.GetName()
		case k8stesting.GetAction:
			got = a.GetName()
		}
		if got != name {
			return false, nil, nil
		}
		obj, err := do(a)
		return true, obj, err
	})
}

func TestStartPodsSaysWhatItLeft(t *testing.T) {
	stuck := startupName("r1", 1)
	refused := func(k8stesting.Action) (runtime.Object, error) {
		return nil, errors.New("etcdserver: request timed out")
	}
	// A pod whose deletion the API took but which stays: a finalizer,
	// a kubelet that never confirms (its node down).
	stays := func(k8stesting.Action) (runtime.Object, error) { return nil, nil }
	for _, tc := range []struct {
		name  string
		react func(cs *fake.Clientset)
		want  string
	}{
		{"delete refused", func(cs *fake.Clientset) { onBurstPod(cs, "delete", stuck, refused) },
			"delete pod cnb-r1-start-1: etcdserver: request timed out"},
		{"still there", func(cs *fake.Clientset) { onBurstPod(cs, "delete", stuck, stays) },
			"pod cnb-r1-start-1 still there"},
		{"not known gone", func(cs *fake.Clientset) {
			onBurstPod(cs, "delete", stuck, stays)
			onBurstPod(cs, "get", stuck, refused)
		}, "pod cnb-r1-start-1 not seen gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{RunID: "r1", Timeout: 300 * time.Millisecond}.WithDefaults()
			cs, place := kubeFixture(t, cfg)
			c := upQuiet(t, cs, cfg, place)
			before := len(cs.ReactionChain)
			tc.react(cs)
			// Close (the run's teardown) then deletes the pod at once,
			// not waiting out its two minutes.
			added := len(cs.ReactionChain) - before
			t.Cleanup(func() { cs.ReactionChain = cs.ReactionChain[added:] })
			_, err := c.StartPods(context.Background(), "w1", 3, 3)
			if !errors.Is(err, engine.ErrLeftBehind) {
				t.Fatalf("error %v, want it marked left behind", err)
			}
			for _, want := range []string{tc.want, "could not see a pod gone from namespace cnibench", "cnibench cleanup --kube --run r1"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if left := burstPodsLeft(t, cs); len(left) != 1 || left[0] != stuck {
				t.Errorf("burst pods left %v, want only %s", left, stuck)
			}
		})
	}
}

// A pod that never got Ready used up the burst's timeout: its deletion
// still has a timeout of its own, and waits the pods' graceful
// termination out. Before, it shared the used-up one, so the burst
// returned with its pods still terminating, holding their names
// against the next burst's.
func TestStartPodsTimedOutDeletesInTime(t *testing.T) {
	cfg := Config{RunID: "r1", Timeout: time.Second}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	c := upQuiet(t, cs, cfg, place)
	onBurstPod(cs, "create", startupName("r1", 0), func(a k8stesting.Action) (runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		return p, cs.Tracker().Add(p)
	})
	// A kubelet's graceful deletion: marked, gone 300 ms later.
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		obj, err := cs.Tracker().Get(podsGVR, "cnibench", name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*corev1.Pod)
		now := metav1.Now()
		p.DeletionTimestamp = &now
		if err := cs.Tracker().Update(podsGVR, p, "cnibench"); err != nil {
			return true, nil, err
		}
		time.AfterFunc(300*time.Millisecond, func() { _ = cs.Tracker().Delete(podsGVR, "cnibench", name) })
		return true, nil, nil
	})
	_, err := c.StartPods(context.Background(), "w1", 2, 2)
	if err == nil || !strings.Contains(err.Error(), "pod cnb-r1-start-0 on w1 not ready") {
		t.Fatalf("error %v, want pod 0 not ready", err)
	}
	if errors.Is(err, engine.ErrLeftBehind) {
		t.Errorf("error %v marked left behind, though its pods are gone", err)
	}
	if left := burstPodsLeft(t, cs); len(left) != 0 {
		t.Errorf("burst pods %v still there when the burst returned", left)
	}
}

// A create call that failed after the API stored the pod (a timeout)
// leaves a pod the burst did not know it made: it is deleted with the
// rest, and the failure is an ordinary one. Before, only pods whose
// create succeeded were deleted.
func TestStartPodsDeletesWhatAFailedCreateMade(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	c := upQuiet(t, cs, cfg, place)
	onBurstPod(cs, "create", startupName("r1", 1), func(a k8stesting.Action) (runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Ready: true}}}
		if err := cs.Tracker().Add(p); err != nil {
			return nil, err
		}
		return nil, apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	})
	// And one the API refused: its deletion finds nothing, no error.
	onBurstPod(cs, "create", startupName("r1", 2), func(k8stesting.Action) (runtime.Object, error) {
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, startupName("r1", 2), errors.New("quota"))
	})
	_, err := c.StartPods(context.Background(), "w1", 3, 3)
	if err == nil || !strings.Contains(err.Error(), "create pod cnb-r1-start-1") || !strings.Contains(err.Error(), "create pod cnb-r1-start-2") {
		t.Fatalf("error %v, want pods 1 and 2's creates", err)
	}
	if errors.Is(err, engine.ErrLeftBehind) {
		t.Errorf("error %v marked left behind, though its pods are gone", err)
	}
	if left := burstPodsLeft(t, cs); len(left) != 0 {
		t.Errorf("burst pods %v still there when the burst returned", left)
	}
}

// A deletion the watch did not show (it missed the event, or the server
// ended it) is asked for: a pod the API says is gone left nothing, and
// its burst fails as an ordinary trial, its teardown untimed. Before,
// it was "still there".
func TestStartPodsAsksForADeletionNotSeen(t *testing.T) {
	cfg := Config{RunID: "r1", Timeout: 300 * time.Millisecond}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	c := upQuiet(t, cs, cfg, place)
	cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := cs.Tracker().Watch(podsGVR, a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		return true, watch.Filter(w, func(ev watch.Event) (watch.Event, bool) { return ev, ev.Type != watch.Deleted }), nil
	})
	_, err := c.StartPods(context.Background(), "w1", 2, 2)
	if err == nil || !strings.Contains(err.Error(), "pod cnb-r1-start-0: its deletion was not seen in the watch") {
		t.Fatalf("error %v, want pod 0's deletion not seen", err)
	}
	if errors.Is(err, engine.ErrLeftBehind) {
		t.Errorf("error %v marked left behind, though its pods are gone", err)
	}
}
