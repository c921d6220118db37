package kube

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/agent"
)

// shimTool splits the argv of an `agent exec` shim: the program's argv
// and the mark the shim writes once it runs ("" when not asked for).
func shimTool(argv []string) ([]string, string) {
	i := slices.Index(argv, "--")
	if j := slices.Index(argv[:i], markFlag); j >= 0 {
		return argv[i+1:], agent.StartMark(argv[j+1])
	}
	return argv[i+1:], ""
}

// printingExecer starts its program, prints a line, then runs until its
// stdin ends (the shim stops the program then).
type printingExecer struct{}

func (printingExecer) Exec(_ context.Context, _, _, _ string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	_, mark := shimTool(argv)
	io.WriteString(stderr, mark)
	io.WriteString(stdout, "sockperf: Starting test...\n")
	_, err := io.Copy(io.Discard, stdin)
	return err
}

// TestStartExecWatched: a pod's program's lines reach the watcher while
// the exec still streams; Wait still has all of stdout.
func TestStartExecWatched(t *testing.T) {
	lines := make(chan string, 4)
	pod := &Pod{ns: "ns", name: "pod", exec: printingExecer{}}
	p, err := pod.StartWatched(context.Background(), []string{"sockperf"}, func(s string) { lines <- s })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		if l != "sockperf: Starting test..." {
			t.Errorf("line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line while the exec runs")
	}
	p.Stop()
	if out, stderr, err := p.Wait(); err != nil || string(out) != "sockperf: Starting test...\n" || len(stderr) != 0 {
		t.Errorf("Wait = %q, %q, %v", out, stderr, err)
	}
}
