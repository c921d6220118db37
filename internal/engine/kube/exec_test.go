package kube

import (
	"context"
	"io"
	"testing"
	"time"
)

// printingExecer prints a line, then runs until its stdin ends (the shim
// stops the program then).
type printingExecer struct{}

func (printingExecer) Exec(_ context.Context, _, _, _ string, _ []string, stdin io.Reader, stdout, _ io.Writer) error {
	io.WriteString(stdout, "sockperf: Starting test...\n")
	_, err := io.Copy(io.Discard, stdin)
	return err
}

// TestStartExecWatched: a pod's program's lines reach the watcher while
// the exec still streams; Wait still has all of stdout.
func TestStartExecWatched(t *testing.T) {
	lines := make(chan string, 4)
	p := startExec(context.Background(), printingExecer{}, "ns", "pod", "main", []string{"sockperf"}, func(s string) { lines <- s })
	select {
	case l := <-lines:
		if l != "sockperf: Starting test..." {
			t.Errorf("line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line while the exec runs")
	}
	p.Stop()
	if out, _, err := p.Wait(); err != nil || string(out) != "sockperf: Starting test...\n" {
		t.Errorf("Wait = %q, %v", out, err)
	}
}
