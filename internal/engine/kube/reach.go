package kube

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
)

// Reach is the cluster that kubeconfig and kubeContext (a run's
// --kubeconfig and --context, either "") select, as Connect loads them
// now: the kubeconfig files read, absolute (the explicit path, else
// $KUBECONFIG's files, else ~/.kube/config; only those that exist, none
// for in-cluster config), and the context used (the explicit one, else
// their current-context; "" where none is set or they cannot be read).
// A command given to a later shell (`cnibench cleanup --kube`) names
// them, so that a changed $KUBECONFIG or current context does not point
// it at another cluster.
func Reach(kubeconfig, kubeContext string) (files []string, context string) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	for _, f := range rules.GetLoadingPrecedence() {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		files = append(files, f)
	}
	if kubeContext != "" {
		return files, kubeContext
	}
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if err != nil {
		return files, ""
	}
	return files, raw.CurrentContext
}
