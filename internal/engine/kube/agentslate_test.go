package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnibench/cnibench/internal/engine"
)

// Agents not ready at --pod-timeout: a node with no agent pod at all is
// left out by the DaemonSet's node selector, the setup's doing, which
// waiting will not change (bad input, exit 2); an agent pod that exists
// but is not ready (its image still pulling, its container being
// created) is the cluster's state of the moment (engine.ErrTransient,
// exit 1), as agents mid-rollout are. Both exited 2 before. A node of
// each is the setup's. An agent pod whose image its node could not pull
// (ErrImagePull, ImagePullBackOff) fails at once, as before, but as the
// nodes' passing state (a registry or the network failing for a while:
// the image's install pulled it), so that a run's set-up failing on it
// ends the run to be resumed rather than give its cells up; it was not
// transient before. Other problems waiting will not fix (a crash loop,
// an image the pull policy forbids pulling) stay lasting, also beside a
// failed pull.
func TestWaitAgentsLateTransientOnlyWithPods(t *testing.T) {
	mk, waiting, ready := agentPod, agentWaiting, agentReady
	cfg := Config{Timeout: 100 * time.Millisecond}.WithDefaults()
	ds := cfg.AgentDaemonSet(map[string]string{"bench": "y"})
	for _, tc := range []struct {
		name      string
		pods      []runtime.Object
		transient bool
		want      []string
	}{
		{"pulling", []runtime.Object{mk("a1", "w1", waiting("ContainerCreating")), mk("a2", "w2", ready)}, true,
			[]string{"agent not running on node w1 after 100ms", "an agent pod, not ready yet, on node w1", "run again once it is ready"}},
		{"pending", []runtime.Object{mk("a1", "w1", corev1.PodStatus{Phase: corev1.PodPending}), mk("a2", "w2", corev1.PodStatus{Phase: corev1.PodPending})}, true,
			[]string{"agent not running on node w1, w2 after 100ms", "not ready yet, on node w1, w2: pending"}},
		{"no pod", []runtime.Object{mk("a2", "w2", ready)}, false,
			[]string{"agent not running on node w1 after 100ms", "no cnibench agent pod on node w1", "node selector must match", "--agent-nodes"}},
		{"no pod and one pulling", []runtime.Object{mk("a2", "w2", waiting("ContainerCreating"))}, false,
			[]string{"agent not running on node w1, w2 after", "no cnibench agent pod on node w1", "not ready yet, on node w2"}},
		{"image not pulled", []runtime.Object{mk("a1", "w1", waiting("ErrImagePull")), mk("a2", "w2", ready)}, true,
			[]string{"agent not running on node w1: a1 on w1: ErrImagePull", "could not pull the agent's image", "run again once it is pulled"}},
		{"pull backing off", []runtime.Object{mk("a1", "w1", waiting("ImagePullBackOff")), mk("a2", "w2", waiting("ErrImagePull"))}, true,
			[]string{"agent not running on node w1, w2: a", "run again once it is pulled"}},
		{"pull forbidden", []runtime.Object{mk("a1", "w1", waiting("ErrImageNeverPull")), mk("a2", "w2", ready)}, false,
			[]string{"ErrImageNeverPull"}},
		{"pull failed and a crash loop", []runtime.Object{mk("a1", "w1", waiting("ImagePullBackOff")), mk("a2", "w2", waiting("CrashLoopBackOff"))}, false,
			[]string{"agent not running on node w1, w2: a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{cfg: cfg, cs: fake.NewClientset(append([]runtime.Object{ds}, tc.pods...)...), poll: 10 * time.Millisecond}
			_, err := c.waitAgents(context.Background(), "w1", "w2")
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, engine.ErrTransient) != tc.transient {
				t.Errorf("transient %v, want %v: %v", errors.Is(err, engine.ErrTransient), tc.transient, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if !tc.transient && strings.Contains(err.Error(), "run again once it is pulled") {
				t.Errorf("%v\nsays to run again, for a problem that waiting will not fix", err)
			}
		})
	}
}

// upQuiet is a cluster Up on cs whose agents answer every tool call with
// nothing and exit 0, polling every millisecond, closed at the test's
// end.
func upQuiet(t *testing.T, cs *fake.Clientset, cfg Config, place Placement) *Cluster {
	t.Helper()
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: func(string, []string) (string, int) { return "", 0 }}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.poll = time.Millisecond
	return c
}

// agentPod is node's agent pod name in status st.
func agentPod(name, node string, st corev1.PodStatus) *corev1.Pod {
	lbl := map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultAgentNamespace, Labels: lbl}, Spec: corev1.PodSpec{NodeName: node}, Status: st}
}

// agentWaiting is a pending pod's status, its container waiting for
// reason; agentReady a running, ready one's.
func agentWaiting(reason string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}}
}

var agentReady = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Ready: true}}}
