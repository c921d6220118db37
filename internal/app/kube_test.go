package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine/kube"
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
	if strings.Contains(y, "kind: DaemonSet") || strings.Contains(y, "privileged") || !strings.Contains(y, "kind: Lease") {
		t.Errorf("a run creates its Lease and no agent (installed apart):\n%s", y)
	}

	// With the default node flags (label selectors) the pods go where
	// the selectors match, said in a comment: a selector is no node name,
	// and kubectl apply refuses it as one.
	out.Reset()
	if code := Main(context.Background(), []string{"kube", "manifests"}, &out, &errb); code != ExitOK {
		t.Fatalf("default nodes: exit %d: %s", code, errb.String())
	}
	y = out.String()
	if strings.Contains(y, "nodeName:") || strings.Count(y, "  nodeSelector:\n    iperf: client\n") != 2 || strings.Count(y, "  nodeSelector:\n    iperf: server\n") != 1 ||
		!strings.HasPrefix(y, "# --server-node iperf=server, --client-node iperf=client: a run pins its pods to the one node each selector\n") {
		t.Errorf("default nodes: want the probe and client pods on iperf=client, the server pod on iperf=server, no nodeName:\n%s", y)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"kube", "manifests", "--server-node", "a=b=c"}, &out, &errb); code != ExitBadInput {
		t.Errorf("bad selector: exit %d, want %d", code, ExitBadInput)
	}

	out.Reset()
	code = Main(context.Background(), []string{"kube", "manifests", "--rbac", "--subject", "system:serviceaccount:ci:bench"}, &out, &errb)
	if code != ExitOK || !strings.Contains(out.String(), "kind: ServiceAccount") || !strings.Contains(out.String(), "kind: ClusterRoleBinding") ||
		!strings.Contains(out.String(), "namespace: kube-system") {
		t.Errorf("rbac: exit %d\n%s", code, out.String())
	}

	// The runner's RBAC: nothing that creates pods in the agent's
	// namespace (beside exec, only the runs' kernel claims, Leases),
	// and the workload namespace is baseline.
	rb := out.String()
	for _, doc := range strings.Split(rb, "---\n") {
		if !strings.Contains(doc, "kind: Role\n") || !strings.Contains(doc, "namespace: cnibench-agent") {
			continue
		}
		for _, rule := range strings.Split(doc, "- apiGroups:")[1:] {
			if strings.Contains(rule, "coordination.k8s.io") && strings.Contains(rule, "- leases\n") && !strings.Contains(rule, "pods") {
				continue
			}
			if strings.Contains(rule, "- create\n") && !strings.Contains(rule, "pods/exec") {
				t.Errorf("agent-namespace Role grants create on something other than pods/exec and leases:\n%s", doc)
			}
			if strings.Contains(rule, "daemonsets") || strings.Contains(rule, "- delete") || strings.Contains(rule, "- update") || strings.Contains(rule, "- patch") {
				t.Errorf("agent-namespace Role grants more than list pods, exec and leases:\n%s", doc)
			}
		}
	}
	if !strings.Contains(rb, "pod-security.kubernetes.io/enforce: baseline") {
		t.Errorf("workload namespace not baseline:\n%s", rb)
	}

	out.Reset()
	errb.Reset()
	code = Main(context.Background(), []string{"kube", "manifests", "--install", "--image", "docker.io/cnibench/cnibench:dev"}, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), "not pinned by digest") {
		t.Errorf("install with a tag: exit %d: %s", code, errb.String())
	}
	digest := "docker.io/cnibench/cnibench@sha256:" + strings.Repeat("ab", 32)
	code = Main(context.Background(), []string{"kube", "manifests", "--install", "--image", digest, "--agent-nodes", "bench=yes"}, &out, &errb)
	if code != ExitOK || !strings.Contains(out.String(), "kind: DaemonSet") || !strings.Contains(out.String(), "image: "+digest) ||
		!strings.Contains(out.String(), "pod-security.kubernetes.io/enforce: privileged") || !strings.Contains(out.String(), "bench: \"yes\"") {
		t.Errorf("install: exit %d %s\n%s", code, errb.String(), out.String())
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

// An unknown --engine is bad input, found before the run lock is taken:
// the journal directory is not even made.
func TestRunUnknownEngineTouchesNothing(t *testing.T) {
	var out, errb bytes.Buffer
	jdir := filepath.Join(t.TempDir(), "journal")
	code := Main(context.Background(), []string{"run", "rps-rfs", "--engine", "foo", "--journal-dir", jdir, "--out", t.TempDir() + "/r"}, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), `unknown engine "foo"`) {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(jdir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal directory %s: %v, want none", jdir, err)
	}
}

// --namespace refuses default and kube-*, exit 2 with one line, before
// any cluster is contacted.
func TestKubeNamespaceRefused(t *testing.T) {
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		for _, args := range [][]string{
			{"run", "rps-rfs", "--quick", "--engine", "kube", "--kubeconfig", "/nonexistent/kubeconfig", "--namespace", ns, "--out", t.TempDir() + "/r"},
			{"kube", "manifests", "--rbac", "--namespace", ns},
			{"cleanup", "--kube", "--kubeconfig", "/nonexistent/kubeconfig", "--namespace", ns},
		} {
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, &out, &errb)
			msg := errb.String()
			if code != ExitBadInput || !strings.Contains(msg, "--namespace "+ns+": cnibench needs a namespace of its own") || strings.Count(msg, "\n") != 1 {
				t.Errorf("%v: exit %d: %q", args[:2], code, msg)
			}
		}
	}
}

