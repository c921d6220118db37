package agent

import (
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cnibench/cnibench/internal/netns"
)

// End, called from another goroutine than Serve's as the agent's signal
// handler does (the agent pod's stop, `cleanup --kube`'s SIGTERM), ends
// the session as the end of its input does: perf is stopped, not left
// sampling every CPU of the node, and the knob is put back. A request
// after it is refused and changes or starts nothing, so the node stays
// as it was put back; the end of the input later ends nothing twice.
// Run with -race: End and Serve's requests share the session's state.
func TestEndFromAnotherGoroutine(t *testing.T) {
	fs := testNode()
	var mu sync.Mutex
	var recs []*fakeCPP
	cfg := Config{Run: "r1", FS: fs, JournalDir: filepath.Join(t.TempDir(), "node-1"),
		CPP: func([]netns.Iface, []string) (CPPRecorder, error) {
			mu.Lock()
			defer mu.Unlock()
			r := &fakeCPP{}
			recs = append(recs, r)
			return r, nil
		}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := NewServer(cfg)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(inR, outW); outW.Close() }()
	c := NewClient(inW, outR)
	c.SetRun("r1")
	const rps = "class/net/eth1/queues/rx-0/rps_cpus"
	if err := c.Write("", "sysfs", rps, "3"); err != nil {
		t.Fatal(err)
	}
	if err := c.CPPStart(nil); err != nil {
		t.Fatal(err)
	}
	// Requests race the end: each is answered before it or refused.
	racing := make(chan struct{})
	go func() {
		defer close(racing)
		for range 20 {
			_ = c.Write("", "sysfs", rps, "5")
		}
	}()
	if err := srv.End(); err != nil {
		t.Fatal(err)
	}
	<-racing
	mu.Lock()
	if len(recs) != 1 || recs[0].closed != 1 {
		t.Errorf("perf of the running window: %d recorders, closed %d times, want 1 closed once", len(recs), recs[0].closed)
	}
	mu.Unlock()
	if err := c.CPPStart(nil); err == nil || !strings.Contains(err.Error(), "session ended") {
		t.Errorf("a window started after the end: %v", err)
	}
	if err := c.Write("", "sysfs", rps, "7"); err == nil {
		t.Error("a write after the end succeeded")
	}
	if v, _ := fs.Read("", "sysfs", rps); v != "0" {
		t.Errorf("knob %q after the end, want 0 (put back, then left alone)", v)
	}
	c.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve after End: %v", err)
	}
	if len(recs) != 1 || recs[0].closed != 1 {
		t.Errorf("after the input's end: %d recorders, closed %d times", len(recs), recs[0].closed)
	}
}
