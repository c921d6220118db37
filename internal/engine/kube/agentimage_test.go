package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// setAgentImage gives the fixture's agent pod on node the image ref,
// resolved to id ("" unknown).
func setAgentImage(t *testing.T, cs *fake.Clientset, name, ref, id string) {
	t.Helper()
	pods := cs.CoreV1().Pods(DefaultAgentNamespace)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers = []corev1.Container{{Name: "agent", Image: ref}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Ready: true, ImageID: id}}
	if _, err := pods.Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// workloadImages are the images of the pods created in the run's
// namespace.
func workloadImages(cs *fake.Clientset) []string {
	var out []string
	for _, a := range cs.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetVerb() == "create" && a.GetNamespace() == DefaultNamespace {
			if p, ok := c.GetObject().(*corev1.Pod); ok {
				out = append(out, p.Spec.Containers[0].Image)
			}
		}
	}
	return out
}

// Without --image a run's workload pods run the installed agent's image,
// which is the one whose tools the agent checked and the one on the
// nodes: they ran the default docker.io/cnibench/cnibench:dev whatever
// the agent ran, which a cluster whose agent was installed by digest
// could not pull, or which held other tools than those checked.
// env.json records that image (Describe).
func TestUpRunsAgentImage(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	agent := "registry.example.com/cnibench@" + digestA
	setAgentImage(t, cs, "agent-a", agent, agent)
	setAgentImage(t, cs, "agent-b", agent, agent)
	c := upQuiet(t, cs, cfg, place)
	if _, _, err := c.Scale(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	images := workloadImages(cs)
	if len(images) < 2 {
		t.Fatalf("workload pods created: %v", images)
	}
	for _, im := range images {
		if im != agent {
			t.Errorf("a workload pod runs %s, want the agent's %s (all: %v)", im, agent, images)
		}
	}
	// env.json records the image they ran; the run's log alone said it.
	var e results.Env
	(&Engine{cfg: cfg}).Describe(engine.Run{ID: "r1", Study: stubStudy(t, "[{tool: iperf3}]")}, c, &e)
	if e.Image != agent {
		t.Errorf("env.json's image %q, want the workload pods' %s", e.Image, agent)
	}
}

// An --image that is not the agent's is refused before any workload pod,
// naming both images; one that names it (by digest, or as the runtime
// completes a reference) is taken.
func TestUpGivenImageMustBeAgents(t *testing.T) {
	agentRef := "registry.example.com/cnibench:v1"
	agentID := "registry.example.com/cnibench@" + digestA
	for _, tc := range []struct {
		given string
		want  []string // "" for no error
	}{
		{"registry.example.com/cnibench:v0", []string{"--image registry.example.com/cnibench:v0, but the installed agent on node w1 runs registry.example.com/cnibench:v1 (image ID " + agentID + ")",
			"leave --image out", "a tag cannot be matched to the agent's digest"}},
		{"registry.example.com/cnibench@" + digestB, []string{"--image registry.example.com/cnibench@" + digestB}},
		{"registry.example.com/cnibench@" + digestA, nil},
		{"registry.example.com/cnibench:v1", nil},
	} {
		t.Run(tc.given, func(t *testing.T) {
			cfg := Config{RunID: "r1", Image: tc.given, ImageGiven: true}.WithDefaults()
			cs, place := kubeFixture(t, cfg)
			setAgentImage(t, cs, "agent-a", agentRef, agentID)
			setAgentImage(t, cs, "agent-b", agentRef, agentID)
			fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: func(string, []string) (string, int) { return "", 0 }}
			// Preflight's ask of the agents refuses it, before the Lease.
			_, perr := preflightNodes(context.Background(), fx, cs, cfg, place, nil, pinReads{})
			c, err := Up(context.Background(), cs, fx, cfg, place, nil)
			if tc.want == nil {
				if perr != nil || err != nil {
					t.Fatalf("preflight %v, Up %v", perr, err)
				}
				c.Close()
				return
			}
			if !errors.Is(perr, ErrImageMismatch) || !errors.Is(err, ErrImageMismatch) || errors.Is(perr, engine.ErrTransient) {
				t.Fatalf("preflight %v, Up %v: want %v, bad input", perr, err, ErrImageMismatch)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if images := workloadImages(cs); len(images) != 0 {
				t.Errorf("workload pods created: %v", images)
			}
		})
	}
}

// Agents of two images (a rollout under way) are waited for, and at the
// timeout the error names both and is the cluster's passing state
// (engine.ErrTransient: exit 1), not the run's input.
func TestWaitAgentsOfTwoImages(t *testing.T) {
	cfg := Config{RunID: "r1", Timeout: 100 * time.Millisecond}.WithDefaults()
	cs, _ := kubeFixture(t, cfg)
	setAgentImage(t, cs, "agent-a", "reg/cnibench@"+digestA, "")
	setAgentImage(t, cs, "agent-b", "reg/cnibench@"+digestB, "")
	c := &Cluster{cfg: cfg, cs: cs, poll: 10 * time.Millisecond}
	start := time.Now()
	_, err := c.waitAgents(context.Background(), "w1", "w2")
	if !errors.Is(err, errAgentsDiffer) || !errors.Is(err, engine.ErrTransient) || time.Since(start) < 90*time.Millisecond ||
		!strings.Contains(err.Error(), "node w1 runs reg/cnibench@"+digestA+", the one on node w2 reg/cnibench@"+digestB) {
		t.Errorf("after %v: %v", time.Since(start), err)
	}
}

// The tool check's error names the image it asked about, the agent's,
// not the --image default the pods no longer run.
func TestCheckToolsNamesAgentImage(t *testing.T) {
	cfg := Config{RunID: "r3", Tools: []string{"cnibench-no-such-tool"}}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	agent := "registry.example.com/cnibench@" + digestA
	setAgentImage(t, cs, "agent-a", agent, "")
	setAgentImage(t, cs, "agent-b", agent, "")
	_, err := Up(context.Background(), cs, &fakeExec{fs: agentFS(), dir: t.TempDir()}, cfg, place, nil)
	if !errors.Is(err, ErrImageTools) || !strings.Contains(err.Error(), "image "+agent+" on node w1 has no cnibench-no-such-tool") {
		t.Fatalf("Up: %v", err)
	}
}

func TestNormalizeRef(t *testing.T) {
	for in, want := range map[string]string{
		"cnibench":                               "docker.io/library/cnibench:latest",
		"cnibench/cnibench:dev":                  "docker.io/cnibench/cnibench:dev",
		"index.docker.io/cnibench/cnibench":      "docker.io/cnibench/cnibench:latest",
		"localhost/x:1":                          "localhost/x:1",
		"localhost:5000/x":                       "localhost:5000/x:latest",
		"reg.example.com:5000/a/b:v1@" + digestA: "reg.example.com:5000/a/b:v1@" + digestA,
		"reg.example.com/a@" + digestA:           "reg.example.com/a@" + digestA,
	} {
		if got := normalizeRef(in); got != want {
			t.Errorf("normalizeRef(%s) = %s, want %s", in, got, want)
		}
	}
	a := agentImage{ref: "docker.io/cnibench/cnibench:dev"}
	if !a.matches("cnibench/cnibench:dev") || a.matches("cnibench/cnibench:v2") {
		t.Error("matches: a reference completed as the runtime does")
	}
}
