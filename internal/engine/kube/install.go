package kube

import (
	"context"
	"fmt"

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
