package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// noneCreated fails t unless every create preflight made, besides its
// access reviews, was a server-side dry run, and no pod or Service is
// stored (the fake tracker ignores DryRun: refuseDryRun's reactors
// answer the dry runs in tests that check what is stored).
func noneCreated(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	for _, a := range cs.Actions() {
		c, ok := a.(k8stesting.CreateActionImpl)
		if !ok || a.GetResource().Resource == "selfsubjectaccessreviews" {
			continue
		}
		if !slices.Equal(c.GetCreateOptions().DryRun, []string{metav1.DryRunAll}) {
			t.Errorf("preflight created %s for real", a.GetResource().Resource)
		}
	}
}

// refuseDryRun answers dry-run creates of resource with err (nil: admits
// them), storing nothing, as an API server's admission does.
func refuseDryRun(cs *fake.Clientset, resource string, err error) {
	cs.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		c := a.(k8stesting.CreateActionImpl)
		if len(c.GetCreateOptions().DryRun) == 0 {
			return false, nil, nil
		}
		return true, c.GetObject(), err
	})
}

// TestPreflightChecksAdmission: a namespace whose admission refuses the
// run's pods or Services fails preflight (exit 2) with one error naming
// the namespace, the API's reason and what to change; nothing is
// stored. Before, the run failed at its first Scale, after its Lease and
// node claims, with exit 1. A webhook that cannot take a dry run is no
// refusal.
func TestPreflightChecksAdmission(t *testing.T) {
	podGR, svcGR := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Resource: "services"}
	restricted := apierrors.NewForbidden(podGR, "cnb-preflight-srv-0",
		errors.New(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`))
	quota := apierrors.NewForbidden(podGR, "cnb-preflight-srv-0", errors.New("failed quota: q: must specify limits.cpu for: main"))
	policy := apierrors.NewForbidden(svcGR, "cnb-preflight-srv-0", errors.New(`admission webhook "validation.gatekeeper.sh" denied the request`))
	sideEffects := apierrors.NewBadRequest(`admission webhook "audit.example.com" does not support dry run`)
	for _, tc := range []struct {
		name          string
		pod, svc      error
		want, wantNot string
	}{
		{name: "admitted"},
		{name: "restricted", pod: restricted, want: `namespace cnibench refuses the run's server pod: pods "cnb-preflight-srv-0" is forbidden: violates PodSecurity "restricted:latest"`},
		{name: "quota", pod: quota, want: "must specify limits.cpu"},
		{name: "policy on services", svc: policy, want: "namespace cnibench refuses the run's Service: services"},
		{name: "webhook without dry run", pod: sideEffects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(namespace("cnibench"), node("w1", map[string]string{"iperf": "server"}, true),
				node("w2", map[string]string{"iperf": "client"}, true))
			allowAll(cs)
			refuseDryRun(cs, "pods", tc.pod)
			refuseDryRun(cs, "services", tc.svc)
			_, err := Preflight(context.Background(), cs, Config{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Preflight = %v; want admitted", err)
			case tc.want != "" && (!errors.Is(err, ErrAdmission) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "Pod Security baseline, not restricted")):
				t.Fatalf("Preflight = %v; want ErrAdmission saying %q and what to change", err, tc.want)
			}
			noneCreated(t, cs)
			if pods, _ := cs.CoreV1().Pods("cnibench").List(context.Background(), metav1.ListOptions{}); len(pods.Items) > 0 {
				t.Errorf("pods stored: %v", pods.Items)
			}
			var created []string
			for _, a := range cs.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					created = append(created, a.GetResource().Resource)
				}
			}
			if want := []string{"pods", "services"}; tc.pod == nil && !slices.Equal(created, want) {
				t.Errorf("dry runs of %v; want the run's server pod and its Service", created)
			}
		})
	}
}

// TestInspectSkipsAdmission: `advise --engine kube` inspects the server
// node through the installed agent and creates no pod or Service, so a
// namespace whose admission refuses the run's pods does not fail it (it
// failed with ErrAdmission); a run's preflight still refuses.
func TestInspectSkipsAdmission(t *testing.T) {
	cs := fake.NewClientset(namespace("cnibench"), node("w1", map[string]string{"iperf": "server"}, true),
		node("w2", map[string]string{"iperf": "client"}, true))
	allowAll(cs)
	refuseDryRun(cs, "pods", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "cnb-preflight-srv-0", errors.New(`violates PodSecurity "restricted:latest"`)))
	if n, err := inspectNode(context.Background(), cs, Config{}); err != nil || n != "w1" {
		t.Errorf("inspectNode = %q, %v; want w1", n, err)
	}
	noneCreated(t, cs)
	if _, err := Preflight(context.Background(), cs, Config{}); !errors.Is(err, ErrAdmission) {
		t.Errorf("Preflight = %v; want ErrAdmission", err)
	}
}
