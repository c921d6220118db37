package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// writeJournal writes the journal a crashed run (a dead pid) leaves: its
// header, then each record as one line.
func writeJournal(t *testing.T, dir, run string, records ...map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: run, PID: deadPID(t), PIDStart: 1, Started: time.Now().UTC(), Prefix: "cnb-"}})
	b := append(h, '\n')
	for _, r := range records {
		l, _ := json.Marshal(r)
		b = append(append(b, l...), '\n')
	}
	p := filepath.Join(dir, run+journal.Ext)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKernelHalfMadeNamespace: a run killed between creating
// /var/run/netns/cnb-RUN-node-server and binding its namespace to it
// leaves a plain file. Cleanup removes it (before, its umount failed with
// EINVAL on every cleanup, the journal was kept, and every later run was
// refused), and the values journaled inside it count as gone with it
// (before, entering it failed and was reported as a failed revert).
func TestKernelHalfMadeNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: writing under /var/run/netns needs root")
	}
	run := tunetest.NewID()
	node := "cnb-" + run + "-node-server"
	if err := os.MkdirAll(netns.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(netns.Path(node), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(netns.Path(node)) })
	dir := t.TempDir()
	writeJournal(t, dir, run,
		map[string]any{"seq": 1, "object": journal.Object{Kind: journal.KindNetns, Name: node}},
		map[string]any{"seq": 2, "set": journal.Set{Netns: node, FS: journal.FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_cpus", Old: "0", New: "1"}},
		map[string]any{"seq": 3, "set": journal.Set{Netns: node, FS: journal.FSProc, Path: "/proc/sys/net/core/somaxconn", Old: "4096", New: "1024"}},
	)
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run})
	if err != nil {
		t.Fatalf("cleanup: %v\n%v", err, rep.Actions)
	}
	if _, err := os.Lstat(netns.Path(node)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("half-made namespace file left (%v); actions %v", err, rep.Actions)
	}
	var deleted, gone int
	for _, a := range rep.Actions {
		switch {
		case a.Kind == ActNetns && a.Object == node && strings.Contains(a.Detail, "half-made"):
			deleted++
		case a.Kind == ActRevert && strings.HasPrefix(a.Detail, "gone"):
			gone++
		}
	}
	if deleted != 1 || gone != 2 || count(rep, ActJournal) != 1 {
		t.Errorf("report: want the half-made namespace removed, both values gone with it, the journal removed; got %v", rep.Actions)
	}
}
