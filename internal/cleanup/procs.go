package cleanup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// processAlive is journal.ProcessAlive (tests play a process slow to
// exit after SIGKILL).
var processAlive = journal.ProcessAlive

// proc is one process, named by pid and start time so a recycled pid is
// never mistaken for it.
type proc struct {
	pid   int
	start uint64
}

// nsID is the identity of a namespace: the nsfs inode behind
// /proc/PID/ns/net and behind the bind mount /var/run/netns/NAME.
type nsID struct{ dev, ino uint64 }

func statNS(path string) (nsID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nsID{}, err
	}
	return nsID{uint64(st.Dev), st.Ino}, nil
}

// procsIn returns the processes any of whose threads is in the named
// namespace. Threads count because one setns'd thread is enough to keep a
// namespace alive (cnibench itself enters namespaces per thread).
func procsIn(name string) ([]proc, error) {
	id, err := statNS(netns.Path(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", name, err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("scan /proc: %w", err)
	}
	self := os.Getpid()
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		// The start time is read before the namespace check and
		// confirmed after it: a pid recycled in between (a process of
		// the namespace exited, another took its pid) fails the second
		// read, so the record is never a stranger's pid with the start
		// of a process that was in the namespace, or the reverse.
		start, err := journal.ProcessStart(pid)
		if err != nil {
			continue // exited meanwhile
		}
		if !inNS(pid, id) || !journal.ProcessAlive(pid, start) {
			continue
		}
		out = append(out, proc{pid, start})
	}
	return out, nil
}

func inNS(pid int, id nsID) bool {
	dir := fmt.Sprintf("/proc/%d", pid)
	if got, err := statNS(dir + "/ns/net"); err == nil && got == id {
		return true
	}
	tasks, _ := os.ReadDir(dir + "/task")
	for _, t := range tasks {
		if got, err := statNS(filepath.Join(dir, "task", t.Name(), "ns/net")); err == nil && got == id {
			return true
		}
	}
	return false
}

// kill sends SIGKILL to each process still alive and waits until all are
// gone (or zombies, which hold no namespace), or until timeout. No signal
// to cleanup ends the wait: a SIGKILLed process may take a while to
// exit (freeing its memory), and a cleanup that returned then would keep
// the journal, or delete no namespace, with nothing left to kill; the
// wait is bounded by timeout instead.
func kill(ps []proc, timeout time.Duration) error {
	for _, p := range ps {
		if err := killOne(p); err != nil {
			return err
		}
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var left []string
		for _, p := range ps {
			if processAlive(p.pid, p.start) {
				left = append(left, fmt.Sprintf("%d (%s)", p.pid, comm(p.pid)))
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("processes %s still alive %s after SIGKILL (stuck in the kernel?); run cleanup again once they exit", strings.Join(left, ", "), timeout)
		case <-tick.C:
		}
	}
}

// comm is a process's command name, for messages.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "exited"
	}
	return strings.TrimSpace(string(b))
}

// KillInNetns kills every process inside the named namespace (any thread
// in it counts) with SIGKILL and waits until they are gone, so a deleted
// namespace is not kept alive by a straggler. A missing namespace has no
// processes.
func KillInNetns(name string) error {
	_, err := killAllIn(name, defaultKillTimeout)
	return err
}

// defaultKillTimeout bounds the wait for killed processes to exit.
const defaultKillTimeout = 5 * time.Second

// killAllIn kills every process in the named namespace, scanning again
// until none is left, as a dying process may have forked.
func killAllIn(name string, timeout time.Duration) ([]proc, error) {
	var all []proc
	for round := 0; round < 10; round++ {
		ps, err := procsIn(name)
		if err != nil || len(ps) == 0 {
			return all, err
		}
		all = append(all, ps...)
		if err := kill(ps, timeout); err != nil {
			return all, fmt.Errorf("netns %s: %w", name, err)
		}
	}
	return all, fmt.Errorf("netns %s: processes keep appearing", name)
}

// killOne sends SIGKILL to p if it is still the process it was. Through a
// pidfd: once the pidfd is open it names that process and no other, so
// the start time checked after opening it cannot belong to a process that
// took the pid between the check and the signal. Kernels before 5.3 have
// no pidfd: the pid is checked and signalled directly, with that small
// window left.
func killOne(p proc) error {
	fd, err := unix.PidfdOpen(p.pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.ENOSYS):
		if journal.ProcessAlive(p.pid, p.start) {
			if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("kill %d: %w", p.pid, err)
			}
		}
		return nil
	case err != nil:
		return fmt.Errorf("pidfd of %d: %w", p.pid, err)
	}
	defer unix.Close(fd)
	if !journal.ProcessAlive(p.pid, p.start) {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill %d: %w", p.pid, err)
	}
	return nil
}
