// Package proc runs a program on this machine, inside a named network
// namespace and pinned to CPUs, as an engine.Process. The local engine's
// pods and nodes and the workload tests use it.
//
// Design notes:
//   - The child is forked by netns.Start from a locked thread that has
//     entered the namespace, so it never runs outside it. That thread is
//     thrown away right after the fork, which is why Pdeathsig must not be
//     used here: the kernel would kill the child when that thread exits.
//     StartTied (tied.go) forks from a thread that lives as long as the
//     process instead (netns.StartTied), so there it is.
//   - The child gets its own process group so a Ctrl-C in the terminal
//     reaches cnibench only; cnibench then stops its children in order
//     (context cancellation) and the tools can still print their results.
//   - A goroutine reaps the child as soon as it exits, whether or not
//     anyone calls Wait, so no zombie is left behind.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
)

// Output caps. An iperf3 JSON report of a long run with many streams is a
// few MB; the caps only guard memory against a runaway program.
const (
	MaxStdout = 64 << 20
	MaxStderr = 1 << 20
)

// StopGrace is how long Stop and context cancellation wait after SIGTERM
// before they send SIGKILL.
const StopGrace = 2 * time.Second

// ErrOutputTruncated is returned by Wait when the program printed more
// than the cap; the output kept is its beginning.
var ErrOutputTruncated = errors.New("output exceeded the capture limit")

type process struct {
	argv   []string
	cmd    *exec.Cmd
	stdout *capped
	stderr *capped
	done   chan struct{}
	err    error // result of cmd.Wait, valid once done is closed
}

// Start runs argv in the named network namespace ("" = the namespace of
// cnibench itself), pinned to cpus when cpus is non-empty. No shell sees
// argv. When ctx is done the program gets SIGTERM, then SIGKILL after
// StopGrace.
func Start(ctx context.Context, netnsName string, cpus cpuset.Set, argv []string) (engine.Process, error) {
	return StartWatched(ctx, netnsName, cpus, argv, nil)
}

// StartInput is Start with stdin as the program's standard input: how
// rule sets reach iptables-restore and nft, so that no file of them is
// left behind when cnibench is killed while they load.
func StartInput(ctx context.Context, netnsName string, cpus cpuset.Set, argv []string, stdin []byte) (engine.Process, error) {
	return startWith(ctx, argv, nil, func(cmd *exec.Cmd) error {
		cmd.Stdin = bytes.NewReader(stdin)
		return startIn(netnsName, cpus, argv, cmd)
	})
}

// StartWatched is Start that also hands each line of the program's stdout
// to line as it is printed (engine.Watcher); nil line watches nothing.
func StartWatched(ctx context.Context, netnsName string, cpus cpuset.Set, argv []string, line func(string)) (engine.Process, error) {
	return startWith(ctx, argv, line, func(cmd *exec.Cmd) error {
		return startIn(netnsName, cpus, argv, cmd)
	})
}

// startIn forks cmd in the named namespace, pinned to cpus.
func startIn(netnsName string, cpus cpuset.Set, argv []string, cmd *exec.Cmd) error {
	if err := netns.Start(netnsName, cpus, cmd); err != nil {
		where := "netns " + netnsName
		if netnsName == "" {
			where = "the host namespace"
		}
		return fmt.Errorf("start %s in %s: %w", argv[0], where, err)
	}
	return nil
}

// startWith makes argv's command, has fork start it, and reaps it.
func startWith(ctx context.Context, argv []string, line func(string), fork func(*exec.Cmd) error) (engine.Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("start: empty command")
	}
	p := &process{
		argv:   append([]string(nil), argv...),
		stdout: &capped{max: MaxStdout},
		stderr: &capped{max: MaxStderr},
		done:   make(chan struct{}),
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = p.stdout
	if line != nil {
		cmd.Stdout = io.MultiWriter(p.stdout, engine.NewLines(line))
	}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = StopGrace
	p.cmd = cmd
	if err := fork(cmd); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Wait waits for the program to exit. A non-zero exit or a death by signal
// is an *engine.ExitError carrying the output. It may be called more than
// once and from several goroutines.
func (p *process) Wait() (stdout, stderr []byte, err error) {
	<-p.done
	stdout, stderr = p.stdout.bytes(), p.stderr.bytes()
	switch {
	case p.err != nil:
		return stdout, stderr, &engine.ExitError{Argv: p.argv, Err: p.err, Stdout: stdout, Stderr: stderr}
	case p.stdout.dropped > 0 || p.stderr.dropped > 0:
		return stdout, stderr, fmt.Errorf("%s: %w (%d bytes of stdout and %d of stderr dropped)",
			p.argv[0], ErrOutputTruncated, p.stdout.dropped, p.stderr.dropped)
	}
	return stdout, stderr, nil
}

// Stop sends SIGTERM, then SIGKILL if the program is still running after
// StopGrace, and returns once it has exited. Stopping an exited program
// does nothing. os.Process signals through a pidfd, so a recycled PID is
// never hit.
func (p *process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(StopGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
