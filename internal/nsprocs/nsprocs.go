// Package nsprocs finds the processes inside a named network namespace
// and kills them: what cleanup and the local engine do before they delete
// a namespace, and what a kernel test's throw-away namespace needs when
// the test ends without stopping what it started (kerneltest.Netns). It
// lies below cleanup so that test helpers can use it: cleanup imports
// packages (impair) whose own tests import kerneltest.
package nsprocs

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

// Proc is one process, named by pid and start time (/proc/PID/stat field
// 22) so a recycled pid is never mistaken for it.
type Proc struct {
	PID   int
	Start uint64
}

// DefaultTimeout bounds the wait for killed processes to exit.
const DefaultTimeout = 5 * time.Second

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

// In returns the processes any of whose threads is in the named
// namespace (this process aside). Threads count because one setns'd
// thread is enough to keep a namespace alive (cnibench itself enters
// namespaces per thread). A missing namespace has none.
func In(name string) ([]Proc, error) {
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
	var out []Proc
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
		out = append(out, Proc{pid, start})
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

// Killer kills processes and waits for them to exit.
type Killer struct {
	// Alive says whether a process still runs: journal.ProcessAlive
	// when nil (tests play a process slow to exit after SIGKILL).
	Alive func(pid int, start uint64) bool
}

func (k Killer) alive(p Proc) bool {
	if k.Alive != nil {
		return k.Alive(p.PID, p.Start)
	}
	return journal.ProcessAlive(p.PID, p.Start)
}

// Kill is Killer{}.Kill.
func Kill(ps []Proc, timeout time.Duration) error { return Killer{}.Kill(ps, timeout) }

// Kill sends SIGKILL to each process still alive and waits until all are
// gone (or zombies, which hold no namespace), or until timeout, naming
// those still alive then. Nothing else ends the wait (no context): a
// SIGKILLed process may take a while to exit (freeing its memory), and a
// caller that went on meanwhile would delete no namespace, or keep a
// journal, with nothing left to kill.
func (k Killer) Kill(ps []Proc, timeout time.Duration) error {
	for _, p := range ps {
		if err := KillOne(p); err != nil {
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
			if k.alive(p) {
				left = append(left, fmt.Sprintf("%d (%s)", p.PID, Comm(p.PID)))
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("processes %s still alive %s after SIGKILL (stuck in the kernel?)", strings.Join(left, ", "), timeout)
		case <-tick.C:
		}
	}
}

// Comm is a process's command name, for messages.
func Comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "exited"
	}
	return strings.TrimSpace(string(b))
}

// KillAllIn is Killer{}.KillAllIn.
func KillAllIn(name string, timeout time.Duration) ([]Proc, error) {
	return Killer{}.KillAllIn(name, timeout)
}

// KillAllIn kills every process in the named namespace (In) and waits
// for them, scanning again until none is left, as a dying process may
// have forked. It returns those it killed.
func (k Killer) KillAllIn(name string, timeout time.Duration) ([]Proc, error) {
	var all []Proc
	for round := 0; round < 10; round++ {
		ps, err := In(name)
		if err != nil || len(ps) == 0 {
			return all, err
		}
		all = append(all, ps...)
		if err := k.Kill(ps, timeout); err != nil {
			return all, fmt.Errorf("netns %s: %w", name, err)
		}
	}
	return all, fmt.Errorf("netns %s: processes keep appearing", name)
}

// KillOne sends SIGKILL to p if it is still the process it was. Through a
// pidfd: once the pidfd is open it names that process and no other, so
// the start time checked after opening it cannot belong to a process that
// took the pid between the check and the signal. Kernels before 5.3 have
// no pidfd: the pid is checked and signalled directly, with that small
// window left.
func KillOne(p Proc) error {
	fd, err := unix.PidfdOpen(p.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.ENOSYS):
		if journal.ProcessAlive(p.PID, p.Start) {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("kill %d: %w", p.PID, err)
			}
		}
		return nil
	case err != nil:
		return fmt.Errorf("pidfd of %d: %w", p.PID, err)
	}
	defer unix.Close(fd)
	if !journal.ProcessAlive(p.PID, p.Start) {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill %d: %w", p.PID, err)
	}
	return nil
}
