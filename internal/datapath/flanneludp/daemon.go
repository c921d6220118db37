package flanneludp

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

// stopGrace is how long a daemon gets after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// daemon is a long-running program in a node namespace whose output goes
// to a log file in the run's temporary directory.
type daemon struct {
	name, node string
	cmd        *exec.Cmd
	logPath    string
	done       chan struct{}
	err        error
}

// startDaemon starts argv inside the namespace ns (never through a
// shell). It gets its own process group so a terminal's Ctrl-C reaches
// cnibench only, which then stops it in order.
func startDaemon(ns, node, dir string, argv []string) (*daemon, error) {
	name := filepath.Base(argv[0])
	logPath := filepath.Join(dir, name+"-"+node+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := netns.Start(ns, nil, cmd); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", name, ns, err)
	}
	d := &daemon{name: name, node: node, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// exited reports whether the daemon has ended, and how.
func (d *daemon) exited() (bool, error) {
	select {
	case <-d.done:
		return true, d.err
	default:
		return false, nil
	}
}

// tail returns the last lines of the daemon's log, for error messages.
func (d *daemon) tail() string {
	b, _ := os.ReadFile(d.logPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// stop sends SIGTERM and, after stopGrace, SIGKILL; it returns once the
// process has been reaped. Stopping an exited daemon does nothing.
func (d *daemon) stop() error {
	if ok, _ := d.exited(); ok {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-d.done:
		return nil
	case <-t.C:
		_ = d.cmd.Process.Kill()
		<-d.done
		return fmt.Errorf("%s on %s ignored SIGTERM for %s and was killed", d.name, d.node, stopGrace)
	}
}

// errExited wraps the exit of a daemon that should still run.
func (d *daemon) errExited() error {
	_, err := d.exited()
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s on %s exited (%v); its log ends:\n%s", d.name, d.node, err, d.tail())
}
