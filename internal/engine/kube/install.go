package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// Install creates or updates the agent's namespace and DaemonSet
// (Config.AgentInstall) and returns what it did, one line each. It is
// the administrator's step; the runner never calls it.
func Install(ctx context.Context, cs kubernetes.Interface, objs []runtime.Object) ([]string, error) {
	var done []string
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			cur, err := cs.CoreV1().Namespaces().Get(ctx, o.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				if _, err := cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{}); err != nil {
					return done, fmt.Errorf("create namespace %s: %w", o.Name, err)
				}
				done = append(done, "namespace/"+o.Name+" created")
			case err != nil:
				return done, fmt.Errorf("get namespace %s: %w", o.Name, err)
			default:
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				for k, v := range o.Labels {
					cur.Labels[k] = v
				}
				if _, err := cs.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
					return done, fmt.Errorf("label namespace %s: %w", o.Name, err)
				}
				done = append(done, "namespace/"+o.Name+" configured")
			}
		case *appsv1.DaemonSet:
			dss := cs.AppsV1().DaemonSets(o.Namespace)
			cur, err := dss.Get(ctx, o.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				if _, err := dss.Create(ctx, o, metav1.CreateOptions{}); err != nil {
					return done, fmt.Errorf("create DaemonSet %s/%s: %w", o.Namespace, o.Name, err)
				}
				done = append(done, "daemonset/"+o.Name+" created")
			case err != nil:
				return done, fmt.Errorf("get DaemonSet %s/%s: %w", o.Namespace, o.Name, err)
			default:
				o.ResourceVersion = cur.ResourceVersion
				if _, err := dss.Update(ctx, o, metav1.UpdateOptions{}); err != nil {
					return done, fmt.Errorf("update DaemonSet %s/%s: %w", o.Namespace, o.Name, err)
				}
				done = append(done, "daemonset/"+o.Name+" configured")
			}
		default:
			return done, fmt.Errorf("install: unexpected %T", o)
		}
	}
	return done, nil
}

// WaitRollout waits, up to timeout, until every agent pod the DaemonSet
// name in ns wants is ready, and returns what it found, in words. An
// install that only created the DaemonSet said nothing of pods its
// namespace's admission refuses (OpenShift SCCs, Gatekeeper, Kyverno,
// Pod Security, GKE Autopilot's refusal of privileged pods): the first
// run then waited for its agents and blamed the node selector. When the
// pods do not come, the error says why: the DaemonSet's FailedCreate
// events and the pods' own reasons. A pod problem that waiting cannot
// fix (an image that cannot be pulled, a crash loop) ends the wait.
func WaitRollout(ctx context.Context, cs kubernetes.Interface, ns, name string, timeout, poll time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		ds, err := cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get DaemonSet %s/%s: %w", ns, name, err)
		}
		st := ds.Status
		observed := st.ObservedGeneration >= ds.Generation
		switch {
		case observed && st.DesiredNumberScheduled == 0:
			return fmt.Sprintf("daemonset/%s: no node matches its node selector (--agent-nodes) yet; its agents start on the nodes once they are labelled", name), nil
		case observed && st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberReady == st.DesiredNumberScheduled:
			return fmt.Sprintf("daemonset/%s rolled out: %d agent pod(s) ready", name, st.NumberReady), nil
		}
		problems := agentPodProblems(ctx, cs, ns)
		fatal := fatalProblem(problems)
		if fatal != "" || time.Now().After(deadline) {
			why := append(failedCreates(ctx, cs, ns, name), problems...)
			if len(why) == 0 {
				why = []string{"no event or pod problem found"}
			}
			wait := "after " + timeout.String()
			if fatal != "" {
				wait = "and will not"
			}
			return "", fmt.Errorf("daemonset/%s did not roll out %s: %d of %d agent pod(s) ready: %s (`kubectl -n %s describe ds %s` says more; "+
				"the agent needs privileged, host-network, host-PID pods in %s, which its admission must allow: docs/kubernetes.md#troubleshooting)",
				name, wait, st.NumberReady, st.DesiredNumberScheduled, strings.Join(why, "; "), ns, name, ns)
		}
		if err := sleepCtx(ctx, poll); err != nil {
			return "", err
		}
	}
}

// failedCreates are the messages of the DaemonSet's FailedCreate events:
// the pods its controller could not create, admission's refusals among
// them.
func failedCreates(ctx context.Context, cs kubernetes.Interface, ns, name string) []string {
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=DaemonSet,involvedObject.name=" + name})
	if err != nil {
		return []string{"events unreadable: " + err.Error()}
	}
	var out []string
	for _, e := range evs.Items {
		// Checked again: a field selector is the server's to apply.
		if e.Reason == "FailedCreate" && e.InvolvedObject.Kind == "DaemonSet" && e.InvolvedObject.Name == name && !slices.Contains(out, e.Message) {
			out = append(out, e.Message)
		}
	}
	return out
}

// agentPodProblems are the agent pods' reasons for not being ready.
func agentPodProblems(ctx context.Context, cs kubernetes.Interface, ns string) []string {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: AgentSelector()})
	if err != nil {
		return []string{"agent pods unreadable: " + err.Error()}
	}
	var out []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if ok, why := podReady(p); !ok && why != "" {
			out = append(out, fmt.Sprintf("%s on %s: %s", p.Name, p.Spec.NodeName, why))
		}
	}
	return out
}
