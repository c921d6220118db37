package kube

import (
	"os"
	"path/filepath"
	"strings"

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
	cc := loadKubeconfig(kubeconfig, kubeContext)
	for _, f := range cc.ConfigAccess().GetLoadingPrecedence() {
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
	raw, err := cc.RawConfig()
	if err != nil {
		return files, ""
	}
	return files, raw.CurrentContext
}

// CleanupWords is `cnibench cleanup --kube`, with extra after --kube,
// reaching the cluster kubeconfig and kubeContext select (Reach): the
// kubeconfig files and context they resolve to now, so that a context
// switch before the command runs does not point it at another cluster.
// Several files, which --kubeconfig cannot name, are given through env.
// Callers add the namespaces and whatever else their run set.
func CleanupWords(kubeconfig, kubeContext string, extra ...string) []string {
	files, ctxName := Reach(kubeconfig, kubeContext)
	words := append([]string{"cnibench", "cleanup", "--kube"}, extra...)
	switch {
	case len(files) == 1:
		words = append(words, "--kubeconfig", files[0])
	case len(files) > 1:
		words = append([]string{"env", "KUBECONFIG=" + strings.Join(files, string(filepath.ListSeparator))}, words...)
	}
	if ctxName != "" {
		words = append(words, "--context", ctxName)
	}
	return words
}

// loadKubeconfig is the one reading of --kubeconfig and --context that
// Connect and Reach share, so the cluster a cleanup hint names is the
// one the run reached: the explicit path, else client-go's default
// precedence ($KUBECONFIG's files, else ~/.kube/config), with the
// context as an override. Nothing is read until it is asked.
func loadKubeconfig(kubeconfig, kubeContext string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	over := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over)
}
