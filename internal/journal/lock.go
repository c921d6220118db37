package journal

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The journal directory's lock: one flock on the directory itself, held
// exclusively by a run for its whole life and by a cleanup. Runs change
// host-wide values (rps_sock_flow_entries, sysctls); two at once would
// journal each other's values as "old", and a cleanup during a run would
// revert under its feet, so neither may overlap. The directory, not a
// file in it, is locked: nothing is left behind, and /proc/locks names
// the holder's pid. The kernel drops the lock when its holder dies.
// Runs of other directories are kept away by the machine's lock
// (hostlock.go), which a command that changes this machine's values
// takes too.

// BusyError means another cnibench process holds the host lock.
type BusyError struct {
	Dir string
	// PID holds the lock (0 if it could not be found).
	PID int
	// RunID is the holder's run, if it is a run that has opened its journal.
	RunID string
	// Journal is the holder's journal when found outside Dir (the
	// machine's lock, HostLockPath, held by a run of another journal
	// directory).
	Journal string
}

func (e *BusyError) Error() string {
	who := "another cnibench process"
	switch {
	case e.RunID != "" && e.Journal != "" && filepath.Dir(e.Journal) != e.Dir:
		who = fmt.Sprintf("run %s (pid %d, journal %s)", e.RunID, e.PID, e.Journal)
	case e.RunID != "":
		who = fmt.Sprintf("run %s (pid %d)", e.RunID, e.PID)
	case e.PID > 0:
		who = fmt.Sprintf("cnibench pid %d (%s)", e.PID, cmdline(e.PID))
	}
	return fmt.Sprintf("%s holds the host lock on %s; one run or cleanup at a time: wait for it to end", who, e.Dir)
}

// LockError means the host lock could not be taken for a reason other
// than another holder: the directory cannot be made or opened (not
// root), or flock failed. Nothing was touched.
type LockError struct {
	Dir string
	Err error
}

func (e *LockError) Error() string {
	s := fmt.Sprintf("host lock on %s: %v", e.Dir, e.Err)
	if errors.Is(e.Err, os.ErrPermission) {
		s += " (it is root's: run cnibench as root, e.g. with sudo)"
	}
	return s
}

func (e *LockError) Unwrap() error { return e.Err }

// Lock is a held lock: a journal directory's, the machine's
// (HostLockPath), or both (With).
type Lock struct{ fs []*os.File }

// With adds the held lock o to l, so that one Release drops both, and
// returns l. Either may be nil.
func (l *Lock) With(o *Lock) *Lock {
	if l == nil {
		return o
	}
	if o != nil {
		l.fs, o.fs = append(l.fs, o.fs...), nil
	}
	return l
}

// LockDir takes the host lock on dir (created if missing) or returns a
// *BusyError at once (or a *LockError when it cannot be taken at all, an
// *UntrustedDirError when dir is not this user's alone: CheckDir).
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &LockError{Dir: dir, Err: err}
	}
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	return lockDir(dir, unix.LOCK_EX)
}

// LockShared takes the host lock on dir shared, as a cleanup dry run
// does: runs and cleanups (which take it exclusively) are refused with a
// *BusyError while it is held, other dry runs share it. That, and
// Dead's peek, keeps what a dry run reads from looking like a live run to
// a run starting meanwhile. A missing dir is not created (nil, nil: there
// is nothing to read). Held exclusively by a run or cleanup, it returns a
// *BusyError.
func LockShared(dir string) (*Lock, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return lockDir(dir, unix.LOCK_SH)
}

func lockDir(dir string, how int) (*Lock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, &LockError{Dir: dir, Err: err}
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, busy(dir, f)
		}
		return nil, &LockError{Dir: dir, Err: fmt.Errorf("flock: %w", err)}
	}
	return &Lock{fs: []*os.File{f}}, nil
}

// Release drops the lock. Safe on nil and more than once.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	for _, f := range l.fs {
		f.Close()
	}
	l.fs = nil
}

