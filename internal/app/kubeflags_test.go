package app

import (
	"bytes"
	"context"
	"strconv"
	"strings"
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
