package journal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRunRefusedForDeadJournalOfAnotherDir is the two-directory stack: a
// run of /tmp/j (A) set rps_sock_flow_entries and was killed; a run of
// the default directory found no dead journal in its own and journaled
// A's value as old. Now the run is refused while any recorded directory
// holds a dead run's journal, and told the cleanup of that directory.
func TestRunRefusedForDeadJournalOfAnotherDir(t *testing.T) {
	record := filepath.Join(t.TempDir(), "journal-dirs")
	a, b := t.TempDir(), t.TempDir()
	abandon(openAs(t, a, "runa", deadPID(t), 1))
	if err := NoteDir(record, a); err != nil {
		t.Fatal(err)
	}
	if err := NoteDir(record, b); err != nil {
		t.Fatal(err)
	}
	err := DeadElsewhere(record, b)
	var se *StaleError
	if !errors.As(err, &se) || se.Dir != a {
		t.Fatalf("DeadElsewhere(b) = %v, want a *StaleError for %s", err, a)
	}
	if want := "cnibench cleanup --journal-dir " + a; !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not name %q", err, want)
	}
	// Its own directory is BeginRun's: not refused twice.
	if err := DeadElsewhere(record, a); err != nil {
		t.Errorf("DeadElsewhere(a) = %v, want nil (b has no dead journal)", err)
	}
}

// The record's own directory (the default one, never recorded) counts:
// a run of another directory is refused for a dead journal in it too.
func TestRunRefusedForDeadJournalOfDefaultDir(t *testing.T) {
	def := t.TempDir()
	record := filepath.Join(def, "journal-dirs")
	other := t.TempDir()
	abandon(openAs(t, def, "runa", deadPID(t), 1))
	if err := NoteDir(record, other); err != nil {
		t.Fatal(err)
	}
	err := DeadElsewhere(record, other)
	var se *StaleError
	if !errors.As(err, &se) || se.Dir != def {
		t.Fatalf("DeadElsewhere(other) = %v, want a *StaleError for the record's directory %s", err, def)
	}
	if err := DeadElsewhere(record, def); err != nil {
		t.Errorf("DeadElsewhere(default) = %v, want nil: its own is BeginRun's", err)
	}
}

// TestNoteDirKeepsTrustedExistingDirs: the record drops directories
// that are gone, never lists DefaultDir (always looked at) or a
// directory twice, and Dirs skips one that others may write.
func TestNoteDirKeepsTrustedExistingDirs(t *testing.T) {
	record := filepath.Join(t.TempDir(), "sub", "journal-dirs")
	a, gone, open := t.TempDir(), filepath.Join(t.TempDir(), "gone"), t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{gone, a, DefaultDir, open, a} {
		if d == gone {
			os.Mkdir(gone, 0o700)
		}
		if err := NoteDir(record, d); err != nil {
			t.Fatal(err)
		}
		if d == gone {
			os.Remove(gone)
		}
	}
	all, err := readDirs(record)
	if err != nil || !slices.Equal(all, []string{open, a}) {
		t.Fatalf("record = %q, %v; want [%s %s]", all, err, open, a)
	}
	if got, _ := Dirs(record, "/elsewhere"); !slices.Equal(got, []string{a}) {
		t.Errorf("Dirs = %q, want only %s (%s is writable by all)", got, a, open)
	}
}

// TestDeadInNewestFirstAcrossDirs: journals of two directories are
// replayed in one order, the newer run's first.
func TestDeadInNewestFirstAcrossDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	older, err := open(a, Header{Version: version, RunID: "zold", PID: deadPID(t), PIDStart: 1, Started: time.Now().Add(-time.Hour).UTC(), Prefix: "cnb-"})
	if err != nil {
		t.Fatal(err)
	}
	abandon(older)
	abandon(openAs(t, b, "anew", deadPID(t), 1))
	rs, err := DeadIn([]string{a, b}, true)
	if err != nil || len(rs) != 2 || rs[0].Header.RunID != "anew" {
		t.Fatalf("DeadIn = %v, %v; want anew then zold", rs, err)
	}
}

// TestBeginRunNamesThePlainCleanup: the refusal for a run's own
// directory names `cnibench cleanup`, never `--journal-dir DIR`: that
// directory may be a kube run's, whose controller journals the local
// cleanup must not replay against this machine.
func TestBeginRunNamesThePlainCleanup(t *testing.T) {
	dir := t.TempDir()
	abandon(openAs(t, dir, "runk", deadPID(t), 1))
	_, err := BeginRun(dir)
	if err == nil || !strings.Contains(err.Error(), "undo them first with: cnibench cleanup") || strings.Contains(err.Error(), "--journal-dir") {
		t.Errorf("BeginRun = %v, want a refusal naming cnibench cleanup alone", err)
	}
}
