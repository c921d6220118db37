package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// An API server that accepts the connection and never answers must not
// hang a call: the clientset's requests carry apiRequestTimeout.
func TestClientsetCallsHaveADeadline(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, cs, err := Connect(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Timeout != 0 {
		t.Errorf("the exec config has a request timeout %s: it would cut trials short", rc.Timeout)
	}
	old := apiRequestTimeout
	apiRequestTimeout = 200 * time.Millisecond
	defer func() { apiRequestTimeout = old }()
	_, cs, err = Connect(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = cs.CoreV1().Pods("x").List(context.Background(), metav1.ListOptions{})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("a hanging API server: err %v after %s", err, time.Since(start))
	}
}

// The pod start-up burst's watch lasts as long as its context, past the
// clientset's per-request limit (which is the http.Client's and cut a
// watch's stream: a burst of more than 30 s lost its later events).
func TestWatchOutlivesTheRequestLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		ev := func(name string) {
			fmt.Fprintf(w, `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"cnibench"}}}`+"\n", name)
			w.(http.Flusher).Flush()
		}
		ev("early")
		select {
		case <-time.After(600 * time.Millisecond):
			ev("late")
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	old := apiRequestTimeout
	apiRequestTimeout = 300 * time.Millisecond
	defer func() { apiRequestTimeout = old }()
	rc, cs, err := Connect(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	// The server ends each watch after "late" (or the limit cuts it):
	// the context only bounds a hang, and a loaded machine must not cut
	// the connect and the server's 600 ms before it.
	names := func(c kubernetes.Interface) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w, err := c.CoreV1().Pods("cnibench").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var got []string
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				got = append(got, p.Name)
			}
		}
		return got
	}
	// The check is not vacuous: the limited clientset loses "late".
	if got := names(cs); slices.Contains(got, "late") {
		t.Fatalf("the limited clientset's watch saw %v: the test server does not outlast the limit", got)
	}
	wc, err := watchClient(cs, &APIExecer{Config: rc, Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(wc); !slices.Contains(got, "late") {
		t.Errorf("watch events %v: the event after the request limit was lost", got)
	}
}

// Without a kubeconfig the error says where one is looked for, not
// client-go's "try setting KUBERNETES_MASTER".
func TestConnectWithoutKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("KUBECONFIG", none)
	_, _, err := Connect("", "")
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no kubeconfig found: KUBECONFIG="+none+" names no kubeconfig file") ||
		strings.Contains(err.Error(), "KUBERNETES_MASTER") {
		t.Errorf("err = %v", err)
	}
}
