package agent

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// holderTermEnv set to "ignore" makes the holder process (TestMain)
// ignore SIGTERM, as a session stuck in its revert would not end on it.
const holderTermEnv = "CNIBENCH_AGENT_HOLDER_TERM"

// holdTerm makes the holder end on SIGTERM as `agent serve` does
// (serveSession): it reverts what it changed, then exits.
func holdTerm(srv *Server) {
	if os.Getenv(holderTermEnv) == "ignore" {
		signal.Ignore(syscall.SIGTERM)
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		if _, err := srv.Revert(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}()
}

// TestEndRunsFreesTheNode: a live session of run r1 in another process
// claims the node (as a session whose runner vanished keeps it); ending
// run r2 leaves it alone and the node held, ending r1 signals it, it puts
// back what it changed and exits, and another run claims the node.
func TestEndRunsFreesTheNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1")
	pid := cmd.Process.Pid
	lines, err := EndRuns(dir, []string{"r2", "r1_" + strconv.Itoa(pid), "r"})
	if err != nil || len(lines) != 0 {
		t.Fatalf("ending other runs = %q, %v; want nothing done", lines, err)
	}
	srv := NewServer(Config{Run: "r3", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	if err := srv.claim(); !errors.Is(err, ErrNodeBusy) {
		t.Fatalf("claim after ending other runs = %v; want r1 still holding the node", err)
	}
	lines, err = EndRuns(dir, []string{"r2", "r1"})
	want := "ended session pid " + strconv.Itoa(pid) + " of run r1 (its changes put back)"
	if err != nil || len(lines) != 1 || lines[0] != want {
		t.Fatalf("EndRuns(r1) = %q, %v; want [%q]", lines, err, want)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("r1's session after SIGTERM: %v; want its clean exit after its revert", err)
	}
	if err := srv.claim(); err != nil {
		t.Fatalf("claim once r1's session was ended = %v", err)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}

// TestEndRunsKillsAfterTheBound: a session that does not end on SIGTERM
// within the bound is killed and said so; its node is free.
func TestEndRunsKillsAfterTheBound(t *testing.T) {
	defer func(w time.Duration) { endSessionWait = w }(endSessionWait)
	endSessionWait = 200 * time.Millisecond
	t.Setenv(holderTermEnv, "ignore")
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1 claim")
	lines, err := EndRuns(dir, []string{"r1"})
	want := "session pid " + strconv.Itoa(cmd.Process.Pid) + " of run r1 did not end within 200ms of SIGTERM: killed it"
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Fatalf("EndRuns(r1) = %q, %v; want a line starting %q", lines, err, want)
	}
	cmd.Wait()
	srv := NewServer(Config{Run: "r3", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	if err := srv.claim(); err != nil {
		t.Fatalf("claim once r1's session was killed = %v", err)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}

// TestEndRunsNeverThisProcess: a journal of the calling process's own
// run is not its to end (a SIGTERM to itself would stop the test).
func TestEndRunsNeverThisProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	srv := NewServer(Config{Run: "r1", Node: "w1", FS: testNode(), Pods: fakePods{}, JournalDir: dir})
	if err := srv.claim(); err != nil {
		t.Fatal(err)
	}
	if lines, err := EndRuns(dir, []string{"r1"}); err != nil || len(lines) != 0 {
		t.Errorf("EndRuns of this process's run = %q, %v; want nothing done", lines, err)
	}
	if err := srv.end(); err != nil {
		t.Fatal(err)
	}
}

// TestEndRunsRefusesBadRunIDs: a name no run can have ends nothing, not
// even the valid names beside it.
func TestEndRunsRefusesBadRunIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w1")
	cmd, _ := startHolder(t, dir, "r1 claim")
	for _, bad := range []string{"", "../r1", "r1-x", "r1 r2", ".r1", strings.Repeat("r", 65)} {
		lines, err := EndRuns(dir, []string{"r1", bad})
		if !errors.Is(err, journal.ErrBadRunID) || len(lines) != 0 {
			t.Errorf("EndRuns(r1, %q) = %q, %v; want journal.ErrBadRunID and nothing done", bad, lines, err)
		}
	}
	if !journal.ProcessAlive(cmd.Process.Pid, mustStart(t, cmd.Process.Pid)) {
		t.Error("r1's session ended after a refused request")
	}
}

func mustStart(t *testing.T, pid int) uint64 {
	t.Helper()
	st, err := journal.ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
