package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond (bounded): signals arrive asynchronously.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestSignalSequence: the first signal cancels, the second lists what the
// journal still holds, the third exits with ExitAbandoned; SIGPIPE and
// SIGHUP do not kill the process.
func TestSignalSequence(t *testing.T) {
	var out lockedBuf
	exited := make(chan int, 1)
	ctx, stop := HandleSignals(context.Background(), &out, func(code int) { exited <- code })
	defer stop()

	dir := t.TempDir()
	j, err := journal.Open(dir, "sig", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.RecordSet(journal.Set{FS: journal.FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.RecordObject(journal.Object{Kind: journal.KindNetns, Name: "cnb-sig-node"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.RecordQdisc(journal.Qdisc{Netns: "cnb-sig-node", Dev: "eth1", Prev: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	noteJournalDir(ctx, dir)

	// SIGPIPE is dropped (a write to a closed pipe fails with EPIPE).
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGPIPE); err != nil {
		t.Fatal(err)
	}
	// SIGHUP, unless this test runs under nohup: it then stays ignored
	// (TestIgnoredSignalsStayIgnored), and SIGTERM plays the first.
	first := syscall.SIGHUP
	if signal.Ignored(first) {
		first = syscall.SIGTERM
	}
	if err := syscall.Kill(syscall.Getpid(), first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cancel", func() bool { return ctx.Err() != nil })
	if !strings.Contains(out.String(), first.String()+": stopping") {
		t.Fatalf("first signal said %q", out.String())
	}
	if s := stoppedBy(ctx); s == nil || s.Signal != first {
		t.Fatalf("cause %v, want %v", context.Cause(ctx), first)
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	waitFor(t, "second notice", func() bool { return strings.Contains(out.String(), "signal once more") })
	got := out.String()
	for _, want := range []string{"still undoing: 3 change(s)", "cnb-sig-node:eth1 qdisc back", "netns cnb-sig-node", `host:/proc/sys/net/core/rps_sock_flow_entries back to "0"`} {
		if !strings.Contains(got, want) {
			t.Errorf("second notice lacks %q:\n%s", want, got)
		}
	}
	select {
	case c := <-exited:
		t.Fatalf("exited (%d) after two signals", c)
	default:
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case c := <-exited:
		if c != ExitAbandoned {
			t.Fatalf("exit code %d", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("third signal did not exit")
	}
}

// TestThirdSignalLeavingNoJournal: a third signal when this process
// leaves no journal (its teardown past the last journaled change, or a
// command that journals nothing) exits 128+N and names no cleanup.
// Before, it always exited 3 and said "run cnibench cleanup".
func TestThirdSignalLeavingNoJournal(t *testing.T) {
	var out lockedBuf
	exited := make(chan int, 1)
	ctx, stop := HandleSignals(context.Background(), &out, func(code int) { exited <- code })
	defer stop()
	dir := t.TempDir()
	j, err := journal.Open(dir, "sig", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	noteJournalDir(ctx, dir)
	if err := j.Close(); err != nil { // everything undone: the file is gone
		t.Fatal(err)
	}
	if c := threeSignals(t, ctx, &out, exited); c != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d, want %d", c, 128+int(syscall.SIGTERM))
	}
	last := out.String()[strings.LastIndex(strings.TrimSuffix(out.String(), "\n"), "\n")+1:]
	if !strings.Contains(last, "exiting at once") || strings.Contains(last, "cleanup") {
		t.Errorf("third signal said %q", last)
	}
}

// TestMainExitsOnSignal: a command that ends because a signal stopped it
// exits 128+N and says so, whatever its error, unless changes are left
// (TestKeptJournalExitsAbandoned); without the signal the same error
// keeps its own code.
func TestMainExitsOnSignal(t *testing.T) {
	args := []string{"report", t.TempDir() + "/none"}
	var errb bytes.Buffer
	if code := Main(context.Background(), args, &bytes.Buffer{}, &errb); code == 0 || code >= 128 {
		t.Fatalf("report of a missing directory: exit %d", code)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Stopped{Signal: syscall.SIGTERM})
	errb.Reset()
	if code := Main(ctx, args, &bytes.Buffer{}, &errb); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d after SIGTERM, want %d", code, 128+int(syscall.SIGTERM))
	}
	if !strings.HasPrefix(errb.String(), "cnibench: stopped on terminated: ") {
		t.Errorf("said %q", errb.String())
	}
}

// TestKeptJournalExitsAbandoned: a command whose journal was kept because
// changes are left exits 3 ("run cnibench cleanup") and says so, stopped
// by a signal or not. Before, a stop exited 128+N ("stopped with
// everything undone") whatever its error, and a failure 1.
func TestKeptJournalExitsAbandoned(t *testing.T) {
	kept := fmt.Errorf("trial: context canceled; journal: %w", &journal.PendingError{Path: "/run/cnibench/x.journal", Pending: 2})
	stopped, cancel := context.WithCancelCause(context.Background())
	cancel(&Stopped{Signal: syscall.SIGINT})
	for _, ctx := range []context.Context{stopped, context.Background()} {
		var errb bytes.Buffer
		if code := exitCode(ctx, newRoot(io.Discard, io.Discard), kept, &errb); code != ExitAbandoned {
			t.Errorf("exit %d, want %d (stopped: %v)", code, ExitAbandoned, stoppedBy(ctx) != nil)
		}
		if !strings.Contains(errb.String(), "2 change(s) not undone; run cnibench cleanup") {
			t.Errorf("the kept journal is not said: %q", errb.String())
		}
	}
}

// TestPanicExitsAbandoned: a panic on the command's goroutine exits 3
// naming the journal it leaves (1 when it leaves none), with the panic's
// stack; Go's own exit code was 2, "bad input, host untouched".
func TestPanicExitsAbandoned(t *testing.T) {
	st := &signalState{}
	ctx := context.WithValue(context.Background(), signalKey{}, st)
	dir := t.TempDir()
	noteJournalDir(ctx, dir)
	var errb bytes.Buffer
	boom := func() int { panic("boom") }
	if code := guard(ctx, &errb, boom); code != ExitFailure || !strings.Contains(errb.String(), "panic: boom") {
		t.Errorf("panic without a journal: exit %d, said %q; want %d", code, errb.String(), ExitFailure)
	}
	j, err := journal.Open(dir, "crash", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	errb.Reset()
	code := guard(ctx, &errb, boom)
	if code != ExitAbandoned || !strings.Contains(errb.String(), j.Path()+"; to undo them, run: cnibench cleanup\n") || !strings.Contains(errb.String(), "signals_test.go") {
		t.Errorf("panic with a journal: exit %d, said:\n%s\nwant %d naming %s, with the stack", code, errb.String(), ExitAbandoned, j.Path())
	}
	if code := guard(ctx, &errb, func() int { return 7 }); code != 7 {
		t.Errorf("guard changed a command's own code: %d", code)
	}
}

// TestQuitExitsAtOnce: SIGQUIT prints every goroutine's stack and exits
// at once: 3 when the process leaves a journal, else 128+3. Go's default
// exited 2.
func TestQuitExitsAtOnce(t *testing.T) {
	for _, withJournal := range []bool{false, true} {
		var out lockedBuf
		exited := make(chan int, 1)
		ctx, stop := HandleSignals(context.Background(), &out, func(code int) { exited <- code })
		want := 128 + int(syscall.SIGQUIT)
		if withJournal {
			dir := t.TempDir()
			j, err := journal.Open(dir, "quit", "cnb-")
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			noteJournalDir(ctx, dir)
			want = ExitAbandoned
		}
		syscall.Kill(syscall.Getpid(), syscall.SIGQUIT)
		select {
		case c := <-exited:
			if c != want || !strings.Contains(out.String(), "goroutine ") || !strings.Contains(out.String(), "SIGQUIT: exiting at once") {
				t.Errorf("journal %v: exit %d, want %d; said:\n%.400s", withJournal, c, want, out.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("SIGQUIT did not exit")
		}
		stop()
	}
}

// hupHelperEnv makes TestIgnoredSignalsHelper play a command that
// handles signals, in a child process.
const hupHelperEnv = "CNIBENCH_APP_HUP_HELPER"

// TestIgnoredSignalsHelper is the child of TestIgnoredSignalsStayIgnored:
// it handles signals, says "ready", and then whether the next 3 seconds
// cancelled its context.
func TestIgnoredSignalsHelper(t *testing.T) {
	if os.Getenv(hupHelperEnv) == "" {
		t.Skip("helper of TestIgnoredSignalsStayIgnored")
	}
	ctx, stop := HandleSignals(context.Background(), io.Discard, os.Exit)
	defer stop()
	fmt.Println("ready")
	select {
	case <-ctx.Done():
		fmt.Println("cancelled:", context.Cause(ctx))
	case <-time.After(3 * time.Second):
		fmt.Println("not cancelled")
	}
}

// TestIgnoredSignalsStayIgnored: a process started with SIGHUP and SIGINT
// ignored (nohup; a background job of a shell without job control) goes
// on when they arrive; before, signal.Notify un-ignored them and a
// `nohup cnibench run` was torn down at logout. SIGTERM still stops it.
func TestIgnoredSignalsStayIgnored(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to start the child with signals ignored")
	}
	for _, tc := range []struct {
		sigs []syscall.Signal
		want string
	}{
		{[]syscall.Signal{syscall.SIGHUP, syscall.SIGINT}, "not cancelled"},
		{[]syscall.Signal{syscall.SIGTERM}, "cancelled: stopped on terminated"},
	} {
		// The shell ignores them and execs the test binary, which
		// inherits them ignored, as under nohup.
		cmd := exec.Command(sh, "-c", `trap "" HUP INT; exec "$0" "$@"`, os.Args[0], "-test.run=^TestIgnoredSignalsHelper$")
		cmd.Env = append(os.Environ(), hupHelperEnv+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(out)
		if line, _ := r.ReadString('\n'); line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper said %q, want ready", line)
		}
		for _, sig := range tc.sigs {
			cmd.Process.Signal(sig)
		}
		line, _ := r.ReadString('\n')
		io.Copy(io.Discard, r)
		cmd.Wait()
		if strings.TrimSpace(line) != tc.want {
			t.Errorf("after %v: the child said %q, want %q", tc.sigs, line, tc.want)
		}
	}
}

// A third signal while `cnibench cleanup` undoes a dead run (its kills
// ignore signals: stale.go) leaves that run's journal, namespaces and
// processes: it exits 3 naming the journal, not 128+N, which says
// "everything undone". The journal is the dead run's, not this
// process's, so only noteUndoing tells the handler it is held.
func TestThirdSignalDuringCleanupNamesTheDeadRunsJournal(t *testing.T) {
	var out lockedBuf
	exited := make(chan int, 1)
	ctx, stop := HandleSignals(context.Background(), &out, func(code int) { exited <- code })
	defer stop()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: "deadrun", PID: dead.Process.Pid, PIDStart: 1, Started: time.Now().UTC(), Prefix: "cnb-"}})
	path := filepath.Join(t.TempDir(), "deadrun"+journal.Ext)
	if err := os.WriteFile(path, append(h, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	done := noteUndoing(ctx, path)
	defer done()
	if c := threeSignals(t, ctx, &out, exited); c != ExitAbandoned {
		t.Errorf("exit code %d, want %d (the dead run's journal is left)", c, ExitAbandoned)
	}
	if !strings.Contains(out.String(), path) {
		t.Errorf("the signals' messages do not name %s:\n%s", path, out.String())
	}
}

// Once the dead run is undone (done called), it no longer counts.
func TestNoteUndoingDone(t *testing.T) {
	st := &signalState{}
	ctx := context.WithValue(context.Background(), signalKey{}, st)
	path := filepath.Join(t.TempDir(), "r"+journal.Ext)
	if err := os.WriteFile(path, []byte(`{"header":{"version":1,"run":"r","pid":1,"prefix":"cnb-"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := noteUndoing(ctx, path)
	if got := len(ownJournals(st)); got != 1 {
		t.Fatalf("while undoing: %d journals held, want 1", got)
	}
	done()
	if got := len(ownJournals(st)); got != 0 {
		t.Errorf("after done: %d journals held, want 0", got)
	}
}

// threeSignals sends this process SIGTERM three times, each after the
// handler answered the one before (ctx cancelled, the second notice in
// out), and returns the exit code the third gave.
func threeSignals(t *testing.T, ctx context.Context, out *lockedBuf, exited <-chan int) int {
	t.Helper()
	for i := 1; i <= 3; i++ {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		switch i {
		case 1:
			waitFor(t, "cancel", func() bool { return ctx.Err() != nil })
		case 2:
			waitFor(t, "second notice", func() bool { return strings.Contains(out.String(), "signal once more") })
		}
	}
	select {
	case c := <-exited:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("third signal did not exit")
		return 0
	}
}
