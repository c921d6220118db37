package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Exec runs argv with stdout and stderr passed through and stops it
// (SIGTERM, SIGKILL after grace) when stdin ends. An exec through the
// Kubernetes API does not kill its process when the stream closes; with
// this shim closing the exec's stdin (or losing the connection) does.
// It returns the program's exit code (126/127 when it could not start).
func Exec(argv []string, stdin io.Reader, stdout, stderr io.Writer, grace time.Duration) int {
	if len(argv) == 0 {
		io.WriteString(stderr, "agent exec: no program given\n")
		return 126
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		io.WriteString(stderr, "agent exec: "+err.Error()+"\n")
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		select {
		case <-done:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(grace):
			cmd.Process.Kill()
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	close(done)
	signal.Stop(sig)
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// Pause waits for SIGTERM or SIGINT, reaping children meanwhile: the
// main process of workload pods (and of the test cluster's pause image).
func Pause(ctx context.Context) {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	defer signal.Stop(sig)
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-sig:
			if s != syscall.SIGCHLD {
				return
			}
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}

// Daemon is the agent pod's main process: it reverts journals of dead
// sessions at start and every interval, and once more when ctx ends,
// after asking live sessions of this node to stop (they revert their own
// changes on SIGTERM).
func Daemon(ctx context.Context, cfg Config, interval time.Duration, logf func(string, ...any)) error {
	s := NewServer(cfg)
	replay := func() {
		sum, err := s.replay()
		if !sum.Empty() {
			logf("dead sessions' changes: %s", sum)
		}
		if err != nil {
			logf("replay: %v", err)
		}
	}
	replay()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stopSessions(s.cfg.JournalDir, daemonRun(s.cfg.Run), 10*time.Second)
			replay()
			// Nothing left to revert: leave no empty directory on the node.
			removeEmptyDir(s.cfg.JournalDir)
			return nil
		case <-t.C:
			replay()
		}
	}
}

// daemonRun is the run whose sessions a stopping daemon may signal: a
// daemon started for one run (`agent daemon --run ID`) touches only that
// run's sessions, never another run's on the same node. The installed
// agent (no --run) owns every session on its node: they run in its
// container and end with it anyway, so it asks all of them to revert.
func daemonRun(run string) string {
	if run == defaultRun {
		return ""
	}
	return run
}

// stopSessions sends SIGTERM to the owners of live journals of run (""
// is every run) and waits (up to timeout) for their journals to be
// retired or their owners gone.
func stopSessions(dir, run string, timeout time.Duration) {
	var of func(string) bool
	if run != "" {
		of = func(r string) bool { return r == run }
	}
	for _, s := range sessions(dir, of) {
		s.signal(syscall.SIGTERM) // pid-reuse safe; one gone meanwhile is fine
		if s.proc != nil {
			s.proc.Release()
		}
	}
	deadline := time.Now().Add(timeout)
	for len(livePIDs(dir, run)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
}
