package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
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

// closeFails is a datapath whose Close (its daemons' teardown) fails.
type closeFails struct{}

func (closeFails) Name() string                  { return "close-fails" }
func (closeFails) Features() []string            { return nil }
func (closeFails) SetupNode(datapath.Node) error { return nil }
func (closeFails) ConnectNodes([]datapath.Node) error {
	return nil
}
func (closeFails) AttachPod(datapath.Node, datapath.Pod) (datapath.Attachment, error) {
	return datapath.Attachment{}, errors.New("unused")
}
func (closeFails) Tunnel() string    { return "" }
func (closeFails) PodBridge() string { return "" }
func (closeFails) Devices() []string { return nil }
func (closeFails) MTU(m int) int     { return m }
func (closeFails) Close() error {
	return errors.New("processes 4711 (flanneld) still alive 5s after SIGKILL")
}

// closes is a datapath whose Close succeeds.
type closes struct{ closeFails }

func (closes) Close() error { return nil }

// An Up that fails returns its teardown's error too, marked
// engine.ErrLeftBehind (the runner stops rather than build another
// cluster beside what is left): before, it was dropped, and a process
// left alive went unsaid. One whose teardown left nothing is not marked:
// the runner may try it again.
func TestFailedUpSaysItsTeardown(t *testing.T) {
	failAdd(t)
	_, err := Up(context.Background(), Config{RunID: "abc123", Datapath: closeFails{}})
	if err == nil || !strings.Contains(err.Error(), "operation not permitted") || !strings.Contains(err.Error(), "flanneld) still alive") ||
		!errors.Is(err, engine.ErrLeftBehind) {
		t.Fatalf("Up = %v, want the failure and the teardown's error, marked left behind", err)
	}
	_, err = Up(context.Background(), Config{RunID: "abc123", Datapath: closes{}})
	if err == nil || errors.Is(err, engine.ErrLeftBehind) {
		t.Errorf("Up = %v; want its failure, not marked left behind (its teardown left nothing)", err)
	}
}
