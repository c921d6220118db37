package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// installedDS is the agent DaemonSet with the status its controller
// would give it.
func installedDS(cfg Config, st appsv1.DaemonSetStatus) *appsv1.DaemonSet {
	ds := cfg.AgentDaemonSet(nil)
	ds.Generation, st.ObservedGeneration = 1, 1
	ds.Status = st
	return ds
}

// TestInstallWaitsForTheRollout: `kube install` says whether the agent
// pods came, not only that the DaemonSet was created. When admission
// refuses them (OpenShift SCC, Gatekeeper, Pod Security, Autopilot) the
// wait ends saying so, with the DaemonSet's FailedCreate events and the
// command that says more; before, install said "created" and the first
// run waited 3 minutes and blamed the node selector. A pod that cannot
// pull its image ends the wait at once.
func TestInstallWaitsForTheRollout(t *testing.T) {
	cfg := Config{}.WithDefaults()
	ns := cfg.AgentNamespace
	refused := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "DaemonSet", Name: AgentName, Namespace: ns},
		Reason:         "FailedCreate",
		Message:        `Error creating: pods "cnibench-agent-x" is forbidden: unable to validate against any security context constraint`,
	}
	other := refused.DeepCopy()
	other.Name, other.InvolvedObject.Name, other.Message = "e2", "someone-else", "not ours"
	pulling := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench-agent-p", Namespace: ns, Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}},
		Spec:       corev1.PodSpec{NodeName: "w1"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}}},
	}
	for _, tc := range []struct {
		name      string
		objs      []runtime.Object
		timeout   time.Duration
		said, err string
	}{
		{name: "ready", objs: []runtime.Object{installedDS(cfg, appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, UpdatedNumberScheduled: 2, NumberReady: 2})},
			said: "daemonset/cnibench-agent rolled out: 2 agent pod(s) ready"},
		{name: "no node", objs: []runtime.Object{installedDS(cfg, appsv1.DaemonSetStatus{})}, said: "no node matches its node selector"},
		{name: "refused", timeout: 100 * time.Millisecond,
			objs: []runtime.Object{installedDS(cfg, appsv1.DaemonSetStatus{DesiredNumberScheduled: 2}), refused, other},
			err:  "daemonset/cnibench-agent did not roll out after 100ms: 0 of 2 agent pod(s) ready: " + refused.Message + " (`kubectl -n cnibench-agent describe ds cnibench-agent` says more"},
		{name: "image", timeout: time.Hour,
			objs: []runtime.Object{installedDS(cfg, appsv1.DaemonSetStatus{DesiredNumberScheduled: 1}), pulling},
			err:  "did not roll out and will not: 0 of 1 agent pod(s) ready: cnibench-agent-p on w1: ImagePullBackOff: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			said, err := WaitRollout(context.Background(), fake.NewClientset(tc.objs...), ns, AgentName, tc.timeout, 10*time.Millisecond)
			if tc.err == "" && (err != nil || !strings.Contains(said, tc.said)) {
				t.Fatalf("WaitRollout = %q, %v; want %q", said, err, tc.said)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "not ours")) {
				t.Fatalf("WaitRollout = %q, %v; want an error saying %q", said, err, tc.err)
			}
		})
	}
}
