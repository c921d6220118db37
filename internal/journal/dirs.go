package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	words "github.com/cnibench/cnibench/internal/cmdline"
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

// LocalRunsDir says whether dir is one local runs journal in: DefaultDir
// or one the record at path (DirsRecord) names, after symbolic links. A
// record this user may not read is root's, whose cleanup trusts no
// directory this user may write (DirTrust): not one of them.
func LocalRunsDir(path, dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("journal directory %s: %w", dir, err)
	}
	names := []string{abs}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		names = append(names, r)
	}
	local := []string{DefaultDir}
	if r, err := filepath.EvalSymlinks(DefaultDir); err == nil {
		local = append(local, r)
	}
	recorded, err := readDirs(path)
	if errors.Is(err, os.ErrPermission) {
		err = nil
	}
	local = append(local, recorded...)
	return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(local, n) }), err
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
// exist and are trusted as journal directories (DirTrust): a directory
// of this user's (root's) that no one else may write, as Open makes it.
// One that another user could write (a recorded /tmp/j removed and made
// again by someone else) is not: its journals could name any value.
func Dirs(path, dir string) ([]string, error) {
	all, err := readDirs(path)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	var out []string
	for _, d := range all {
		if _, t := dirTrust(d); d != abs && t == trusted {
			out = append(out, d)
		}
	}
	return out, nil
}

// UntrustedDirError refuses a journal directory that is not this
// user's alone (DirTrust): whoever else may write it could put a
// journal there naming any file and value, which cleanup, as root,
// writes back. Journals, when set, are the files a recorded directory
// holds (DeadElsewhere): cleanup does not replay them there.
type UntrustedDirError struct {
	Dir, Why string
	Journals []string
}

func (e *UntrustedDirError) Error() string {
	fix := fmt.Sprintf("make it this user's and writable only by it (chown %s %s; chmod go-w %s)", owner(), e.Dir, e.Dir)
	if len(e.Journals) == 0 {
		return fmt.Sprintf("journal directory %s %s: cleanup would write back, as this user, what a journal there names; %s or give another --journal-dir",
			e.Dir, e.Why, fix)
	}
	return fmt.Sprintf("journal directory %s, recorded by a run of this machine, holds %s but %s, so cleanup does not replay it: "+
		"if those are your runs' journals, %s, then undo them with: %s; if they are not, remove them",
		e.Dir, strings.Join(e.Journals, ", "), e.Why, fix, CleanupFor(e.Dir))
}

// owner names this user for chown.
func owner() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Geteuid())
}

// CheckDir returns an *UntrustedDirError when dir exists but is not a
// trusted journal directory (DirTrust); nil when it is, or is missing
// (Open and LockDir make it so).
func CheckDir(dir string) error {
	why, t := dirTrust(dir)
	if t == missing || t == trusted {
		return nil
	}
	return &UntrustedDirError{Dir: dir, Why: why}
}

// trust is what dirTrust found at a journal directory's path.
type trust int

const (
	missing trust = iota // nothing there: Open and LockDir make it
	trusted              // this user's directory, writable by no one else
	// replaced: a symbolic link, not a directory, or another user's: not
	// a directory a run of this user journaled in (Open made that one,
	// 0700), so a recorded one was removed and the path used again.
	replaced
	// loose: this user's directory, writable by its group or others
	// since: its journals may be this user's runs', or anyone's.
	loose
	// ownLink: a symbolic link of this user's (mv /tmp/j /var/j; ln -s
	// /var/j /tmp/j): not journaled in, but what it points to may hold
	// the journals of the run that recorded the path.
	ownLink
)

// dirTrust says why dir is not a trusted journal directory ("" when it
// is) and what is there: a directory itself, not a link (the record
// names the path, and a link can be pointed elsewhere), owned by this
// user and writable by no one else. Open and LockDir refuse any other,
// so that a directory a run journals in, and records, is one Dirs lists
// for cleanup: before, `sudo cnibench run --journal-dir ~/j` (the
// user's, 0775) journaled there and recorded it, and Dirs left it out of
// the cleanup the refusals named. A trailing slash is dropped first:
// Lstat of "link/" follows the link.
func dirTrust(dir string) (why string, t trust) {
	dir = filepath.Clean(dir)
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", missing
	}
	st, isStat := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0 && isStat && int(st.Uid) == os.Geteuid():
		return "is a symbolic link (give the directory it points to)", ownLink
	case fi.Mode()&os.ModeSymlink != 0:
		return "is a symbolic link (give the directory it points to)", replaced
	case !fi.IsDir():
		return "is not a directory", replaced
	case !isStat || int(st.Uid) != os.Geteuid():
		uid := -1
		if isStat {
			uid = int(st.Uid)
		}
		return fmt.Sprintf("is owned by uid %d, not this user (uid %d)", uid, os.Geteuid()), replaced
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("is writable by its group or others (mode %04o)", fi.Mode().Perm()), loose
	}
	return "", trusted
}

// DeadElsewhere returns a *StaleError for each recorded directory (the
// record at path) but dir that holds a dead run's journal, joined, or
// nil: a local run is refused for them as for those in its own
// directory (BeginRun), each naming the cleanup of its directory. The
// record's own directory (DefaultDir for DirsRecord, never recorded) is
// one of them: a run of --journal-dir /tmp/j beside a dead run's journal
// in the default directory would journal that run's values as the old
// ones too. A recorded directory of this user's that others may write
// now (Dirs leaves it out of cleanup) and holds journals refuses too,
// with an *UntrustedDirError saying how to make it trusted: skipped, its
// dead run's changes were journaled as old by the next run, and the
// cleanup named skipped it again. Its journals are listed, not read:
// they are not trusted (the caller holds the machine's lock, so none is
// a live local run's). A path that is now a file, another user's link or
// another user's directory is skipped: the directory recorded is gone
// with its journals (a /tmp/j aged out and made again by anyone, who
// would otherwise keep every run of root's refused). A link of this
// user's is judged as the directory it points to (the recorded one,
// moved), and a refusal names that directory's cleanup.
func DeadElsewhere(path, dir string) error {
	all, err := readDirs(path)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(dir)
	if abs != filepath.Dir(path) {
		all = append([]string{filepath.Dir(path)}, all...)
	}
	var errs []error
	judged := map[string]bool{}
	for _, d := range all {
		if d == abs {
			continue
		}
		why, t := dirTrust(d)
		if t == ownLink {
			// Judged as what it points to, named by that path, once
			// (it may point to another recorded directory).
			target, err := filepath.EvalSymlinks(d)
			if err != nil || target == abs {
				continue
			}
			d = target
			why, t = dirTrust(d)
		}
		if judged[d] {
			continue
		}
		judged[d] = true
		if t == missing || t == replaced || t == ownLink {
			continue
		}
		if t == loose {
			js, err := list(d)
			if err != nil {
				return err
			}
			if len(js) > 0 {
				errs = append(errs, &UntrustedDirError{Dir: d, Why: why, Journals: js})
			}
			continue
		}
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
// The directory is absolute: the command works from any directory.
func CleanupFor(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if abs == DefaultDir {
		return DefaultCleanup
	}
	return DefaultCleanup + " --journal-dir " + words.Quote([]string{abs})
}
