package cleanup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// stopFS is a mapFS whose first read calls stop: the signal that comes
// while cleanup undoes a run.
type stopFS struct {
	*mapFS
	once sync.Once
	stop func()
}

func (s *stopFS) Read(ns, fs, p string) (string, error) {
	s.once.Do(s.stop)
	return s.mapFS.Read(ns, fs, p)
}

// TestStoppedCleanupFinishesTheRunInHand: a signal while cleanup undoes a
// run does not stop that run's undo half-way. Before, the wait for its
// SIGKILLed processes ended on the signal while they still ran: the
// journal was kept with nothing left to kill, and the command exited
// 130, "stopped with everything undone". The process here outlives its
// SIGKILL for a few checks, as one freeing much memory does.
func TestStoppedCleanupFinishesTheRunInHand(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	reaped := make(chan struct{})
	go func() { cmd.Wait(); close(reaped) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-reaped })
	pid := cmd.Process.Pid
	start, err := journal.ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	checks := 0
	real := processAlive
	processAlive = func(p int, st uint64) bool {
		if p == pid {
			mu.Lock()
			checks++
			n := checks
			mu.Unlock()
			if n <= 3 {
				return true
			}
		}
		return real(p, st)
	}
	t.Cleanup(func() { processAlive = real })

	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	writeJournal(t, dir, "r1",
		map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"}},
		map[string]any{"seq": 2, "object": journal.Object{Kind: journal.KindProcess, Name: "iperf3", PID: pid, Start: start}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs := &stopFS{mapFS: &mapFS{vals: map[string]string{"|" + knob: "32768"}}, stop: cancel}
	rep, err := Run(ctx, Options{JournalDir: dir, FS: fs})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want the stop said", err)
	}
	if ke := (*KeptError)(nil); errors.As(err, &ke) || count(rep, ActKeep) != 0 || count(rep, ActJournal) != 1 {
		t.Fatalf("the run in hand was not finished: %v\n%v", err, rep.Actions)
	}
	if real(pid, start) {
		t.Fatal("cleanup returned while the run's process was alive")
	}
	if fs.vals["|"+knob] != "0" {
		t.Fatalf("value %s, want 0", fs.vals["|"+knob])
	}
}

// TestStoppedCleanupKeepsTheRunsNotReached: a signal stops cleanup
// between runs, and each run it did not reach is kept and said to be,
// a *KeptError (exit 3), not left silently as if everything were undone.
func TestStoppedCleanupKeepsTheRunsNotReached(t *testing.T) {
	const newer, older = "/proc/sys/net/core/rps_sock_flow_entries", "/proc/sys/net/core/somaxconn"
	dir := t.TempDir()
	// Written in turn: old1 is opened first, so replayed last.
	writeJournal(t, dir, "old1", map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: older, Old: "4096", New: "128"}})
	writeJournal(t, dir, "new1", map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: newer, Old: "0", New: "32768"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs := &stopFS{mapFS: &mapFS{vals: map[string]string{"|" + newer: "32768", "|" + older: "128"}}, stop: cancel}
	rep, err := Run(ctx, Options{JournalDir: dir, FS: fs})
	if fs.vals["|"+newer] != "0" || fs.vals["|"+older] != "128" {
		t.Fatalf("values %v: want the newer run undone, the older untouched", fs.vals)
	}
	var ke *KeptError
	if !errors.As(err, &ke) || ke.Run != "old1" || ke.Path != filepath.Join(dir, "old1"+journal.Ext) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want old1's journal said to be kept\n%v", err, rep.Actions)
	}
	if _, err := os.Stat(filepath.Join(dir, "old1"+journal.Ext)); err != nil {
		t.Fatalf("the run not reached lost its journal: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new1"+journal.Ext)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the run undone kept its journal: %v", err)
	}
	if count(rep, ActKeep) != 1 {
		t.Fatalf("actions %v: want one keep-journal", rep.Actions)
	}
	// Its lock was released: the next cleanup undoes it.
	if _, err := Run(context.Background(), Options{JournalDir: dir, FS: fs.mapFS}); err != nil || fs.vals["|"+older] != "4096" {
		t.Fatalf("next cleanup = %v, values %v", err, fs.vals)
	}
}
