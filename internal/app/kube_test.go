package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestKubeManifestsCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"kube", "manifests", "--replicas", "2", "--server-node", "w1", "--client-node", "w2"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	y := out.String()
	if n := strings.Count(y, "kind: Service\n"); n != 2 {
		t.Errorf("%d Services, want 2", n)
	}
	if n := strings.Count(y, "kind: Pod\n"); n != 5 {
		t.Errorf("%d Pods, want 5 (2 pairs and the DNS probe)", n)
	}
	if !strings.Contains(y, "kind: DaemonSet") || !strings.Contains(y, "- w1\n") {
		t.Errorf("no agent DaemonSet limited to w1:\n%s", y)
	}

	out.Reset()
	code = Main(context.Background(), []string{"kube", "manifests", "--rbac", "--subject", "system:serviceaccount:ci:bench"}, &out, &errb)
	if code != ExitOK || !strings.Contains(out.String(), "kind: ServiceAccount") || !strings.Contains(out.String(), "kind: ClusterRoleBinding") ||
		!strings.Contains(out.String(), "namespace: kube-system") {
		t.Errorf("rbac: exit %d\n%s", code, out.String())
	}

	code = Main(context.Background(), []string{"kube", "manifests", "--image-pull-policy", "Sometimes"}, &out, &errb)
	if code != ExitBadInput {
		t.Errorf("bad pull policy: exit %d, want %d", code, ExitBadInput)
	}
}

func TestRunKubeUnreachableIsBadInput(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "rps-rfs", "--quick", "--engine", "kube", "--kubeconfig", "/nonexistent/kubeconfig", "--out", t.TempDir() + "/r"}, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), "cluster unreachable") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
