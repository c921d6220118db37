package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
)

// recordExec records each exec's argv and answers with out, or, when
// refuse is set, fails an argv holding it as cobra fails an unknown flag.
type recordExec struct {
	argvs  [][]string
	out    string
	refuse string
}

func (e *recordExec) Exec(_ context.Context, _, _, _ string, argv []string, _ io.Reader, stdout, stderr io.Writer) error {
	e.argvs = append(e.argvs, argv)
	if e.refuse != "" && slices.Contains(argv, e.refuse) {
		fmt.Fprintf(stderr, "Error: unknown flag: %s\n", e.refuse)
		return &kube.ExitCodeError{Code: 1}
	}
	fmt.Fprint(stdout, e.out)
	return nil
}

func agentPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cnibench-agent",
			Labels: map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelRole: kube.RoleAgent}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// TestReplayAgentsEndsDeadRuns: every agent is asked to end the dead
// runs' live sessions (argv only, one --end-run per run) before its
// replay, and each line it answers is named with its pod and node.
func TestReplayAgentsEndsDeadRuns(t *testing.T) {
	cs := fake.NewClientset(agentPod("agent-a", "w1"))
	ex := &recordExec{out: "ended session pid 4711 of run r1 (its changes put back)\nnothing left by dead sessions\n"}
	var w bytes.Buffer
	if err := replayAgents(context.Background(), &w, cs, ex, "cnibench-agent", []string{"r1", "r2"}); err != nil {
		t.Fatal(err)
	}
	want := []string{kube.BinPath, "agent", "replay", "--end-run", "r1", "--end-run", "r2"}
	if len(ex.argvs) != 1 || !slices.Equal(ex.argvs[0], want) {
		t.Fatalf("execs %q; want one of %q", ex.argvs, want)
	}
	wantOut := "agent agent-a on w1: ended session pid 4711 of run r1 (its changes put back)\n" +
		"agent agent-a on w1: nothing left by dead sessions\n"
	if w.String() != wantOut {
		t.Errorf("output:\n%s\nwant:\n%s", w.String(), wantOut)
	}
}

// TestReplayAgentsOlderAgent: an agent of an older cnibench, which knows
// no --end-run, is asked to replay alone, and the output says so.
func TestReplayAgentsOlderAgent(t *testing.T) {
	cs := fake.NewClientset(agentPod("agent-a", "w1"))
	ex := &recordExec{out: "nothing left by dead sessions\n", refuse: "--end-run"}
	var w bytes.Buffer
	if err := replayAgents(context.Background(), &w, cs, ex, "cnibench-agent", []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if len(ex.argvs) != 2 || !slices.Equal(ex.argvs[1], []string{kube.BinPath, "agent", "replay"}) {
		t.Fatalf("execs %q; want the plain replay after the refused one", ex.argvs)
	}
	if !strings.Contains(w.String(), "agent agent-a on w1: this agent's cnibench is older and cannot end live sessions") {
		t.Errorf("output does not say the agent could not end sessions:\n%s", w.String())
	}
}

// TestAgentReplayRefusesBadEndRun: `agent replay --end-run` with a name
// no run can have fails before it replays anything.
func TestAgentReplayRefusesBadEndRun(t *testing.T) {
	cmd := newAgentCmd()
	cmd.SilenceUsage = true // as Main's root does: the output is the replay's alone
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"replay", "--journal-dir", t.TempDir(), "--end-run", "r1", "--end-run", "../r2"})
	if err := cmd.Execute(); !errors.Is(err, journal.ErrBadRunID) || out.Len() != 0 {
		t.Errorf("replay --end-run ../r2 = %v, output %q; want journal.ErrBadRunID and nothing done", err, out.String())
	}
}

// TestStaleIDsLeaveOutLabelsNoRunHas: a run label Kubernetes allows but
// no run ID has (empty, with '-') is said and left out of the agents'
// --end-run list, which the agent would refuse whole, replaying nothing.
func TestStaleIDsLeaveOutLabelsNoRunHas(t *testing.T) {
	var out bytes.Buffer
	ids := staleIDs(&out, []kube.RunInfo{{Run: "3f9a2c"}, {Run: ""}, {Run: "a-b"}, {Run: "r_1.x"}})
	if !slices.Equal(ids, []string{"3f9a2c", "r_1.x"}) {
		t.Errorf("ids = %q", ids)
	}
	for _, want := range []string{`run "": its agent sessions cannot be ended`, `run "a-b": its agent sessions cannot be ended`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
