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
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// workloadObjects are the names of cs's pods and Services in the run
// namespace, sorted: "pod/NAME", "service/NAME".
func workloadObjects(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	var out []string
	pods, err := cs.CoreV1().Pods("cnibench").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out = append(out, "pod/"+p.Name)
	}
	svcs, err := cs.CoreV1().Services("cnibench").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		out = append(out, "service/"+s.Name)
	}
	slices.Sort(out)
	return out
}

// tracked is how many pairs c tracks.
func tracked(c *Cluster) int { return len(c.servers) }

// onDelete has cs's deletes of resource answered by do (the first
// reactor), until the returned function removes it.
func onDelete(cs *fake.Clientset, resource string, do func(name string) error) (remove func()) {
	cs.PrependReactor("delete", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, do(a.(k8stesting.DeleteAction).GetName())
	})
	return func() { cs.ReactionChain = cs.ReactionChain[1:] }
}

// A scale-down that could not delete its pods (a delete refused, or a
// pod stuck terminating past --pod-timeout) says so as
// engine.ErrLeftBehind, so that the runner ends the run rather than make
// pods again beside them, and keeps tracking the pairs until they are
// gone: a later Scale(0) deletes them. Before, the tracking was cut
// before the wait and the error was a plain one, a set-up failure to
// retry: the retry's Scale(0) waited only for the pods still tracked,
// the run went on beside the stuck ones, and a later, larger count met
// them as AlreadyExists and waited out its timeout.
func TestScaleDownLeftBehind(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource string
		do       func(name string) error
		want     string
	}{
		{"pod stuck terminating", "pods", func(string) error { return nil }, "2 pods still terminating after 50ms"},
		{"pod delete refused", "pods", func(string) error { return errors.New("etcdserver: request timed out") },
			"delete pod cnb-r1-srv-1: etcdserver: request timed out"},
		{"service delete refused", "services", func(string) error { return errors.New("etcdserver: request timed out") },
			"delete service cnb-r1-srv-1: etcdserver: request timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{RunID: "r1"}.WithDefaults()
			cs, place := kubeFixture(t, cfg)
			c := upQuiet(t, cs, cfg, place)
			if _, _, err := c.Scale(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
			c.cfg.Timeout = 50 * time.Millisecond
			remove := onDelete(cs, tc.resource, tc.do)
			_, _, err := c.Scale(context.Background(), 1)
			if !errors.Is(err, engine.ErrLeftBehind) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("scale down: %v; want engine.ErrLeftBehind saying %q", err, tc.want)
			}
			if tracked(c) != 2 {
				t.Errorf("%d pairs tracked after the failed scale-down, want both until their pods are gone", tracked(c))
			}
			remove()
			if _, _, err := c.Scale(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
			if left := workloadObjects(t, cs); len(left) != 0 || tracked(c) != 0 {
				t.Errorf("after Scale(0): %v left, %d pairs tracked; want none", left, tracked(c))
			}
		})
	}
}

// Scale(0), which the runner asks after a failed set-up, deletes every
// workload pod and Service of the run by its labels, tracked or not,
// and waits for the pods to be gone; other runs' objects and the run's
// other pods (a DNS probe) stay. One that cannot is
// engine.ErrLeftBehind, its pairs still tracked. Before, it deleted the
// pairs it tracked only, and its failures were plain errors.
func TestScaleToZeroDeletesTheRunsPods(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	other := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg, other.ServerPod(0, "w1"), other.ServerService(0))
	c := upQuiet(t, cs, cfg, place)
	if _, _, err := c.Scale(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// Untracked objects of the run: a pair its Scale lost track of.
	for _, o := range []runtime.Object{cfg.ServerPod(3, "w1"), cfg.ClientPod(3, "w2")} {
		if _, err := cs.CoreV1().Pods("cnibench").Create(context.Background(), o.(*corev1.Pod), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Services("cnibench").Create(context.Background(), cfg.ServerService(3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("cnibench").Create(context.Background(), cfg.ProbePod("w2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.cfg.Timeout = 50 * time.Millisecond
	remove := onDelete(cs, "pods", func(string) error { return nil }) // stuck terminating
	if _, _, err := c.Scale(context.Background(), 0); !errors.Is(err, engine.ErrLeftBehind) || !strings.Contains(err.Error(), "4 pods still terminating") {
		t.Errorf("Scale(0) with pods stuck: %v; want engine.ErrLeftBehind", err)
	}
	if tracked(c) != 1 {
		t.Errorf("%d pairs tracked after a failed Scale(0), want 1", tracked(c))
	}
	remove()
	srv, cli, err := c.Scale(context.Background(), 0)
	if err != nil || len(srv) != 0 || len(cli) != 0 {
		t.Fatalf("Scale(0): %v %v %v", srv, cli, err)
	}
	want := []string{"pod/cnb-r1-dns", "pod/cnb-r9-srv-0", "service/cnb-r9-srv-0"}
	if left := workloadObjects(t, cs); !slices.Equal(left, want) || tracked(c) != 0 {
		t.Errorf("after Scale(0): %v left, %d pairs tracked; want %v, none tracked", left, tracked(c), want)
	}
	// The next count is made afresh.
	if srv, _, err := c.Scale(context.Background(), 2); err != nil || len(srv) != 2 {
		t.Errorf("Scale(2) after: %v %v", srv, err)
	}
}

// A pair whose creation failed halfway (its client pod refused, by
// admission or a quota) has what it made deleted again before Scale
// returns (its server pod and Service), the pairs made before it still
// tracked, so that the runner's retry, and Close, leave nothing; a
// deletion that fails says so (engine.ErrLeftBehind). Before, the
// server pod and Service stayed untracked, which the retry's Scale(0)
// did not delete.
func TestScaleFailedPairLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		undoErr error
	}{
		{"deleted", nil},
		{"deletion failed", errors.New("etcdserver: request timed out")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{RunID: "r1"}.WithDefaults()
			cs, place := kubeFixture(t, cfg)
			c := upQuiet(t, cs, cfg, place)
			refused := errors.New(`pods "cnb-r1-cli-1" is forbidden: exceeded quota`)
			cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).Name == clientName("r1", 1) {
					return true, nil, refused
				}
				return false, nil, nil
			})
			remove := func() {}
			if tc.undoErr != nil {
				remove = onDelete(cs, "services", func(string) error { return tc.undoErr })
			}
			_, _, err := c.Scale(context.Background(), 2)
			if !errors.Is(err, refused) || !strings.Contains(err.Error(), "create pair 1") {
				t.Fatalf("Scale(2): %v; want pair 1's creation refused", err)
			}
			if left := errors.Is(err, engine.ErrLeftBehind); left != (tc.undoErr != nil) {
				t.Errorf("Scale(2): %v; engine.ErrLeftBehind %v, want %v", err, left, tc.undoErr != nil)
			}
			if tracked(c) != 1 {
				t.Errorf("%d pairs tracked, want pair 0", tracked(c))
			}
			want := []string{"pod/cnb-r1-cli-0", "pod/cnb-r1-srv-0", "service/cnb-r1-srv-0"}
			if tc.undoErr != nil {
				want = append(want, "service/cnb-r1-srv-1")
			}
			if left := workloadObjects(t, cs); !slices.Equal(left, want) {
				t.Errorf("after the failed Scale: %v, want %v", left, want)
			}
			remove()
		})
	}
}
