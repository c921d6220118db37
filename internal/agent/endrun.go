package agent

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// Ending the live sessions of dead runs (`agent replay --end-run R`,
// sent by `cleanup --kube` for the runs whose Lease went stale). A run's
// session holds its node until its stdin closes, and when the runner's
// machine vanishes the exec stream behind that stdin may stay open for
// hours (the kubelet's streaming idle timeout): every later run is
// refused the node meanwhile, and a replay cannot help, since it only
// touches dead sessions' journals. So cleanup, which has found the run
// dead, asks each agent to end that run's sessions as the agent pod's
// stop does: SIGTERM, on which a session stops what it runs on the node
// (perf, CPU sampling, a trace), puts back what it changed and lets go
// of the node (serveSession, Server.End).

// endSessionWait bounds the wait for a session to end after SIGTERM: it
// reverts first, which takes moments. endKillWait bounds the wait after
// SIGKILL, which the kernel carries out at once unless the process is
// stuck in the kernel.
var (
	endSessionWait = 30 * time.Second
	endKillWait    = 5 * time.Second
)

// liveSession is a live session of a named run, found by its journal.
type liveSession struct {
	run     string
	pid     int
	start   uint64 // the process's start time, against pid reuse
	journal string
	proc    *os.Process
}

// EndRuns ends the live sessions in the node journal directory dir of
// the named runs and says per session what happened. A session is found
// by its journal, named RUN_PID, whose header records the pid and the
// process's start time: a pid reused by another process since does not
// match that start time and is left alone. Sessions of runs not named,
// and this process, are never signalled. Every run ID must pass
// journal.CheckRunID, or nothing is done.
func EndRuns(dir string, runs []string) ([]string, error) {
	for _, r := range runs {
		if err := journal.CheckRunID(r); err != nil {
			return nil, fmt.Errorf("--end-run: %w", err)
		}
	}
	var lines []string
	var errs []error
	var live []*liveSession
	named := map[string]bool{}
	for _, r := range runs {
		named[r] = true
	}
	for _, s := range sessions(dir, func(run string) bool { return named[run] }) {
		if err := s.signal(syscall.SIGTERM); err != nil {
			errs = append(errs, fmt.Errorf("end session pid %d of run %s: %w", s.pid, s.run, err))
			continue
		}
		live = append(live, s)
	}
	// One bound for all: each session's wait begins at the SIGTERMs,
	// not when the one before it ended, so several stuck sessions cost
	// endSessionWait, not a multiple of it within cleanup's exec deadline.
	termBy := time.Now().Add(endSessionWait)
	for _, s := range live {
		lines = append(lines, s.await(termBy))
	}
	return lines, errors.Join(errs...)
}

// signal sends sig to the session's process. The handle is taken first
// and the start time checked after: on Linux os.FindProcess holds a
// pidfd, so the signal reaches the process checked, never one that
// reused its pid in between.
func (s *liveSession) signal(sig syscall.Signal) error {
	if s.proc == nil {
		p, err := os.FindProcess(s.pid)
		if err != nil {
			return err
		}
		s.proc = p
	}
	if !journal.ProcessAlive(s.pid, s.start) {
		return nil // ended meanwhile
	}
	if err := s.proc.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// await waits for the session to end after SIGTERM and words what
// happened. A session still there at termBy (endSessionWait after the
// SIGTERMs) is killed: its
// run is dead (cleanup found its Lease stale), so nobody uses it, and
// left alive it keeps the node for hours, which is what ending it is
// for. Killing loses nothing: its journal is fsync'ed before every
// change, the kernel drops its lock when it dies, and the replay that
// follows (the same `agent replay`) puts back what it still holds, each
// value only where the session's own value is still there.
func (s *liveSession) await(termBy time.Time) string {
	defer s.proc.Release()
	if s.wait(termBy) {
		return s.ended()
	}
	if err := s.signal(syscall.SIGKILL); err != nil {
		return fmt.Sprintf("session pid %d of run %s did not end within %v of SIGTERM, and SIGKILL failed: %v; the node stays claimed",
			s.pid, s.run, endSessionWait, err)
	}
	if s.wait(time.Now().Add(endKillWait)) {
		return fmt.Sprintf("session pid %d of run %s did not end within %v of SIGTERM: killed it (its journal is replayed below)",
			s.pid, s.run, endSessionWait)
	}
	return fmt.Sprintf("session pid %d of run %s did not end within %v of SIGTERM nor %v of SIGKILL (stuck in the kernel?); the node stays claimed",
		s.pid, s.run, endSessionWait, endKillWait)
}

// ended words a session's end after SIGTERM. One that put everything
// back retired its journal (a session stopped by a signal ends as one
// whose input ended: Server.End), or left it with nothing pending; one
// that could not left its pending changes to the replay below.
func (s *liveSession) ended() string {
	r, err := journal.ReadReplay(s.journal)
	if err == nil {
		r.Release()
	}
	if errors.Is(err, os.ErrNotExist) || err == nil && len(r.Pending()) == 0 {
		return fmt.Sprintf("ended session pid %d of run %s (its changes put back)", s.pid, s.run)
	}
	if err != nil {
		return fmt.Sprintf("ended session pid %d of run %s (its journal: %v)", s.pid, s.run, err)
	}
	return fmt.Sprintf("ended session pid %d of run %s (%d of its changes left: replayed below)", s.pid, s.run, len(r.Pending()))
}

// wait polls until the session's process is gone, until deadline. The
// session is not this process's child, so it cannot be waited for.
func (s *liveSession) wait(deadline time.Time) bool {
	for journal.ProcessAlive(s.pid, s.start) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
