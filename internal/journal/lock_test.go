package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeadPeekHoldsNoLock: a dry run reads dead journals without holding
// their locks. Before, it held each one while it worked on it, and a run
// started meanwhile took the held lock for a live owner and was not
// refused; a real cleanup skipped the journal.
func TestDeadPeekHoldsNoLock(t *testing.T) {
	dir := t.TempDir()
	abandon(openAs(t, dir, "dead", deadPID(t), 1))
	rs, err := Dead(dir, true)
	if err != nil || len(rs) != 1 {
		t.Fatalf("Dead(peek) = %v, %v", rs, err)
	}
	if locked(rs[0].Path) {
		t.Fatal("a peeking read holds the journal's lock")
	}
	_, err = BeginRun(dir, "")
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("a run starting while a dry run reads the dead journal = %v, want refused", err)
	}
	rs[0].Release()
}

// TestLockShared: a dry run's shared host lock refuses runs and cleanups
// (naming the holder) and is shared by other dry runs; a run's lock
// refuses it.
func TestLockShared(t *testing.T) {
	if l, err := LockShared(filepath.Join(t.TempDir(), "none")); l != nil || err != nil {
		t.Fatalf("LockShared(missing dir) = %v, %v; want nothing", l, err)
	}
	dir := t.TempDir()
	a, err := LockShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LockShared(dir)
	if err != nil {
		t.Fatalf("second dry run: %v", err)
	}
	var be *BusyError
	if _, err := BeginRun(dir, ""); !errors.As(err, &be) {
		t.Fatalf("run beside a dry run = %v, want BusyError", err)
	}
	if _, err := LockDir(dir); !errors.As(err, &be) {
		t.Fatalf("cleanup beside a dry run = %v, want BusyError", err)
	}
	a.Release()
	b.Release()
	l, err := BeginRun(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockShared(dir); !errors.As(err, &be) {
		t.Fatalf("dry run beside a run = %v, want BusyError", err)
	}
	l.Release()
}

// TestLockErrorNeedsRoot: a directory that cannot be opened gives a
// *LockError saying the lock is root's (the CLI's bad-input exit 2).
func TestLockErrorNeedsRoot(t *testing.T) {
	e := &LockError{Dir: "/run/cnibench", Err: &os.PathError{Op: "open", Path: "/run/cnibench", Err: os.ErrPermission}}
	if !errors.Is(e, os.ErrPermission) || !strings.Contains(e.Error(), "root") {
		t.Fatalf("LockError = %v", e)
	}
	dir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(dir, nil, 0o600)
	var le *LockError
	if _, err := LockDir(dir); !errors.As(err, &le) {
		t.Fatalf("LockDir over a file = %v, want LockError", err)
	}
}
