package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
