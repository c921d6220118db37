package agent

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestExecStopsProgramWhenStdinEnds(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep program")
	}
	r, w := io.Pipe()
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- Exec([]string{"sleep", "30"}, r, io.Discard, io.Discard, time.Second) }()
	time.Sleep(100 * time.Millisecond)
	w.Close()
	select {
	case code := <-done:
		if code != 128+15 {
			t.Errorf("exit code %d, want %d (SIGTERM)", code, 128+15)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("program still running 10s after stdin ended")
	}
	if time.Since(start) > 10*time.Second {
		t.Error("slow stop")
	}
}

func TestExecPassesOutputAndExitCode(t *testing.T) {
	var out, errb bytes.Buffer
	r, w := io.Pipe() // stdin stays open until the program is done
	defer w.Close()
	code := Exec([]string{"sh", "-c", "echo hi; echo oops >&2; exit 3"}, r, &out, &errb, time.Second)
	if code != 3 || out.String() != "hi\n" || errb.String() != "oops\n" {
		t.Errorf("exit %d, out %q, err %q", code, out.String(), errb.String())
	}
	if code := Exec([]string{"/nonexistent/prog"}, strings.NewReader(""), &out, &errb, time.Second); code != 127 {
		t.Errorf("missing program: exit %d, want 127", code)
	}
}
