package proc

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
)

func start(t *testing.T, ctx context.Context, cpus cpuset.Set, script string) engine.Process {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p, err := Start(ctx, "", cpus, []string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func TestWaitOutput(t *testing.T) {
	p := start(t, context.Background(), nil, "echo out; echo err >&2")
	out, errOut, err := p.Wait()
	if err != nil || string(out) != "out\n" || string(errOut) != "err\n" {
		t.Errorf("Wait = %q, %q, %v", out, errOut, err)
	}
	// Wait again: same answer.
	if out2, _, _ := p.Wait(); string(out2) != "out\n" {
		t.Errorf("second Wait = %q", out2)
	}
	p.Stop() // after exit: a no-op
}

func TestExitError(t *testing.T) {
	p := start(t, context.Background(), nil, "echo why >&2; exit 3")
	_, _, err := p.Wait()
	var ee *engine.ExitError
	if !errors.As(err, &ee) || string(ee.Stderr) != "why\n" || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Wait error = %v", err)
	}
}

func TestMissingProgram(t *testing.T) {
	if _, err := Start(context.Background(), "", nil, []string{"cnibench-no-such-program"}); err == nil {
		t.Error("Start of a missing program succeeded")
	}
	if _, err := Start(context.Background(), "", nil, nil); err == nil {
		t.Error("Start of an empty command succeeded")
	}
}

func TestStopEscalates(t *testing.T) {
	// The program ignores SIGTERM: Stop must still end it (SIGKILL). It
	// says so once the trap is in place; a sleep for it was too short
	// under load (sh died of the SIGTERM: "terminated").
	ready := make(chan string, 1)
	p, err := StartWatched(context.Background(), "", nil, []string{"sh", "-c", "trap '' TERM; echo ready; exec sleep 60"},
		func(s string) { ready <- s })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not say it ignores SIGTERM within 10 s")
	}
	p.Stop()
	if _, _, err := p.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait after Stop = %v, want killed", err)
	}
}

func TestContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := start(t, ctx, nil, "exec sleep 60")
	cancel()
	if _, _, err := p.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Wait after cancel = %v, want terminated", err)
	}
}

func TestPinned(t *testing.T) {
	p := start(t, context.Background(), cpuset.Set{0}, "grep Cpus_allowed_list /proc/self/status")
	out, _, err := p.Wait()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "\t0") {
		t.Errorf("affinity = %q, %v", out, err)
	}
}

func TestCapped(t *testing.T) {
	c := &capped{max: 5}
	for _, s := range []string{"abc", "defg", "hi"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(c.bytes()) != "abcde" || c.dropped != 4 {
		t.Errorf("kept %q, dropped %d", c.bytes(), c.dropped)
	}
}

// TestStartWatched: a line reaches the watcher while the program still
// runs, and Wait still returns all of stdout.
func TestStartWatched(t *testing.T) {
	lines := make(chan string, 4)
	p, err := StartWatched(context.Background(), "", nil, []string{"sh", "-c", "echo first; exec sleep 30"}, func(s string) { lines <- s })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	select {
	case l := <-lines:
		if l != "first" {
			t.Errorf("line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line within 10 s of a program that printed one at once")
	}
	p.Stop()
	if out, _, _ := p.Wait(); string(out) != "first\n" {
		t.Errorf("Wait's stdout %q", out)
	}
}

// StartInput hands the program its input on stdin.
func TestStartInput(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat")
	}
	p, err := StartInput(context.Background(), "", nil, []string{"cat"}, []byte("*filter\nCOMMIT\n"))
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := p.Wait(); err != nil || string(out) != "*filter\nCOMMIT\n" {
		t.Errorf("Wait = %q, %v", out, err)
	}
}
