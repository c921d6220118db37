package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The machine's lock. The journal directory's lock (lock.go) keeps apart
// the runs and cleanups of one directory, but a run may journal
// anywhere (--journal-dir: the e2e tests and scripts/soak.sh use
// private directories), while the values it changes
// (rps_sock_flow_entries, global sysctls, the CPUs' idle limits) are the
// machine's: two runs of two directories would journal each other's
// values as "old" and leave the machine at one of theirs after both
// reverted. So every command that changes this machine's values (a
// local run, a cleanup) also takes one flock at a fixed path,
// HostLockPath, whatever its journal directory.
//
// /run is root's and a tmpfs: only root can create or lock the file (no
// user can hold it to keep runs out, or plant a link in its place), and
// it goes at reboot with the values it guards. The file is left in
// place: unlinking a lock file that another process has open lets two
// processes lock two different files.

// HostLockPath is the machine's lock file.
const HostLockPath = "/run/cnibench.lock"

// LockHost takes the machine's lock at path (HostLockPath) or returns a
// *BusyError naming the holder at once (a *LockError when it cannot be
// taken at all: without root, /run is not writable).
func LockHost(path string) (*Lock, error) {
	f, err := openHostLock(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, busyHost(path, f)
		}
		return nil, &LockError{Dir: path, Err: fmt.Errorf("flock: %w", err)}
	}
	return &Lock{fs: []*os.File{f}}, nil
}

// WaitHost is LockHost that waits up to timeout for the holder to let
// go, and then returns its *BusyError. Kernel tests take the machine's
// lock so: go test runs packages side by side, and each holds it for
// seconds. A command refuses at once instead (LockHost): an operator
// who starts a second run is told whose run holds the machine.
func WaitHost(path string, timeout time.Duration) (*Lock, error) {
	return waitFor(func() (*Lock, error) { return LockHost(path) }, timeout)
}

// WaitDir is LockDir that waits up to timeout for the holder to let go,
// and then returns its *BusyError (a node agent's session waits so for a
// replay that holds its node for moments).
func WaitDir(dir string, timeout time.Duration) (*Lock, error) {
	return waitFor(func() (*Lock, error) { return LockDir(dir) }, timeout)
}

// waitFor tries lock until it is not refused as busy or timeout has
// passed.
func waitFor(lock func() (*Lock, error), timeout time.Duration) (*Lock, error) {
	deadline := time.Now().Add(timeout)
	for {
		l, err := lock()
		var be *BusyError
		if !errors.As(err, &be) || time.Now().After(deadline) {
			return l, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openHostLock opens (creating) the lock file without following a link:
// the file is root's, and root must never be led to create or lock one
// elsewhere.
func openHostLock(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &LockError{Dir: path, Err: &os.PathError{Op: "open", Path: path, Err: err}}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// busyHost finds who holds the machine's lock: the pid from /proc/locks,
// and its run from the journal that pid has open, wherever that is.
func busyHost(path string, f *os.File) error {
	e := &BusyError{Dir: path}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return e
	}
	e.PID = flockHolder(uint64(st.Dev), st.Ino)
	if e.PID > 0 {
		e.Journal = openJournalOf(e.PID)
		e.RunID = strings.TrimSuffix(filepath.Base(e.Journal), Ext)
	}
	return e
}
