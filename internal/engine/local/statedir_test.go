package local

import (
	"errors"
	"os"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// The state directory as the local engine configures it (the run's own,
// journal.StateDir), created and removed as a run does: nothing is left
// in the journal directory, and the journal closes clean. (It was
// <run>/cni once, and the <run> parent stayed after every run.)
func TestStateDirLeavesNothing(t *testing.T) {
	jdir := t.TempDir()
	j, err := journal.Open(jdir, "abc123", Prefix)
	if err != nil {
		t.Fatal(err)
	}
	run := journal.StateDir(jdir, "abc123")
	c := &Cluster{cfg: Config{RunID: "abc123", StateDir: run, CNIPath: []string{"/nonexistent"}, Recorder: j}}
	c.server = &Node{cluster: c, name: ServerNode}
	c.client = &Node{cluster: c, name: ClientNode, index: 1}
	if err := c.setupCNI(); err != nil {
		t.Fatal(err)
	}
	if err := c.removeStateDir(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("journal close: %v", err)
	}
	if _, err := os.Stat(run); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after a clean teardown (%v)", run, err)
	}
}

// A state directory that exists already is another run's: setup fails,
// and the journal entry is closed so cleanup never removes it for us.
func TestStateDirTakenIsNotJournaled(t *testing.T) {
	jdir := t.TempDir()
	run := journal.StateDir(jdir, "abc123")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(jdir, "abc123", Prefix)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{cfg: Config{RunID: "abc123", StateDir: run, CNIPath: []string{"/nonexistent"}, Recorder: j}}
	c.server = &Node{cluster: c, name: ServerNode}
	c.client = &Node{cluster: c, name: ClientNode, index: 1}
	if err := c.setupCNI(); err == nil {
		t.Fatal("setup over an existing state directory: no error")
	}
	if err := j.Close(); err != nil {
		t.Errorf("journal close: %v (the entry of a directory we did not make stayed pending)", err)
	}
	if _, err := os.Stat(run); err != nil {
		t.Errorf("the other run's directory: %v", err)
	}
}
