package tune

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestRevertOfAHalfMadeWriteFailing: a write that failed half-way leaves
// two entries, the value planned (X->N) and the one the kernel kept
// (X->P). When putting X back over P fails, the older entry finds P: the
// run's own value, not someone else's. It puts X back itself, and the
// error says only what failed; a second Revert closes the newer entry.
func TestRevertOfAHalfMadeWriteFailing(t *testing.T) {
	f, _ := partialFixture()
	j := openJournal(t)
	a := &Applied{j: j, fs: f}
	if err := a.apply(Change{Netns: nodeNS, FS: FSProc, Path: rmem, Value: "8192 262144 0"}); err == nil {
		t.Fatal("apply succeeded; the test needs a half-made write")
	}
	if len(a.done) != 2 {
		t.Fatalf("journaled %d writes, want the planned one and the kept one", len(a.done))
	}
	f.failAt[rmem] = syscall.EIO // the newer entry's write of X
	err := a.Revert()
	if err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Revert = %v, want the failed write", err)
	}
	if strings.Contains(err.Error(), "someone else") {
		t.Errorf("Revert = %v: the run's own value called someone else's", err)
	}
	if got := f.get(nodeNS, FSProc, rmem); !Equal(rmem, got, "4096 131072 6291456") {
		t.Errorf("tcp_rmem = %q, want the old 4096 131072 6291456 back", got)
	}
	if err := a.Revert(); err != nil || j.Pending() != 0 {
		t.Errorf("second Revert = %v, %d pending; want nil, 0", err, j.Pending())
	}
}

// TestReplayOfAnUnmadeRewrite: a run killed after journaling a knob's
// second value (X->V2) but before writing it leaves V1, the first
// entry's (X->V1). The replay, newest first, finds V1 for the newer
// entry: the run's own, so X is put back, not left as someone else's;
// the older entry then finds X.
func TestReplayOfAnUnmadeRewrite(t *testing.T) {
	const p = "class/net/eth1/queues/rx-0/rps_cpus"
	f, _ := fixture()
	j := openJournal(t)
	for _, v := range []string{"3", "f"} {
		if _, err := j.RecordSet(journal.Set{Netns: nodeNS, FS: FSSysfs, Path: p, Old: "0", New: v}); err != nil {
			t.Fatal(err)
		}
	}
	f.vals[key(nodeNS, FSSysfs, p)] = "3"
	r, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		outs, err := RevertReplayOutcomes(r, f, dry)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: Planned, false: Restored}[dry] + "," + Already
		if got := actions(outs); got != want {
			t.Errorf("dry run %v: outcomes %v, want %s", dry, outs, want)
		}
	}
	if got := f.get(nodeNS, FSSysfs, p); got != "0" {
		t.Errorf("%s = %q after the replay, want 0", p, got)
	}
}

// A value no entry of the run wrote is someone else's still, even where
// another entry's old value matches: left alone.
func TestReplayLeavesForeignValue(t *testing.T) {
	const p = "class/net/eth1/queues/rx-0/rps_cpus"
	f, _ := fixture()
	j := openJournal(t)
	for _, s := range []journal.Set{{Old: "0", New: "3"}, {Old: "1", New: "7"}} {
		s.Netns, s.FS, s.Path = nodeNS, FSSysfs, p
		if _, err := j.RecordSet(s); err != nil {
			t.Fatal(err)
		}
	}
	f.vals[key(nodeNS, FSSysfs, p)] = "3" // the first entry's, but over another old value
	r, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	outs, err := RevertReplayOutcomes(r, f, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(outs); got != Changed+","+Restored {
		t.Errorf("outcomes %v, want the newer entry's value left alone, the older's restored", outs)
	}
}
