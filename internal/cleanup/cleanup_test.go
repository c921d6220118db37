package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// mapFS is a kernel in a map, keyed "netns|path".
type mapFS struct {
	mu     sync.Mutex
	vals   map[string]string
	writes []string
}

func (m *mapFS) Read(ns, _, p string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[ns+"|"+p]
	if !ok {
		return "", fmt.Errorf("%s: %w", ns, tune.ErrGone)
	}
	return v, nil
}

func (m *mapFS) Write(ns, _, p, v string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vals[ns+"|"+p]; !ok {
		return fmt.Errorf("%s: %w", ns, tune.ErrGone)
	}
	m.vals[ns+"|"+p] = v
	m.writes = append(m.writes, ns+"|"+p+"="+v)
	return nil
}

func (m *mapFS) List(string, string, string) ([]string, error) { return nil, errors.New("unused") }

func TestRunOf(t *testing.T) {
	for _, tt := range []struct{ name, run string }{
		{"cnb-r1-node", "r1"}, {"cnb-r1", "r1"}, {"cnb--x", ""}, {"cnb-", ""}, {"xcnb-r1-node", ""},
	} {
		got, ok := RunOf(tt.name, "cnb-")
		if got != tt.run || ok != (tt.run != "") {
			t.Errorf("RunOf(%q) = %q, %v", tt.name, got, ok)
		}
	}
}

// TestRunAfterCrashFakeFS kills a real process that journaled changes and
// cleans up after it against a fake kernel (no root needed).
func TestRunAfterCrashFakeFS(t *testing.T) {
	dir := t.TempDir()
	run := tunetest.NewID()
	node := "cnb-" + run + "-node"
	h := startHelper(t, "journal", dir, run)
	fs := &mapFS{vals: map[string]string{
		// As the run left them: the last value it wrote.
		"|/proc/sys/net/core/rps_sock_flow_entries":       "32768",
		node + "|class/net/eth1/queues/rx-0/rps_cpus":     "1", // printed unpadded
		node + "|class/net/eth1/queues/rx-0/rps_flow_cnt": "32768",
	}}
	opts := Options{JournalDir: dir, Run: run, FS: fs}

	// While the run lives nothing is touched.
	rep, err := Run(context.Background(), opts)
	if err != nil || len(fs.writes) != 0 || len(rep.Actions) != 0 {
		t.Fatalf("cleanup of a live run: %v, writes %v, actions %v", err, fs.writes, rep.Actions)
	}
	h.crash(t)

	opts.DryRun = true
	rep, err = Run(context.Background(), opts)
	if err != nil || len(fs.writes) != 0 || !rep.DryRun {
		t.Fatalf("dry run: %v, writes %v", err, fs.writes)
	}
	if n := count(rep, ActRevert); n != 4 {
		t.Fatalf("dry run reports %d reverts, want 4: %v", n, rep.Actions)
	}
	if _, err := os.Stat(filepath.Join(dir, run+journal.Ext)); err != nil {
		t.Fatalf("dry run removed the journal: %v", err)
	}

	opts.DryRun = false
	rep, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		node + "|class/net/eth1/queues/rx-0/rps_cpus=00000003",
		node + "|class/net/eth1/queues/rx-0/rps_flow_cnt=0",
		node + "|class/net/eth1/queues/rx-0/rps_cpus=0",
		"|/proc/sys/net/core/rps_sock_flow_entries=0",
	}
	if strings.Join(fs.writes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(fs.writes, "\n"), strings.Join(want, "\n"))
	}
	if count(rep, ActJournal) != 1 {
		t.Fatalf("journal not removed: %v", rep.Actions)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("dir holds %v", ents)
	}
	// Nothing left: a second cleanup does nothing.
	fs.writes = nil
	if rep, err := Run(context.Background(), opts); err != nil || len(rep.Actions) != 0 || len(fs.writes) != 0 {
		t.Fatalf("second cleanup: %v %v %v", err, rep.Actions, fs.writes)
	}
}

// TestRunKeepsJournalOnFailure: a value that cannot be read stays
// journaled for the next cleanup.
func TestRunKeepsJournalOnFailure(t *testing.T) {
	dir := t.TempDir()
	run := tunetest.NewID()
	h := startHelper(t, "journal", dir, run)
	h.crash(t)
	fs := &failFS{}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fs})
	if err == nil || count(rep, ActKeep) != 1 {
		t.Fatalf("Run = %v, actions %v", err, rep.Actions)
	}
	if _, err := os.Stat(filepath.Join(dir, run+journal.Ext)); err != nil {
		t.Fatalf("journal removed after failure: %v", err)
	}
	// The lock was released: the next cleanup can take it.
	st, err := journal.Stale(dir)
	if err != nil || len(st) != 1 {
		t.Fatalf("Stale = %v, %v", st, err)
	}
	st[0].Release()
}

type failFS struct{}

func (failFS) Read(string, string, string) (string, error)   { return "", errors.New("EIO") }
func (failFS) Write(string, string, string, string) error    { return errors.New("EIO") }
func (failFS) List(string, string, string) ([]string, error) { return nil, errors.New("EIO") }

func count(rep Report, kind string) int {
	n := 0
	for _, a := range rep.Actions {
		if a.Kind == kind {
			n++
		}
	}
	return n
}
