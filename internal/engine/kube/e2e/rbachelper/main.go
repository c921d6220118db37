// Command rbachelper plays the two other parties of the restricted-Role
// end-to-end test (package e2e), inside the test cluster's control-plane
// namespace where the API server is reachable:
//
//	rbachelper setup OUT      as the administrator (KUBECONFIG): a service
//	                          account bound to `cnibench kube manifests
//	                          --rbac`'s Roles, and a kubeconfig with its
//	                          token written to OUT
//	rbachelper privileged KC  as that account: try to create a privileged
//	                          pod in the workload and in the agent
//	                          namespace; exit 0 only if both are refused
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cnibench/cnibench/internal/engine/kube"
)

const (
	saNamespace = "cnibench-ci"
	saName      = "runner"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: rbachelper setup OUT | privileged KUBECONFIG")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "setup":
		err = setup(ctx, os.Args[2])
	case "privileged":
		err = privileged(ctx, os.Args[2])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rbachelper:", err)
		os.Exit(1)
	}
}

func setup(ctx context.Context, out string) error {
	rc, cs, err := kube.Connect("", "")
	if err != nil {
		return err
	}
	objs := []runtime.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: saNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: saName, Namespace: saNamespace}}}
	cfg := kube.Config{}.WithDefaults()
	objs = append(objs, cfg.RBAC("system:serviceaccount:"+saNamespace+":"+saName)...)
	for _, o := range objs {
		if err := apply(ctx, cs, o); err != nil {
			return err
		}
		fmt.Printf("applied %T\n", o)
	}
	tr, err := cs.CoreV1().ServiceAccounts(saNamespace).CreateToken(ctx, saName,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &tokenSeconds}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	cluster := clientcmdapi.NewCluster()
	cluster.Server, cluster.CertificateAuthorityData = rc.Host, rc.CAData
	if len(rc.CAData) == 0 && rc.CAFile != "" {
		if cluster.CertificateAuthorityData, err = os.ReadFile(rc.CAFile); err != nil {
			return err
		}
	}
	user := clientcmdapi.NewAuthInfo()
	user.Token = tr.Status.Token
	kc.Clusters["test"], kc.AuthInfos[saName] = cluster, user
	kc.Contexts["restricted"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: saName}
	kc.CurrentContext = "restricted"
	return clientcmd.WriteToFile(*kc, out)
}

func apply(ctx context.Context, cs kubernetes.Interface, o runtime.Object) error {
	var err error
	switch o := o.(type) {
	case *corev1.Namespace:
		// As `kubectl apply` would: an existing namespace (a run may
		// have made the workload namespace) gets the labels, which carry
		// its Pod Security level.
		cur, gerr := cs.CoreV1().Namespaces().Get(ctx, o.Name, metav1.GetOptions{})
		if gerr != nil {
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
			break
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		for k, v := range o.Labels {
			cur.Labels[k] = v
		}
		_, err = cs.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{})
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	default:
		return fmt.Errorf("apply: unexpected %T", o)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// privileged tries what the restricted account must not be able to do.
func privileged(ctx context.Context, kubeconfig string) error {
	_, cs, err := kube.Connect(kubeconfig, "")
	if err != nil {
		return err
	}
	cfg := kube.Config{}.WithDefaults()
	yes := true
	failed := false
	for _, ns := range []string{cfg.Namespace, cfg.AgentNamespace} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "escalate-", Namespace: ns},
			Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{
				Name: "x", Image: "docker.io/cnibench/pause:e2e",
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			}}},
		}
		p, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err == nil:
			failed = true
			fmt.Printf("%s: a privileged pod was admitted (%s)\n", ns, p.Name)
		case apierrors.IsForbidden(err):
			fmt.Printf("%s: refused: %v\n", ns, err)
		default:
			return fmt.Errorf("%s: %w", ns, err)
		}
	}
	if failed {
		return fmt.Errorf("the restricted account could create a privileged pod")
	}
	return nil
}

var tokenSeconds int64 = 3600
