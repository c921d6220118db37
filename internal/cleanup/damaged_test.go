package cleanup

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// TestDamagedJournalReplayedAndSetAside: a dead run's journal with an
// unreadable line before the last. Before, cleanup only reported the read
// error and kept it, while every run was refused "undo them first with:
// cnibench cleanup", forever. Now cleanup undoes what it can read, shows
// the unreadable line, sets the file aside as .corrupt (so runs start
// again) and fails saying what to check by hand.
func TestDamagedJournalReplayedAndSetAside(t *testing.T) {
	const a, b = "/proc/sys/net/core/a", "/proc/sys/net/core/b"
	dir := t.TempDir()
	run := tunetest.NewID()
	p := writeJournal(t, dir, run,
		map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: a, Old: "0", New: "1"}},
		map[string]any{"seq": 2, "set": "\x00garbled"},
		map[string]any{"seq": 3, "set": journal.Set{FS: journal.FSProc, Path: b, Old: "5", New: "6"}},
	)
	// Garble line 3 for real: not JSON at all.
	raw, _ := os.ReadFile(p)
	lines := strings.Split(string(raw), "\n")
	lines[2] = `{"seq":2,"set":{"fs":"pr` + "\x00\x00"
	os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600)

	fsys := &mapFS{vals: map[string]string{"|" + a: "1", "|" + b: "6"}}
	opts := Options{JournalDir: dir, Run: run, FS: fsys, DryRun: true}
	rep, err := Run(context.Background(), opts)
	if err != nil || len(fsys.writes) != 0 || count(rep, ActDamaged) != 1 || count(rep, ActSetAside) != 1 {
		t.Fatalf("dry run: %v, writes %v, actions %v", err, fsys.writes, rep.Actions)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("dry run moved the journal: %v", err)
	}

	opts.DryRun = false
	rep, err = Run(context.Background(), opts)
	if err == nil {
		t.Fatalf("cleanup of a damaged journal succeeded silently: %v", rep.Actions)
	}
	for _, want := range []string{p, "line 3", p + journal.CorruptExt, "check by hand", `\x00`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	if fsys.vals["|"+a] != "0" || fsys.vals["|"+b] != "5" {
		t.Errorf("readable changes not undone: %v", fsys.vals)
	}
	if _, err := os.Stat(p + journal.CorruptExt); err != nil {
		t.Errorf("damaged journal not kept aside: %v", err)
	}
	l, err := journal.BeginRun(dir, "")
	if err != nil {
		t.Fatalf("a run after cleanup set the damaged journal aside: %v", err)
	}
	l.Release()
	if rep, err := Run(context.Background(), opts); err != nil || len(rep.Actions) != 0 {
		t.Fatalf("second cleanup: %v %v", err, rep.Actions)
	}
}

// errFS fails the reads of some paths with a given error, else acts as
// mapFS.
type errFS struct {
	*mapFS
	fail map[string]error
}

func (e errFS) Read(ns, kind, p string) (string, error) {
	if err, ok := e.fail[p]; ok {
		return "", err
	}
	return e.mapFS.Read(ns, kind, p)
}

// TestVanishedValueFileIsGone: a journaled value whose file is gone while
// its namespace lives (a sysctl whose module was unloaded; an rx queue's
// rps_cpus after the device lost queues) has nothing to restore. Before,
// the read error failed every cleanup, kept the journal and so refused
// every later run; now it is reported as gone and the journal removed.
func TestVanishedValueFileIsGone(t *testing.T) {
	const sysctl = "/proc/sys/net/netfilter/nf_conntrack_max"
	const queue = "class/net/eth9/queues/rx-3/rps_cpus"
	dir := t.TempDir()
	run := tunetest.NewID()
	writeJournal(t, dir, run,
		map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: sysctl, Old: "65536", New: "262144"}},
		map[string]any{"seq": 2, "set": journal.Set{FS: journal.FSSysfs, Path: queue, Old: "0", New: "3"}},
	)
	fsys := errFS{&mapFS{vals: map[string]string{}}, map[string]error{
		sysctl: fmt.Errorf("%s in host: %w: %w", sysctl, tune.ErrNoSysctl, fs.ErrNotExist),
		queue:  fmt.Errorf("sysfs of host: %s: %w", queue, &fs.PathError{Op: "open", Path: "/sys/" + queue, Err: fs.ErrNotExist}),
	}}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fsys})
	if err != nil {
		t.Fatalf("cleanup: %v\n%v", err, rep.Actions)
	}
	n := 0
	for _, a := range rep.Actions {
		if a.Kind == ActRevert && strings.HasPrefix(a.Detail, "gone: its file no longer exists") {
			n++
		}
	}
	if n != 2 || count(rep, ActJournal) != 1 {
		t.Fatalf("want both values reported gone and the journal removed: %v", rep.Actions)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("dir holds %v", ents)
	}
}
