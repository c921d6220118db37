package local

import (
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// failAdd makes netns.Add fail for the test, creating nothing.
func failAdd(t *testing.T) {
	t.Helper()
	orig := netnsAdd
	netnsAdd = func(name string) error { return errors.New("ip netns add " + name + ": operation not permitted") }
	t.Cleanup(func() { netnsAdd = orig })
}

// A namespace whose creation failed and left nothing closes its journal
// entry: before, the entry stayed pending (the name never reached
// c.created, so Close never marked it), and a run that left nothing
// kept its journal, exited 3 and refused the next run.
func TestFailedNetnsAddClosesItsEntry(t *testing.T) {
	failAdd(t)
	const run = "abc123"
	name := Prefix + run + "-node-server"
	if netns.Exists(name) || netns.HalfMade(name) {
		t.Skipf("%s exists on this machine", name)
	}
	j, err := journal.Open(t.TempDir(), run, Prefix)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{cfg: Config{RunID: run, Recorder: j}}
	if err := c.addNetns(name); err == nil {
		t.Fatal("addNetns: no error")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Errorf("journal close: %v (the entry of a namespace never made stayed pending)", err)
	}
}
