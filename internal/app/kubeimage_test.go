package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/runner"
)

// --image given is passed on as such: a run without it takes the
// installed agent's image (kube.Config.ImageGiven), one with it must
// name that image.
func TestKubeImageGiven(t *testing.T) {
	for args, given := range map[string]bool{"": false, "--image x:1": true, "--image docker.io/cnibench/cnibench:dev": true} {
		var f kubeFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if got := f.config().ImageGiven; got != given {
			t.Errorf("%q: ImageGiven %v, want %v", args, got, given)
		}
	}
}

// Agents still on two images after --pod-timeout (their DaemonSet
// rolling out) stop a run at preflight as the cluster's passing state
// (engine.ErrTransient): exit 1, a runtime failure, with the engine's
// message; any other preflight refusal stays bad input, exit 2. A dry
// run's preflight says the same.
func TestAgentsMidRolloutExitFailure(t *testing.T) {
	differ := errors.New("the agents run different images: the agent on node w1 runs a, the one on node w2 b")
	for _, tc := range []struct {
		err  error
		want int
	}{
		{engine.Transient(differ), ExitFailure},
		{differ, ExitBadInput},
	} {
		for what, err := range map[string]error{"run": runFailure("", &runner.PreflightError{Err: tc.err}), "dry run": refusal(tc.err)} {
			var errb bytes.Buffer
			if code := exitCode(context.Background(), newRoot(io.Discard, io.Discard), err, &errb); code != tc.want || !strings.Contains(errb.String(), differ.Error()) {
				t.Errorf("%s, transient %v: exit %d, want %d: %s", what, errors.Is(tc.err, engine.ErrTransient), code, tc.want, errb.String())
			}
		}
	}
}

// Agents not ready at --pod-timeout, as the cluster's wait for them
// (preflight's and Up's) reports them: agent pods that exist but are not
// ready (an image still pulling) are the cluster's passing state, exit
// 1; a node with no agent pod (the DaemonSet's node selector leaves it
// out) is the setup's, exit 2, as it was. Both exited 2 before. An
// agent pod whose image its node failed to pull (ImagePullBackOff)
// fails at once, as the passing state too: exit 1, not 2.
func TestAgentsNotReadyExitCode(t *testing.T) {
	lbl := map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelRole: kube.RoleAgent}
	pod := func(name, node, waiting string) runtime.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kube.DefaultAgentNamespace, Labels: lbl},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if waiting != "" {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}}}
		}
		return p
	}
	pending := func(name, node string) runtime.Object { return pod(name, node, "") }
	w1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}}
	w2 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w2"}}
	cfg := kube.Config{RunID: "r1", Timeout: 50 * time.Millisecond}.WithDefaults()
	for _, tc := range []struct {
		name string
		pods []runtime.Object
		says string
		want int
	}{
		{"pulling", []runtime.Object{pending("a1", "w1"), pending("a2", "w2")}, "agent not running on node w1, w2 after", ExitFailure},
		{"no pod", nil, "agent not running on node w1, w2 after", ExitBadInput},
		{"pull failed", []runtime.Object{pod("a1", "w1", "ImagePullBackOff"), pending("a2", "w2")}, "run again once it is pulled", ExitFailure},
	} {
		cs := fake.NewClientset(append([]runtime.Object{cfg.AgentDaemonSet(nil)}, tc.pods...)...)
		_, err := kube.Up(context.Background(), cs, nil, cfg, kube.Placement{Server: w1, Client: w2}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for what, err := range map[string]error{"run": runFailure("", &runner.PreflightError{Err: err}), "dry run": refusal(err)} {
			var errb bytes.Buffer
			if code := exitCode(context.Background(), newRoot(io.Discard, io.Discard), err, &errb); code != tc.want {
				t.Errorf("%s, %s: exit %d, want %d: %s", tc.name, what, code, tc.want, errb.String())
			}
		}
	}
}
