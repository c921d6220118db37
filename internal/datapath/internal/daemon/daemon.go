// Package daemon runs a datapath's long-lived helper programs (a routing
// daemon, a CNI agent) inside a node's network namespace, with their
// output in a log file, and stops them with the run.
//
// Design notes: a daemon is started with an argument vector, never a
// shell, and in its own process group, so a terminal's Ctrl-C reaches
// cnibench only and cnibench stops its daemons in order. One goroutine
// per daemon waits for it, so it is reaped as soon as it exits and its
// exit status is known (Exited) while it should still be running. A
// daemon left behind by a killed cnibench is inside one of the run's
// namespaces, where cleanup.KillInNetns finds it.
package daemon

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cnibench/cnibench/internal/netns"
)

// Daemon is a program running in a node namespace.
type Daemon struct {
	name, node string
	cmd        *exec.Cmd
	logPath    string
	done       chan struct{}
	err        error
}

// Start starts argv inside the namespace ns, for the node named node,
// with stdout and stderr appended to dir/PROGRAM-NODE.log and dir as its
// working directory.
// Equivalent to: ip netns exec NS ARGV... >>DIR/PROGRAM-NODE.log 2>&1 &
func Start(ns, node, dir string, argv []string) (*Daemon, error) {
	if len(argv) == 0 {
		return nil, errors.New("daemon: empty command")
	}
	name := filepath.Base(argv[0])
	logPath := filepath.Join(dir, name+"-"+node+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log of %s on %s: %w", name, node, err)
	}
	// The child holds its own copy of the descriptor.
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := netns.Start(ns, nil, cmd); err != nil {
		return nil, fmt.Errorf("start %s on %s (netns %s): %w", name, node, ns, err)
	}
	d := &Daemon{name: name, node: node, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// Name is the program's base name (bird).
func (d *Daemon) Name() string { return d.name }

// Node is the node the daemon runs on.
func (d *Daemon) Node() string { return d.node }

// PID is the daemon's process id.
func (d *Daemon) PID() int { return d.cmd.Process.Pid }

// LogPath is the file its output goes to.
func (d *Daemon) LogPath() string { return d.logPath }

// Done is closed once the daemon has exited and been reaped.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Exited reports whether the daemon has ended, and how.
func (d *Daemon) Exited() (bool, error) {
	select {
	case <-d.done:
		return true, d.err
	default:
		return false, nil
	}
}

// Tail returns the last n lines of the daemon's log, for error messages.
func (d *Daemon) Tail(n int) string {
	b, err := os.ReadFile(d.logPath)
	if err != nil {
		return fmt.Sprintf("(log %s unreadable: %v)", d.logPath, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(log empty)"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop sends SIGTERM and, if the daemon is still running after grace,
// SIGKILL; it returns once the process has been reaped, with an error
// when it had to be killed. Stopping an exited daemon does nothing.
func (d *Daemon) Stop(grace time.Duration) error {
	if ok, _ := d.Exited(); ok {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-d.done:
		return nil
	case <-t.C:
		_ = d.cmd.Process.Kill()
		<-d.done
		return fmt.Errorf("%s on %s ignored SIGTERM for %s and was killed", d.name, d.node, grace)
	}
}

// ErrExited describes the exit of a daemon that should still run, with
// the end of its log.
func (d *Daemon) ErrExited() error {
	_, err := d.Exited()
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s on %s exited (%w); its log ends:\n%s", d.name, d.node, err, d.Tail(10))
}
