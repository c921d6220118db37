package cleanup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// helperStateDir journals and creates the run's state directory with a
// node's CNI files in it, as the local engine does for wiring cni, and
// the run's temporary directory with a helper's file in it, as the runner
// does; and it journals a directory outside both and another run's
// temporary directory (which cleanup must not touch).
func helperStateDir(dir, run string) (string, func(), error) {
	j, err := journal.Open(dir, run, "cnb-")
	if err != nil {
		return "", nil, err
	}
	state := journal.StateDir(dir, run)
	tmp := journal.TempDir(dir, run)
	for _, p := range []string{state, tmp, filepath.Join(dir, "outside"), journal.TempDir(dir, "other")} {
		if _, err := j.RecordObject(journal.Object{Kind: journal.KindDir, Name: p}); err != nil {
			return "", func() { j.Close() }, err
		}
	}
	leases := filepath.Join(state, "server", "networks", "cbr0")
	if err := os.MkdirAll(leases, 0o700); err != nil {
		return "", func() { j.Close() }, err
	}
	if err := os.WriteFile(filepath.Join(leases, "10.244.0.2"), []byte("cnb-x-srv0\neth0"), 0o600); err != nil {
		return "", func() { j.Close() }, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "cnibench-bird-1"), 0o755); err != nil {
		return "", func() { j.Close() }, err
	}
	return "", func() { os.RemoveAll(state); os.RemoveAll(tmp); j.Close() }, nil
}

// TestRunRemovesStateDir: after a crash, cleanup removes the run's state
// and temporary directories and leaves journaled directories that are
// not the run's alone.
func TestRunRemovesStateDir(t *testing.T) {
	dir := t.TempDir()
	run := tunetest.NewID()
	outside, otherTmp := filepath.Join(dir, "outside"), journal.TempDir(dir, "other")
	for _, p := range []string{outside, otherTmp} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h := startHelper(t, "statedir", dir, run)
	state := journal.StateDir(dir, run)
	opts := Options{JournalDir: dir, Run: run, FS: &mapFS{vals: map[string]string{}}}
	rep, err := Run(context.Background(), opts)
	if err != nil || count(rep, ActDir) != 0 || count(rep, ActLiveRun) != 1 {
		t.Fatalf("cleanup of a live run: %v, actions %v", err, rep.Actions)
	}
	h.crash(t)

	opts.DryRun = true
	if rep, err := Run(context.Background(), opts); err != nil || count(rep, ActDir) != 2 {
		t.Fatalf("dry run: %v, actions %v", err, rep.Actions)
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("dry run removed the state directory: %v", err)
	}
	opts.DryRun = false
	rep, err = Run(context.Background(), opts)
	if err != nil || count(rep, ActDir) != 2 || count(rep, ActJournal) != 1 || count(rep, ActSkip) != 2 {
		t.Fatalf("cleanup: %v, actions %v", err, rep.Actions)
	}
	for _, p := range []string{state, journal.TempDir(dir, run)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	for _, p := range []string{outside, otherTmp} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("cleanup touched %s, which the journal named but is not the run's: %v", p, err)
		}
	}
}

// TestSweepStateDirs: a state directory whose run has no journal and no
// live owner is reported, and goes with Orphans; a live run's, a
// symlink, and names that are not run IDs stay.
func TestSweepStateDirs(t *testing.T) {
	dir := t.TempDir()
	orphan, liveRun := tunetest.NewID(), tunetest.NewID()
	j, err := journal.Open(dir, liveRun, "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	target := t.TempDir()
	for _, p := range []string{journal.StateDir(dir, orphan) + "/client/cache", journal.StateDir(dir, liveRun), filepath.Join(dir, journal.StateSubdir, "not-a-run")} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := tunetest.NewID()
	if err := os.Symlink(target, journal.StateDir(dir, link)); err != nil {
		t.Fatal(err)
	}
	// A prefix of its own: sweeping must not reach namespaces of runs
	// and tests that journal elsewhere.
	opts := Options{JournalDir: dir, Prefix: "cnb-" + tunetest.NewID(), FS: &mapFS{vals: map[string]string{}}}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if count(rep, ActDir) != 0 || count(rep, ActSkip) != 2 {
		t.Errorf("actions %v without Orphans: want the orphan reported, nothing removed", rep.Actions)
	}
	opts.Orphans = true
	rep, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if count(rep, ActDir) != 1 || count(rep, ActSkip) != 1 {
		t.Errorf("actions %v: want one removal (the orphan) and one skip (the symlink)", rep.Actions)
	}
	if _, err := os.Stat(journal.StateDir(dir, orphan)); !os.IsNotExist(err) {
		t.Errorf("orphan state directory still there: %v", err)
	}
	for _, p := range []string{journal.StateDir(dir, liveRun), filepath.Join(dir, journal.StateSubdir, "not-a-run"), target} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
