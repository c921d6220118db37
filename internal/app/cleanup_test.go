package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/cleanup"
)

// A --run value that can never be a run ID is bad input (exit 2) saying
// what a run ID looks like and, for a namespace name or a results
// directory copied instead, which run it names. Before, cleanup looked
// for a run of that name, found none and said "nothing to clean up",
// exit 0, as if the run had left nothing.
func TestCleanupRefusesBadRunID(t *testing.T) {
	results := filepath.Join(t.TempDir(), "rps-rfs-20260101-120000")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(results, "env.json"), []byte(`{"run_id":"ab12cd","kernel":"6.8.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"cnb-3f9a2c-node-server": "namespace name of run 3f9a2c: --run 3f9a2c",
		results:                  "results directory of run ab12cd: --run ab12cd",
		"a/b":                    "a run ID is letters, digits, '_' and '.'",
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"cleanup", "--dry-run", "--journal-dir", t.TempDir(), "--run", arg}, &out, &errb)
		if code != ExitBadInput || !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "is not a run ID") || out.Len() != 0 {
			t.Errorf("--run %s: exit %d, stdout %q, stderr %q; want 2 and %q", arg, code, out.String(), errb.String(), want)
		}
	}
}

// A host lock that cannot be taken at all (not root: /run/cnibench is
// root's; here a journal directory under a file) is bad input, exit 2,
// as it is for run, not a failure (exit 1): nothing was touched.
func TestCleanupLockErrorIsBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"cleanup", "--journal-dir", filepath.Join(file, "journals")}, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), "host lock on ") {
		t.Errorf("exit %d, stderr %q; want 2 and the host lock's error", code, errb.String())
	}
}

// TestCleanupKeptJournalExitsAbandoned: a cleanup that left a dead run's
// journal (stopped before the run, or an undo failed) exits 3, "run
// cnibench cleanup", stopped by a signal or not. Before, a stopped one
// exited 130, "stopped with everything undone", and a failed one 1,
// "nothing left".
func TestCleanupKeptJournalExitsAbandoned(t *testing.T) {
	left := errors.Join(context.Canceled, &cleanup.KeptError{Run: "r1", Path: "/run/cnibench/r1.journal", Why: "cleanup was stopped before this run", Cleanup: "cnibench cleanup"})
	stopped, cancel := context.WithCancelCause(context.Background())
	cancel(&Stopped{Signal: syscall.SIGINT})
	for _, ctx := range []context.Context{stopped, context.Background()} {
		var errb bytes.Buffer
		if code := exitCode(ctx, newRoot(io.Discard, io.Discard), left, &errb); code != ExitAbandoned {
			t.Errorf("exit %d, want %d (stopped: %v)", code, ExitAbandoned, stoppedBy(ctx) != nil)
		}
		if !strings.Contains(errb.String(), "journal /run/cnibench/r1.journal of run r1 kept") {
			t.Errorf("the kept journal is not said: %q", errb.String())
		}
	}
}
