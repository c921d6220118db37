package cleanup

import (
	"context"
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestCleanupTakesTheMachineLock: a cleanup writes the machine's values
// back, so it is refused while a run holds the machine's lock, whatever
// journal directory that run uses; a dry run, which changes nothing, is
// not.
func TestCleanupTakesTheMachineLock(t *testing.T) {
	held, err := journal.LockHost(hostLockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	dir := t.TempDir()
	_, err = Run(context.Background(), Options{JournalDir: dir, FS: &mapFS{vals: map[string]string{}}})
	var be *journal.BusyError
	if !errors.As(err, &be) || be.Dir != hostLockPath {
		t.Fatalf("cleanup beside a run of another directory = %v, want a *journal.BusyError on %s", err, hostLockPath)
	}
	// Refused whole: its directory's lock was let go too.
	l, err := journal.LockDir(dir)
	if err != nil {
		t.Fatalf("the refused cleanup kept its directory's lock: %v", err)
	}
	l.Release()
	if _, err := Run(context.Background(), Options{JournalDir: dir, FS: &mapFS{vals: map[string]string{}}, DryRun: true}); err != nil {
		t.Fatalf("dry run beside a run = %v, want it to read", err)
	}
	held.Release()
	if _, err := Run(context.Background(), Options{JournalDir: dir, FS: &mapFS{vals: map[string]string{}}}); err != nil {
		t.Fatalf("cleanup once the run ended = %v", err)
	}
}
