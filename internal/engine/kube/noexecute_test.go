package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestPreflightRefusesNoExecute: the run's pods name their node, which
// passes NoSchedule taints, but the kubelet refuses a pod that does not
// tolerate a NoExecute taint of its node: the run failed at its first
// Scale, after its Lease and node claims. Preflight refuses such a
// server or client node (exit 2), naming the taint and how to remove
// it; a taint the admitted pod tolerates (a namespace's default
// tolerations) for good, a node condition's, and NoSchedule pass. The
// advise inspection, which creates no pod, is not refused.
func TestPreflightRefusesNoExecute(t *testing.T) {
	bench := corev1.Taint{Key: "dedicated", Value: "bench", Effect: corev1.TaintEffectNoExecute}
	secs := int64(300)
	for _, tc := range []struct {
		name           string
		server, client []corev1.Taint
		admitted       []corev1.Toleration // added by the namespace's admission
		want           string
	}{
		{name: "server", server: []corev1.Taint{bench},
			want: "server node w1 has the taint dedicated=bench:NoExecute: the kubelet refuses a pod that does not tolerate a NoExecute taint"},
		{name: "client", client: []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}},
			want: "client node w2 has the taint node.cilium.io/agent-not-ready=true:NoExecute"},
		{name: "remove it", server: []corev1.Taint{bench}, want: "(`kubectl taint nodes w1 dedicated=bench:NoExecute-`) or choose another --server-node"},
		{name: "for a while", server: []corev1.Taint{bench},
			admitted: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}},
			want:     "dedicated=bench:NoExecute"},
		{name: "tolerated", server: []corev1.Taint{bench},
			admitted: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
		{name: "no schedule", server: []corev1.Taint{{Key: "dedicated", Value: "bench", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "condition", client: []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w1, w2 := node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true)
			w1.Spec.Taints, w2.Spec.Taints = tc.server, tc.client
			cs := fake.NewClientset(namespace("cnibench"), w1, w2)
			allowAll(cs)
			admitWith(cs, tc.admitted)
			_, err := Preflight(context.Background(), cs, Config{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Preflight = %v; want passed", err)
				}
			} else if !errors.Is(err, ErrNoExecute) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Preflight = %v; want %v saying %q", err, ErrNoExecute, tc.want)
			}
			noneCreated(t, cs)
			if n, err := inspectNode(context.Background(), cs, Config{}); err != nil || n != "w1" {
				t.Errorf("inspectNode = %q, %v; want w1", n, err)
			}
		})
	}
}

// admitWith answers dry-run creates of pods as an admission that adds
// tols to them, storing nothing.
func admitWith(cs *fake.Clientset, tols []corev1.Toleration) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c := a.(k8stesting.CreateActionImpl)
		if len(c.GetCreateOptions().DryRun) == 0 {
			return false, nil, nil
		}
		p := c.GetObject().(*corev1.Pod).DeepCopy()
		p.Spec.Tolerations = append(p.Spec.Tolerations, tols...)
		return true, p, nil
	})
}
