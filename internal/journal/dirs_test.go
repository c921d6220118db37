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

// TestBeginRunNamesTheCallersCleanup: the refusal for a run's own
// directory names the command its caller gives (a kube run's cleanup
// --kube, a local run's of another directory --journal-dir DIR), plain
// `cnibench cleanup` without one. Before (b29fa64), it always named the
// plain one, which does nothing for a kube run's directory or an
// unrecorded --journal-dir: the refusal came back after it.
func TestBeginRunNamesTheCallersCleanup(t *testing.T) {
	dir := t.TempDir()
	abandon(openAs(t, dir, "runk", deadPID(t), 1))
	for _, c := range []struct{ given, want string }{
		{"", "undo them first with: cnibench cleanup\n"},
		{CleanupFor(dir), "undo them first with: cnibench cleanup --journal-dir " + dir + "\n"},
		{"cnibench cleanup --kube --context k", "undo them first with: cnibench cleanup --kube --context k\n"},
	} {
		_, err := BeginRun(dir, c.given)
		if err == nil || !strings.Contains(err.Error()+"\n", c.want) {
			t.Errorf("BeginRun(%q) = %v, want a refusal naming %q", c.given, err, c.want)
		}
	}
}

// TestUntrustedDirRefused: a run does not journal in (LockDir, Open) an
// existing directory that is another user's or writable by its group or
// others (the user's ~/j, 0775, given to sudo cnibench run
// --journal-dir), nor through a link: it would record a directory Dirs
// leaves out of cleanup. Its own 0700 directory, or a missing one, is
// fine.
func TestUntrustedDirRefused(t *testing.T) {
	base := t.TempDir()
	group, link := filepath.Join(base, "j"), filepath.Join(base, "link")
	if err := os.Mkdir(group, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(group, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	// "link/": Lstat would follow the link.
	for _, d := range []string{group, link, link + "/"} {
		var ue *UntrustedDirError
		if l, err := LockDir(d); !errors.As(err, &ue) {
			l.Release()
			t.Errorf("LockDir(%s) = %v, want an *UntrustedDirError", d, err)
		}
		if _, err := Open(d, "r1", "cnb-"); !errors.As(err, &ue) {
			t.Errorf("Open(%s) = %v, want an *UntrustedDirError", d, err)
		}
	}
	_, err := LockDir(group)
	if want := "chmod go-w " + group; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "another --journal-dir") {
		t.Errorf("refusal %v does not name %q or another --journal-dir", err, want)
	}
	for _, d := range []string{t.TempDir(), filepath.Join(base, "new")} {
		l, err := LockDir(d)
		if err != nil {
			t.Errorf("LockDir(%s) = %v, want the lock", d, err)
		}
		l.Release()
	}
}

// TestDeadElsewhereSeesUntrustedDirs: a recorded directory of this
// user's that became untrusted (chmod g+w) holding journals refuses the run, naming how to make it trusted and
// its cleanup. Before, DeadElsewhere skipped it as Dirs does (cleanup
// must not replay it), so a run started on what a killed run there
// left, and the cleanup it was told to run skipped it too. Without
// journals it refuses nothing.
func TestDeadElsewhereSeesUntrustedDirs(t *testing.T) {
	record := filepath.Join(t.TempDir(), "journal-dirs")
	a, empty, b := t.TempDir(), t.TempDir(), t.TempDir()
	abandon(openAs(t, a, "runa", deadPID(t), 1))
	for _, d := range []string{a, empty, b} {
		if err := NoteDir(record, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{a, empty} {
		if err := os.Chmod(d, 0o775); err != nil {
			t.Fatal(err)
		}
	}
	err := DeadElsewhere(record, b)
	var ue *UntrustedDirError
	if !errors.As(err, &ue) || ue.Dir != a {
		t.Fatalf("DeadElsewhere(b) = %v, want an *UntrustedDirError for %s", err, a)
	}
	for _, want := range []string{"chmod go-w " + a, "cnibench cleanup --journal-dir " + a, "runa" + Ext} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), empty) {
		t.Errorf("refusal %q names %s, which holds no journal", err, empty)
	}
}

// A recorded path that is now a file, a link or another user's directory
// is not the directory a run journaled in (that one was removed with its
// journals): DeadElsewhere skips it, whatever it holds, so whoever makes
// /tmp/j again cannot keep root's runs refused.
func TestDeadElsewhereSkipsReplacedDirs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to give a directory to another user")
	}
	base := t.TempDir()
	record := filepath.Join(base, "journal-dirs")
	file, link, theirs, own := filepath.Join(base, "file"), filepath.Join(base, "link"), filepath.Join(base, "theirs"), t.TempDir()
	for _, d := range []string{file, link, theirs} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := NoteDir(record, d); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "x"+Ext), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another user's link to a directory with a journal.
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(theirs, "x"+Ext), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := DeadElsewhere(record, own); err != nil {
		t.Errorf("DeadElsewhere = %v, want nil: every recorded directory was replaced", err)
	}
	if ds, err := Dirs(record, own); err != nil || len(ds) != 0 {
		t.Errorf("Dirs = %v, %v, want none for cleanup", ds, err)
	}
}

