package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/netns"
)

// The agent's subcommands share its persistent flags, and serve answers
// a session on stdin/stdout.
func TestAgentCommand(t *testing.T) {
	var names []string
	for _, c := range newAgentCmd().Commands() {
		names = append(names, c.Name())
	}
	want := []string{"daemon", "exec", "nginx", "pause", "replay", "serve"}
	if !slices.Equal(names, want) {
		t.Fatalf("agent subcommands %v, want %v", names, want)
	}

	dir := filepath.Join(t.TempDir(), "journals")
	cmd := newAgentCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetIn(strings.NewReader(`{"op":"ping","run":"t1"}` + "\n" + `{"op":"info","run":"t1"}` + "\n"))
	cmd.SetArgs([]string{"serve", "--run", "t1", "--journal-dir", dir})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("serve answered %d lines, want 2:\n%s", len(lines), out.String())
	}
	var info agent.Response
	if err := json.Unmarshal([]byte(lines[1]), &info); err != nil || info.Error != "" || info.Info == nil || info.Info.Kernel == "" {
		t.Errorf("info answer %s (%v)", lines[1], err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a session that changed nothing left its journal directory %s: %v", dir, err)
	}

	cmd = newAgentCmd()
	out.Reset()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"replay", "--journal-dir", dir})
	if err := cmd.Execute(); err != nil || out.String() != "nothing left by dead sessions\n" {
		t.Errorf("replay of an empty journal directory: %q, %v", out.String(), err)
	}
}

type fakeRecorder struct {
	mu                       sync.Mutex
	started, stopped, closed int
}

func (r *fakeRecorder) Start(context.Context) error {
	r.mu.Lock()
	r.started++
	r.mu.Unlock()
	return nil
}
func (r *fakeRecorder) Stop(context.Context) error {
	r.mu.Lock()
	r.stopped++
	r.mu.Unlock()
	return nil
}
func (r *fakeRecorder) Report(context.Context) (cpp.Result, error) {
	return cpp.Result{}, nil
}
func (r *fakeRecorder) Close() { r.mu.Lock(); r.closed++; r.mu.Unlock() }

// A session stopped by a signal mid-window (cleanup --kube's SIGTERM to
// a dead run's session, the agent pod's stop) ends as a whole: its perf
// record -a is ended too, not left sampling every CPU of the node while
// cleanup says the session's changes were put back.
func TestServeSessionSignalEndsPerf(t *testing.T) {
	rec := &fakeRecorder{}
	srv := agent.NewServer(agent.Config{Run: "t1", JournalDir: filepath.Join(t.TempDir(), "journals"),
		CPP: func([]netns.Iface, []string) (agent.CPPRecorder, error) { return rec, nil }})
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	sig := make(chan os.Signal, 1)
	ended := make(chan error, 1)
	go func() { ended <- serveSession(srv, inR, outW, sig) }()
	c := agent.NewClient(inW, outR)
	c.SetRun("t1")
	if err := c.CPPStart(nil); err != nil {
		t.Fatal(err)
	}
	sig <- syscall.SIGTERM
	err := <-ended
	if err == nil || !strings.Contains(err.Error(), "stopped by terminated") {
		t.Errorf("serveSession on SIGTERM: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.started != 1 || rec.closed != 1 {
		t.Errorf("perf started %d, closed %d times: want it ended with the session", rec.started, rec.closed)
	}
}
