package kube

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// apiRequestTimeout bounds one API request of the clientset (a variable
// for tests).
var apiRequestTimeout = 30 * time.Second

// Connect loads a kubeconfig (explicit path, else $KUBECONFIG, else
// ~/.kube/config; in-cluster when none exists) with an optional context,
// read as Reach reads them (loadKubeconfig).
func Connect(kubeconfig, kubeContext string) (*rest.Config, kubernetes.Interface, error) {
	rc, err := loadKubeconfig(kubeconfig, kubeContext).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// client-go's own words ask for KUBERNETES_MASTER, which is not
		// how anyone points a tool at a cluster today.
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
			return nil, nil, fmt.Errorf("%w: no kubeconfig found: KUBECONFIG=%s names no kubeconfig file; fix it or give --kubeconfig FILE", ErrUnreachable, env)
		}
		return nil, nil, fmt.Errorf("%w: no kubeconfig found: give --kubeconfig FILE, set KUBECONFIG, or put one at %s", ErrUnreachable, clientcmd.RecommendedHomeFile)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: load kubeconfig: %w", ErrUnreachable, err)
	}
	rc.QPS, rc.Burst = 50, 100
	rc.UserAgent = "cnibench"
	// Every API request gets a deadline, so a stopped API server cannot
	// hang a run or its teardown: the clientset's calls are all short
	// (get, list, create, update, delete), so a fixed per-request limit
	// fits them. The returned config, used for exec streams that last a
	// whole trial and for the pod start-up burst's watch (watchClient),
	// has none: those end with their context, which carries their own
	// deadline. (The limit is the http.Client's, so it cuts a watch's
	// stream too: a burst's watch ended after 30 s.)
	api := rest.CopyConfig(rc)
	api.Timeout = apiRequestTimeout
	cs, err := kubernetes.NewForConfig(api)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return rc, cs, nil
}

// Ping asks the API server for its version within timeout.
func Ping(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type version struct {
		GitVersion string `json:"gitVersion"`
	}
	rc := cs.Discovery().RESTClient()
	if rc == nil { // fake clientsets have no REST client
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			return "", err
		}
		return v.GitVersion, nil
	}
	b, err := rc.Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// watchClient is the clientset for watches that last as long as their
// context: built from the exec config, which has no per-request limit.
// Without one (fakes in tests) it is cs.
func watchClient(cs kubernetes.Interface, ex Execer) (kubernetes.Interface, error) {
	ae, ok := ex.(*APIExecer)
	if !ok || ae.Config == nil {
		return cs, nil
	}
	return kubernetes.NewForConfig(ae.Config)
}