// CleanupFor's command can be pasted anywhere: a directory with a space
// is quoted, a relative one made absolute.
func TestCleanupForQuotes(t *testing.T) {
	if got, want := CleanupFor("/tmp/my j"), "cnibench cleanup --journal-dir '/tmp/my j'"; got != want {
		t.Errorf("CleanupFor = %q, want %q", got, want)
	}
	wd, _ := os.Getwd()
	if got, want := CleanupFor("j"), "cnibench cleanup --journal-dir "+filepath.Join(wd, "j"); got != want {
		t.Errorf("CleanupFor = %q, want %q", got, want)
	}
}

// A recorded directory moved and linked to from its path by this user
// (mv /tmp/j /var/j; ln -s /var/j /tmp/j) is judged as the directory it
// points to: its dead run's journal refuses the run, naming the target's
// cleanup. Skipped, the next run journaled that run's values as old.
func TestDeadElsewhereFollowsOwnLink(t *testing.T) {
	base := t.TempDir()
	record := filepath.Join(base, "journal-dirs")
	path, moved := filepath.Join(base, "j"), filepath.Join(base, "moved")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := NoteDir(record, path); err != nil {
		t.Fatal(err)
	}
	abandon(openAs(t, path, "runm", deadPID(t), 1))
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, path); err != nil {
		t.Fatal(err)
	}
	// Recorded under its new name too: judged once.
	if err := NoteDir(record, moved); err != nil {
		t.Fatal(err)
	}
	err := DeadElsewhere(record, t.TempDir())
	var se *StaleError
	if !errors.As(err, &se) || strings.Count(err.Error(), "cnibench cleanup --journal-dir "+moved) != 1 {
		t.Errorf("DeadElsewhere = %v, want the moved directory's dead run once, naming its cleanup", err)
	}
}

// LocalRunsDir: DefaultDir and the record's directories, by any path
// to them; a record this user may not read (root's, for a user's kube
// run) names none, without an error.
func TestLocalRunsDir(t *testing.T) {
	record := filepath.Join(t.TempDir(), "journal-dirs")
	rec, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(record, []byte(rec+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{DefaultDir: true, DefaultDir + "/.": true, rec: true, rec + "/../" + filepath.Base(rec): true, other: false} {
		if got, err := LocalRunsDir(record, dir); got != want || err != nil {
			t.Errorf("LocalRunsDir(%s) = %v, %v; want %v", dir, got, err, want)
		}
	}
	if os.Geteuid() == 0 {
		return // root reads any record
	}
	if err := os.Chmod(record, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := LocalRunsDir(record, rec); got || err != nil {
		t.Errorf("unreadable record: %v, %v; want false, nil", got, err)
	}
	if got, err := LocalRunsDir(record, DefaultDir); !got || err != nil {
		t.Errorf("unreadable record, DefaultDir: %v, %v; want true, nil", got, err)
	}
}
