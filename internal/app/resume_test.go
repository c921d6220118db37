package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/runner"
)

// TestResumeOtherEngine: --resume of a kube run without --engine kube
// is refused before anything runs, with the command that resumes it
// (its engine and kube flags from env.json's origin); it was refused
// later for this machine's differing from the cluster's node, with no
// word of the flags.
func TestResumeOtherEngine(t *testing.T) {
	dir := writeReplicas(t, map[int][]float64{1: {10e9}}, []string{"cnibench", "run", "reach", "--engine", "kube", "--context", "ci"})
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--resume", dir}, &out, &errb)
	want := "--resume " + dir + ": the run was made on the kube engine, this one would run on local; continue it with: cnibench run --resume " +
		dir + " --engine kube --context ci"
	if code != ExitBadInput || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, %q; want %d and %q", code, errb.String(), ExitBadInput, want)
	}
	if err := checkResumeEngine(dir, "kube"); err != nil {
		t.Errorf("the same engine: %v", err)
	}
}

// TestHoldRunDir: a run's directory is locked for its lifetime, a new
// one made for it (and its parents), and removed again when the run
// left it empty (refused before it began); a resume of a run held is
// refused.
func TestHoldRunDir(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "results", "r1")
	release, err := holdRunDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holdRunDir(out, true); !errors.Is(err, runner.ErrRunDirBusy) {
		t.Errorf("resume of a run still going: %v, want refused", err)
	}
	release()
	if _, err := os.Stat(filepath.Join(base, "results")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty run directory and its parent were left behind: %v", err)
	}
	release, err = holdRunDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "samples.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(filepath.Join(out, "samples.jsonl")); err != nil {
		t.Errorf("a run's files removed: %v", err)
	}
	again, err := holdRunDir(out, true)
	if err != nil {
		t.Fatalf("resume after the run ended: %v", err)
	}
	again()
}

// TestResumeRefusedOnTheClusterIsBadInput: a kube run resumed on another
// server node is refused once the cluster is up, and that refusal is
// bad input (exit 2) like the refusals before preflight, with no advice
// to resume: before, it ended with exit 1 and "continue it with: cnibench
// run --resume DIR", the command just refused.
func TestResumeRefusedOnTheClusterIsBadInput(t *testing.T) {
	dir := writeReplicas(t, map[int][]float64{1: {10e9}}, []string{"cnibench", "run", "reach", "--engine", "kube", "--context", "ci"})
	refused := &runner.ResumeRefusedError{Err: errors.New(`--resume: the interrupted run measured with server node host "worker-1", this cluster's is "worker-2"`)}
	err := runFailure(dir, errors.Join(fmt.Errorf("build cluster: %w", refused), errors.New("tear down bridge: gone")))
	var code int
	var errb bytes.Buffer
	code = exitCode(context.Background(), newRoot(&bytes.Buffer{}, &errb), err, &errb)
	if code != ExitBadInput || strings.Contains(errb.String(), "continue it with") || !strings.Contains(errb.String(), `this cluster's is "worker-2"`) {
		t.Errorf("exit %d, %q; want %d, the refusal and no resume hint", code, errb.String(), ExitBadInput)
	}
	// A run that failed otherwise still says how to continue it.
	if err := runFailure(dir, errors.New("trial 3: iperf3 died")); !strings.Contains(err.Error(), "continue it with: cnibench run --resume") {
		t.Errorf("a failed run: %v; want the resume hint", err)
	}
}
