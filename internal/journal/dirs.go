package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The machine's record of journal directories. A run may journal
// anywhere (--journal-dir), but the values it changes are the machine's:
// a run of one directory that starts while a dead run of another left
// its changes would journal them as "old", and the two cleanups, each of
// its own directory, would undo them in the wrong order (the older run's
// first, finding the newer's value: "changed since", and its journal
// gone) and leave the machine changed with no journal anywhere. So a
// local run notes its directory here, under the machine's lock
// (NoteDir), and is refused while any recorded directory holds a dead
// run's journal (DeadElsewhere); a cleanup without --journal-dir replays
// those of every recorded directory, newest first across them (DeadIn).
// The record is in DefaultDir, root's and on /run's tmpfs like the
// journals: it goes at reboot with the values they guard.

// DirsRecord is the machine's record of journal directories in use, one
// absolute path a line.
const DirsRecord = DefaultDir + "/journal-dirs"

// NoteDir adds dir to the record at path (DirsRecord), dropping the
// directories that no longer exist. The caller holds the machine's lock
// (LockHost), so no two writers meet. DefaultDir is never recorded: it
// is always looked at.
func NoteDir(path, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("note journal directory %s: %w", dir, err)
	}
	all, err := readDirs(path)
	if err != nil {
		return err
	}
	keep := []string{}
	for _, d := range all {
		if _, err := os.Lstat(d); err == nil && d != abs {
			keep = append(keep, d)
		}
	}
	if abs != DefaultDir {
		keep = append(keep, abs)
	}
	if slices.Equal(keep, all) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("note journal directory %s: %w", dir, err)
	}
	tmp := path + ".tmp"
	data := []byte(strings.Join(keep, "\n") + "\n")
	if len(keep) == 0 {
		data = nil
	}
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("note journal directory %s: %w", dir, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("note journal directory %s: %w", dir, err)
	}
	return nil
}

// readDirs reads the record at path: none when it is missing.
func readDirs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal directories %s: %w", path, err)
	}
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if d := string(bytes.TrimSpace(l)); filepath.IsAbs(d) && filepath.Clean(d) == d {
			out = append(out, d)
		}
	}
	return out, nil
}

// Dirs returns the directories the record at path names, but dir, that
// exist and are trusted as journal directories: a directory of this
// user's (root's) that no one else may write, as Open makes it. One
// that another user could write (a recorded /tmp/j removed and made
// again by someone else) is not: its journals could name any value.
func Dirs(path, dir string) ([]string, error) {
	all, err := readDirs(path)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	var out []string
	for _, d := range all {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || d == abs {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// DeadElsewhere returns a *StaleError for each recorded directory (the
// record at path) but dir that holds a dead run's journal, joined, or
// nil: a local run is refused for them as for those in its own
// directory (BeginRun), each naming the cleanup of its directory. The
// record's own directory (DefaultDir for DirsRecord, never recorded) is
// one of them: a run of --journal-dir /tmp/j beside a dead run's journal
// in the default directory would journal that run's values as the old
// ones too.
func DeadElsewhere(path, dir string) error {
	dirs, err := Dirs(path, dir)
	if err != nil {
		return err
	}
	if abs, _ := filepath.Abs(dir); abs != filepath.Dir(path) {
		dirs = append([]string{filepath.Dir(path)}, dirs...)
	}
	var errs []error
	for _, d := range dirs {
		se, err := staleIn(d)
		if err != nil {
			return err
		}
		if se != nil {
			se.Cleanup = CleanupFor(d)
			errs = append(errs, se)
		}
	}
	return errors.Join(errs...)
}

// DeadIn is Dead over several directories: their dead runs' journals,
// newest first across all of them, so that undoing them one after the
// other brings each value back to what the first run found.
func DeadIn(dirs []string, peek bool) ([]*Replay, error) {
	var out []*Replay
	var errs []error
	for _, d := range dirs {
		rs, err := Dead(d, peek)
		out = append(out, rs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	newestFirst(out)
	return out, errors.Join(errs...)
}

// CleanupFor is the command that undoes the dead runs' changes journaled
// in dir, a local run's.
func CleanupFor(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil && abs == DefaultDir {
		return DefaultCleanup
	}
	return DefaultCleanup + " --journal-dir " + dir
}
