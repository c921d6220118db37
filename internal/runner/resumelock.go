package runner

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrRunDirBusy is LockRunDir's refusal of a run directory another
// process holds.
var ErrRunDirBusy = errors.New("another cnibench run is writing to this run directory")

// LockRunDir holds an exclusive lock on the run directory dir until
// release is called (or the process ends): the run that writes it, and
// a `run --resume DIR` of it, hold it for their lifetime. The journal
// directory's lock keeps one run at a time per journal directory only,
// so two resumes of one run, each with its own journal directory (the
// kube engine's is per user), both appended to its samples.jsonl and
// wrote its stops.json. The lock is flock(2) on the directory itself:
// nothing is added to it, and a process that dies lets go.
func LockRunDir(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run directory: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (a run, or a resume of it, is still going; wait for it to end)", dir, ErrRunDirBusy)
		}
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// RunDirBusy says whether a run, or a resume of it, holds dir's lock
// (LockRunDir) now: its samples and stops are still being written, so a
// reader would take a partial run for one that ended. A shared lock
// tried and let go at once; false where dir cannot be opened.
func RunDirBusy(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK)
}