// A dead run whose pods never finish terminating (their node is down)
// stops cleanup's wait at the pod timeout, with the way out in the
// error, so the other dead runs are still cleaned; its Lease stays, so
// the next cleanup finds the run again.
func TestDeleteStaleRunBounded(t *testing.T) {
	cfg := kube.Config{RunID: "r1", Namespace: "cnibench", Timeout: 300 * time.Millisecond}.WithDefaults()
	cs := fake.NewClientset(cfg.Lease(time.Now()), cfg.ServerPod(0, "w1"))
	cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, nil // accepted; the kubelet never confirms
	})
	var out bytes.Buffer
	start := time.Now()
	err := deleteStaleRun(context.Background(), &out, cs, cfg, "r1")
	if err == nil || !strings.Contains(err.Error(), "--force --grace-period=0") || time.Since(start) > 5*time.Second {
		t.Errorf("after %v: %v; want a bounded wait and the way out", time.Since(start), err)
	}
	if l, _ := cs.CoordinationV1().Leases("cnibench").List(context.Background(), metav1.ListOptions{}); len(l.Items) != 1 {
		t.Errorf("leases left: %d, want the run's (it is cleaned again next time)", len(l.Items))
	}
}

// A cluster's flags without the switch that uses them are bad input
// naming the first, before anything is read or changed: ignored, a
// dry run checked this machine, advise and doctor inspected it and
// cleanup cleaned it, each exit 0, while the user meant a cluster.
func TestKubeFlagsNeedTheirSwitch(t *testing.T) {
	jdir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "rps-rfs", "--dry-run", "--kubeconfig", "/nonexistent", "--server-node", "foo"}, "--kubeconfig needs --engine kube"},
		{[]string{"run", "rps-rfs", "--dry-run", "--engine", "local", "--server-node", "foo"}, "--server-node needs --engine kube"},
		{[]string{"advise", "--kubeconfig", "X", "--out", t.TempDir()}, "--kubeconfig needs --engine kube"},
		{[]string{"doctor", "--context", "x"}, "--context needs --engine kube"},
		{[]string{"cleanup", "--dry-run", "--journal-dir", jdir, "--all"}, "--all needs --kube"},
		{[]string{"cleanup", "--dry-run", "--journal-dir", jdir, "--namespace", "x"}, "--namespace needs --kube"},
		{[]string{"cleanup", "--dry-run", "--kube", "--orphans"}, "--orphans removes this machine's leftover namespaces; --kube cleans up a cluster"},
		{[]string{"cleanup", "--dry-run", "--kube", "--server-node", "w1"}, "--server-node is not used by cleanup --kube"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tc.args, &out, &errb)
		if code != ExitBadInput || !strings.HasPrefix(errb.String(), "cnibench: "+tc.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}

// A cluster flag a kube command (or its mode) does not use is refused,
// exit 2, naming it, before anything is contacted: `kube install
// --server-node w1` installed the agent on every node.
func TestKubeCommandsRefuseUnusedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"kube", "install", "--image", "x@sha256:" + strings.Repeat("a", 64), "--server-node", "w1"}, "--server-node is not used by kube install"},
		{[]string{"kube", "install", "--namespace", "bench"}, "--namespace is not used by kube install"},
		{[]string{"kube", "manifests", "--rbac", "--image", "x:1"}, "--image is not used by kube manifests --rbac"},
		{[]string{"kube", "manifests", "--install", "--replicas", "3"}, "--replicas is not used by kube manifests --install"},
		{[]string{"kube", "manifests", "--agent-nodes", "a=b"}, "--agent-nodes is not used by kube manifests (a run's objects)"},
		{[]string{"kube", "manifests", "--kubeconfig", "/k"}, "--kubeconfig is not used by kube manifests (a run's objects)"},
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), c.args, &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), c.flag) {
			t.Errorf("%v: exit %d: %q, want %d naming %q", c.args, code, errb.String(), ExitBadInput, c.flag)
		}
	}
}

// An install has no run namespace (it refuses --namespace): an agent
// namespace is checked alone, and the runs' default one is refused with
// why (kube manifests --rbac labels it baseline) rather than as equal to
// a --namespace the user cannot change there.
func TestKubeInstallAgentNamespace(t *testing.T) {
	digest := "x@sha256:" + strings.Repeat("a", 64)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"kube", "manifests", "--install", "--image", digest, "--agent-namespace", "bench-agent", "--help=false"}, &out, &errb); code != ExitOK {
		t.Errorf("manifests --install --agent-namespace bench-agent: exit %d: %s", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main(context.Background(), []string{"kube", "manifests", "--install", "--image", digest, "--agent-namespace", "cnibench"}, &out, &errb); code != ExitBadInput ||
		!strings.Contains(errb.String(), "labels Pod Security baseline") {
		t.Errorf("manifests --install --agent-namespace cnibench: exit %d: %s", code, errb.String())
	}
}

// TestKubeInstallHelpListsOnlyItsFlags: kube install --help does not
// offer the cluster flags it refuses (--server-node, --namespace, ...).
func TestKubeInstallHelpListsOnlyItsFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"kube", "install", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, refused := range []string{"--server-node", "--client-node", "--namespace "} {
		if strings.Contains(out.String(), refused) {
			t.Errorf("kube install --help lists %s, which it refuses:\n%s", refused, out.String())
		}
	}
	for _, used := range []string{"--image", "--agent-nodes", "--kubeconfig", "--pod-timeout"} {
		if !strings.Contains(out.String(), used) {
			t.Errorf("kube install --help lacks %s", used)
		}
	}
}
