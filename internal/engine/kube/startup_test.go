package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// TestStartPods: a burst on a fake API whose "kubelet" makes pods ready
// at creation, with the sandbox condition: every pod is timed with its
// phases summing to its set-up, and the burst's pods are gone after.
func TestStartPods(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	var created []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if p.Labels[LabelRole] != RoleStartup {
			return false, nil, nil
		}
		// The sandbox first, the container a little later, as a kubelet
		// reports them: 200 ms apart and after the create, so a creating
		// goroutine or the watch stalled on a loaded machine still sees
		// them in order (at 20 ms a stall folded the sandbox phase).
		created = append(created, p.Name)
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		if err := cs.Tracker().Add(p); err != nil {
			return true, nil, err
		}
		go func(p *corev1.Pod) {
			pods := corev1.SchemeGroupVersion.WithResource("pods")
			time.Sleep(200 * time.Millisecond)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}}
			_ = cs.Tracker().Update(pods, p.DeepCopy(), p.Namespace)
			time.Sleep(200 * time.Millisecond)
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Ready: true}}
			_ = cs.Tracker().Update(pods, p, p.Namespace)
		}(p.DeepCopy())
		return true, p, nil
	})
	c, err := Up(context.Background(), cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	times, err := c.StartPods(context.Background(), "w1", 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 5 || len(created) != 5 {
		t.Fatalf("%d times, %d pods created; want 5", len(times), len(created))
	}
	for _, pt := range times {
		var sum time.Duration
		var names []string
		for _, ph := range pt.Phases {
			sum += ph.Took
			names = append(names, ph.Name)
		}
		if sum != pt.Setup || pt.Ready < pt.Setup || pt.Node != "w1" || pt.Teardown <= 0 {
			t.Errorf("pod %s: phases %v sum %v, set-up %v, ready %v, teardown %v, node %s", pt.Pod, pt.Phases, sum, pt.Setup, pt.Ready, pt.Teardown, pt.Node)
		}
		if !slices.Equal(names, []string{PhaseCreate, PhaseSandbox, PhaseContainers}) {
			t.Errorf("pod %s: phases %v", pt.Pod, names)
		}
	}
	left, _ := cs.CoreV1().Pods(cfg.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRole + "=" + RoleStartup})
	if len(left.Items) != 0 {
		t.Errorf("%d burst pods left", len(left.Items))
	}
}

// TestStartPodsFailedPod: a pod the kubelet fails fails the burst with its
// reason, and every pod made is deleted all the same: an ordinary
// failure, not one that left something.
func TestStartPodsFailedPod(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == startupName("r1", 1) {
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
				{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "no such image"}}}}}
			return true, p, cs.Tracker().Add(p)
		}
		return false, nil, nil
	})
	c, err := Up(context.Background(), cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.StartPods(context.Background(), "w1", 3, 3)
	if err == nil || !strings.Contains(err.Error(), "ErrImagePull") {
		t.Errorf("error %v, want the pod's ErrImagePull", err)
	}
	// Deleted, the failed pod left nothing: the trial may be retried.
	if errors.Is(err, engine.ErrLeftBehind) {
		t.Errorf("error %v marked left behind, though its pods are gone", err)
	}
	left, _ := cs.CoreV1().Pods(cfg.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRole + "=" + RoleStartup})
	if len(left.Items) != 0 {
		t.Errorf("%d burst pods left after a failed burst", len(left.Items))
	}
	if _, err := c.StartPods(context.Background(), "elsewhere", 1, 1); err == nil {
		t.Error("a node outside the run was accepted")
	}
	if _, err := c.StartPods(context.Background(), "w1", 2, 3); err == nil {
		t.Error("more at once than pods was accepted")
	}
}

var _ engine.PodStarter = (*Cluster)(nil)