// StaleError means dead runs left journals whose changes are not undone.
type StaleError struct {
	Dir string
	// Cleanup is the command that undoes the dead runs' changes, as
	// printed; empty: DefaultCleanup. DeadElsewhere names the
	// directory's own (CleanupFor); BeginRun its caller's, which knows
	// whose directory it is: a kube run's (cleanup --kube, its
	// controller journals not for the local cleanup to replay), a
	// local run's (CleanupFor: plain cnibench cleanup does nothing for
	// a directory it has not recorded, such as one whose first run is
	// refused here).
	Cleanup string
	// Journals are the paths of every journal refused for; those of
	// Damaged and Untrusted too.
	Journals []string
	// Damaged are dead runs' journals with lines that cannot be read
	// (Replay.Damaged): cleanup undoes what it can read and sets them
	// aside.
	Damaged []*Replay
	// Untrusted are files that cannot be read as journals at all (no
	// header, a header that does not describe its file, unreadable):
	// cleanup leaves them alone, so the operator must.
	Untrusted []Untrusted
}

// Untrusted is a file in the journal directory that cannot be read as a
// journal; its message says what the operator can do.
type Untrusted struct {
	Path string
	Err  error
}

func (u Untrusted) Error() string { return untrustedNote(filepath.Dir(u.Path), u.Path, u.Err) }

func (u Untrusted) Unwrap() error { return u.Err }

func (e *StaleError) Error() string {
	odd := map[string]bool{}
	var notes []string
	for _, r := range e.Damaged {
		odd[r.Path] = true
		notes = append(notes, damagedNote(r))
	}
	for _, u := range e.Untrusted {
		odd[u.Path] = true
		notes = append(notes, u.Error())
	}
	var plain []string
	for _, p := range e.Journals {
		if !odd[p] {
			plain = append(plain, p)
		}
	}
	if len(plain) > 0 {
		notes = append([]string{fmt.Sprintf("a dead run left changes journaled in %s; undo them first with: %s", strings.Join(plain, ", "), cmp.Or(e.Cleanup, DefaultCleanup))}, notes...)
	}
	return strings.Join(notes, "\n")
}

// BeginRun takes the host lock for a run and refuses (returning a
// *StaleError, lock released) while a dead run's journal is in dir: its
// values are the old values this run would journal, so cleanup must undo
// them first. A file that cannot be read as a journal refuses it too: it
// is not trusted to be harmless. Hold the returned lock until the run has
// closed its journal. cleanup is the command the refusal names (empty:
// DefaultCleanup): the caller's, for whose directory dir is.
func BeginRun(dir, cleanup string) (*Lock, error) {
	l, err := LockDir(dir)
	if err != nil {
		return nil, err
	}
	se, err := staleIn(dir)
	if err == nil && se != nil {
		se.Cleanup = cleanup
		err = se
	}
	if err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// staleIn returns a *StaleError for the dead runs' journals in dir (and
// its files that cannot be read as journals), or nil.
func staleIn(dir string) (*StaleError, error) {
	paths, err := list(dir)
	if err != nil {
		return nil, err
	}
	se := &StaleError{Dir: dir}
	for _, p := range paths {
		r, err := ReadSalvage(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			se.Untrusted = append(se.Untrusted, Untrusted{Path: p, Err: err})
		case ProcessAlive(r.Header.PID, r.Header.PIDStart) || locked(p):
			continue
		case len(r.Damaged) > 0:
			se.Damaged = append(se.Damaged, r)
		}
		se.Journals = append(se.Journals, p)
	}
	if len(se.Journals) == 0 {
		return nil, nil
	}
	return se, nil
}

// busy finds who holds the lock on the open directory f.
func busy(dir string, f *os.File) error {
	e := &BusyError{Dir: dir}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return e
	}
	e.PID = flockHolder(uint64(st.Dev), st.Ino)
	if e.PID <= 0 {
		return e
	}
	paths, _ := list(dir)
	for _, p := range paths {
		if r, err := ReadReplay(p); err == nil && r.Header.PID == e.PID {
			e.RunID = r.Header.RunID
		}
	}
	return e
}

// flockHolder returns the pid holding a FLOCK on the inode, from
// /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF"), or 0.
func flockHolder(dev, ino uint64) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// Blocked waiters are listed as "1: -> FLOCK ..."; skip them.
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil {
			return pid
		}
	}
	return 0
}

// cmdline is the command line of pid, for messages.
func cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return "exited"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
