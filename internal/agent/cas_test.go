package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestRevertComparesBeforeSwap: a session that wrote a knob twice
// reverts it to the value before its first write; a knob someone else
// changed after the session's last write is left alone and reported.
func TestRevertComparesBeforeSwap(t *testing.T) {
	fs := testNode()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	srv := NewServer(Config{Run: "cas", FS: fs, Pods: fakePods{}, JournalDir: t.TempDir()})
	for _, v := range []string{"3", "f"} {
		if err := srv.write("", "sysfs", p, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.write("", "proc", "/proc/sys/net/core/rps_sock_flow_entries", "32768"); err != nil {
		t.Fatal(err)
	}
	fs.vals[key("", "proc", "/proc/sys/net/core/rps_sock_flow_entries")] = "4096" // an operator's change
	n, err := srv.Revert()
	if err == nil || !strings.Contains(err.Error(), "changed by someone else") || n != 1 {
		t.Fatalf("Revert = %d, %v; want 1 value put back and the foreign change reported", n, err)
	}
	if got := fs.vals[key("", "sysfs", p)]; got != "0" {
		t.Errorf("%s = %q after revert, want 0", p, got)
	}
	if got := fs.vals[key("", "proc", "/proc/sys/net/core/rps_sock_flow_entries")]; got != "4096" {
		t.Errorf("foreign value overwritten: %q", got)
	}
	srv.closeJournal()
}

// TestReplayAfterRewrite: a session killed after writing a knob twice
// leaves a journal whose replay (compare before swap) still restores it.
func TestReplayAfterRewrite(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	srv := NewServer(Config{Run: "rw", FS: fs, Pods: fakePods{}, JournalDir: dir})
	for _, v := range []string{"3", "f"} {
		if err := srv.write("", "sysfs", p, v); err != nil {
			t.Fatal(err)
		}
	}
	// Play the crash: the journal's owner is this (live) process, so
	// rewrite the header's pid the way a dead session would leave it.
	path := srv.j.Path()
	srv.j.Close() // keeps the file: entries are pending
	srv.j = nil
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf(`"pid":%d,`, os.Getpid())
	if !strings.Contains(string(b), own) {
		t.Fatalf("header without %s: %s", own, b)
	}
	os.WriteFile(path, []byte(strings.Replace(string(b), own, `"pid":1073741824,`, 1)), 0o600)
	sum, err := Replay(dir, &nodeFS{base: fs, pods: fakePods{}})
	if err != nil || sum.Restored != 1 {
		t.Fatalf("replay = %+v, %v", sum, err)
	}
	if got := fs.vals[key("", "sysfs", p)]; got != "0" {
		t.Errorf("%s = %q after replay, want 0", p, got)
	}
}

// refuseFS is a memFS whose writes of one value fail, as a kernel
// refuses a mask naming CPUs the node lacks.
type refuseFS struct {
	*memFS
	refuse string
}

func (f refuseFS) Write(ns, fs, p, v string) error {
	if v == f.refuse {
		return fmt.Errorf("write %s: invalid argument", p)
	}
	return f.memFS.Write(ns, fs, p, v)
}

// TestFailedRewriteKeepsEntry: a second write of a knob that the kernel
// refuses leaves the session's record of the first one in place, so the
// session's end still reverts the knob and retires its journal.
func TestFailedRewriteKeepsEntry(t *testing.T) {
	mem := testNode()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	dir := t.TempDir()
	srv := NewServer(Config{Run: "fail", FS: refuseFS{mem, "ff"}, Pods: fakePods{}, JournalDir: dir})
	if err := srv.write("", "sysfs", p, "3"); err != nil {
		t.Fatal(err)
	}
	if err := srv.write("", "sysfs", p, "ff"); err == nil {
		t.Fatal("refused write succeeded")
	}
	// A first write the kernel refuses leaves nothing to revert.
	if err := srv.write("", "sysfs", "class/net/veth1234/queues/rx-0/rps_cpus", "ff"); err == nil {
		t.Fatal("refused first write succeeded")
	}
	if n, err := srv.Revert(); err != nil || n != 1 {
		t.Fatalf("Revert = %d, %v; want 1, nil", n, err)
	}
	if got := mem.vals[key("", "sysfs", p)]; got != "0" {
		t.Errorf("%s = %q after revert, want 0", p, got)
	}
	if err := srv.closeJournal(); err != nil {
		t.Errorf("close journal: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext)); len(files) != 0 {
		t.Errorf("journal left: %v", files)
	}
}

// TestReplaySaysWhatItDid: a replay counts as reverted only the values
// it wrote back, and says what it found for the others.
func TestReplaySaysWhatItDid(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	eth1 := "class/net/eth1/queues/rx-0/rps_cpus"
	veth := "class/net/veth1234/queues/rx-0/rps_cpus"
	fs.vals[key("", "sysfs", eth1)] = "3"                       // the dead session's value: restored
	fs.vals[key("", "proc", tune.SockFlowEntriesPath)] = "4096" // an operator's since: left alone
	writeDeadJournal(t, dir,
		journal.Set{FS: "sysfs", Path: eth1, Old: "0", New: "3"},
		journal.Set{FS: "sysfs", Path: veth, Old: "0", New: "3"}, // already back
		journal.Set{FS: "proc", Path: tune.SockFlowEntriesPath, Old: "0", New: "32768"},
		journal.Set{Netns: PodNetns("ns", "srv-0"), FS: "sysfs", Path: "class/net/eth0/queues/rx-0/rps_cpus", Old: "0", New: "3"}, // pod gone
	)
	srv := NewServer(Config{FS: fs, Pods: fakePods{}, JournalDir: dir})
	r := srv.Handle(Request{Op: OpReplay, Run: defaultRun})
	if r.Error != "" || r.Reverted != 1 {
		t.Fatalf("replay = %d, %q; want 1 value written back", r.Reverted, r.Error)
	}
	for _, want := range []string{"restored 1 value", "1 already back", "1 gone with its pod or device",
		"1 changed by someone else since, left alone: host proc:" + tune.SockFlowEntriesPath} {
		if !strings.Contains(r.Value, want) {
			t.Errorf("summary %q lacks %q", r.Value, want)
		}
	}
	if got := fs.vals[key("", "sysfs", eth1)]; got != "0" {
		t.Errorf("%s = %q, want 0", eth1, got)
	}
}

// TestReplayOfAnUnmadeRewrite: a session killed between journaling a
// knob's second value and writing it leaves the first value (the older
// entry's): the replay restores the knob and reports no change by
// someone else, where before the newer entry named the session's own
// value as one.
func TestReplayOfAnUnmadeRewrite(t *testing.T) {
	fs := testNode()
	dir := t.TempDir()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	fs.vals[key("", "sysfs", p)] = "3"
	writeDeadJournal(t, dir,
		journal.Set{FS: "sysfs", Path: p, Old: "0", New: "3"},
		journal.Set{FS: "sysfs", Path: p, Old: "0", New: "f"}, // journaled, not written
	)
	sum, err := Replay(dir, &nodeFS{base: fs, pods: fakePods{}})
	if err != nil || sum.Restored != 1 || len(sum.Changed) != 0 {
		t.Fatalf("replay = %+v, %v; want 1 value restored, none changed by someone else", sum, err)
	}
	if got := fs.vals[key("", "sysfs", p)]; got != "0" {
		t.Errorf("%s = %q after replay, want 0", p, got)
	}
}
