package app

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// refusedOnce runs args and wants exit 2 with one line on stderr that
// holds want, and nothing on stdout.
func refusedOnce(t *testing.T, args []string, want string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	if msg := errb.String(); code != ExitBadInput || !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 || out.Len() != 0 {
		t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want %d and one line with %q", args, code, out.Len(), msg, ExitBadInput, want)
	}
}

// --replicas outside 1..study.MaxReplicas is refused: 0 and -5 printed a
// manifest without a pod pair, exit 0, and a huge count built objects
// until memory ran out (not tried here: without the check it would).
func TestKubeManifestsReplicasBounded(t *testing.T) {
	for _, n := range []int{0, -5, study.MaxReplicas + 1} {
		s := strconv.Itoa(n)
		refusedOnce(t, []string{"kube", "manifests", "--server-node", "w1", "--client-node", "w2", "--replicas", s},
			"--replicas "+s+": want between 1 and "+strconv.Itoa(study.MaxReplicas))
	}
	var out, errb bytes.Buffer
	args := []string{"kube", "manifests", "--server-node", "w1", "--client-node", "w2", "--replicas", strconv.Itoa(study.MaxReplicas)}
	if code := Main(context.Background(), args, &out, &errb); code != ExitOK || strings.Count(out.String(), "kind: Service\n") != study.MaxReplicas {
		t.Errorf("--replicas %d: exit %d: %s", study.MaxReplicas, code, errb.String())
	}
}

// --pod-timeout 0 or negative is refused by every command that reads
// it, before the cluster (here none) is reached: it became 3m silently.
func TestKubePodTimeoutPositive(t *testing.T) {
	digest := "x@sha256:" + strings.Repeat("a", 64)
	for _, d := range []string{"0", "-1s"} {
		want := "--pod-timeout " + map[string]string{"0": "0s", "-1s": "-1s"}[d] + ": want a positive duration"
		for _, args := range [][]string{
			{"run", "rps-rfs", "--quick", "--engine", "kube", "--out", t.TempDir() + "/r"},
			{"doctor", "--engine", "kube"},
			{"kube", "install", "--image", digest},
			{"cleanup", "--kube", "--dry-run"},
		} {
			refusedOnce(t, append(args, "--kubeconfig", "/nonexistent/kubeconfig", "--pod-timeout", d), want)
		}
	}
}

// countingAPI is a kubeconfig for an API server that answers nothing but
// counts what it is asked: a refusal must come before the first request.
func countingAPI(t *testing.T) (kubeconfig string, asked *atomic.Int64) {
	asked = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "test server", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, asked
}

// A bad --agent-nodes label, a label key given twice, or a namespace
// that is no DNS-1123 label is refused, exit 2, before the API server
// is asked anything: the server refused the node selector only after
// `kube install` had created or relabelled the agent's namespace.
func TestKubeLabelsAndNamespacesChecked(t *testing.T) {
	kc, asked := countingAPI(t)
	digest := "x@sha256:" + strings.Repeat("a", 64)
	// Each but manifests (which reads no cluster) may reach the server.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"kube", "install", "--image", digest, "--agent-nodes", "role=bench node"}, `--agent-nodes "role=bench node": label value "bench node" (of role)`},
		{[]string{"kube", "install", "--image", digest, "--agent-nodes", "a=b,bad key=x"}, `label key "bad key"`},
		{[]string{"kube", "install", "--image", digest, "--agent-nodes", "a=b,"}, "want key=value"},
		// The last value was kept, silently.
		{[]string{"kube", "install", "--image", digest, "--agent-nodes", "a=1,z=0,a=2"}, `--agent-nodes "a=1,z=0,a=2": label key "a" given twice (a=1, a=2)`},
		{[]string{"kube", "install", "--image", digest, "--agent-namespace", "Bench_Agent"}, `--agent-namespace "Bench_Agent": not a namespace name`},
		{[]string{"cleanup", "--kube", "--dry-run", "--namespace", "a.b"}, `--namespace "a.b": not a namespace name`},
		{[]string{"doctor", "--engine", "kube", "--agent-namespace", strings.Repeat("a", 64)}, "--agent-namespace"},
		{[]string{"run", "rps-rfs", "--quick", "--engine", "kube", "--namespace", "-x", "--out", t.TempDir() + "/r"}, `--namespace "-x"`},
	} {
		refusedOnce(t, append(c.args, "--kubeconfig", kc), c.want)
	}
	refusedOnce(t, []string{"kube", "manifests", "--install", "--image", digest, "--agent-nodes", "role=bench node"}, `label value "bench node"`)
	refusedOnce(t, []string{"kube", "manifests", "--install", "--image", digest, "--agent-nodes", "a=1,a=1"}, `label key "a" given twice`)
	if n := asked.Load(); n != 0 {
		t.Errorf("the API server was asked %d times; want every refusal before it", n)
	}
	var out, errb bytes.Buffer
	args := []string{"kube", "manifests", "--install", "--image", digest, "--agent-nodes", "cnibench.io/bench=true,zone=a-1"}
	if code := Main(context.Background(), args, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "cnibench.io/bench: \"true\"") {
		t.Errorf("good labels: exit %d: %s", code, errb.String())
	}
}

// A --binary that is no regular file is refused naming the flag, before
// ldd, which took "-u" as its own option; --out is not written.
func TestKubeImageBinaryChecked(t *testing.T) {
	dir := t.TempDir()
	tarball := filepath.Join(dir, "img.tar")
	for _, c := range []struct{ bin, want string }{
		{"-u", "--binary -u: no such file or directory"},
		{filepath.Join(dir, "missing"), "--binary " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{dir, "--binary " + dir + ": a directory, not a regular file"},
	} {
		refusedOnce(t, []string{"kube", "image", "--out", tarball, "--tool", "true", "--binary", c.bin}, c.want)
	}
	if _, err := os.Stat(tarball); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v, want none", tarball, err)
	}
}
