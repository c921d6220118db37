package agent

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	go func() { done <- Exec([]string{"sleep", "30"}, "", r, io.Discard, io.Discard, time.Second) }()
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
	code := Exec([]string{"sh", "-c", "echo hi; echo oops >&2; exit 3"}, "", r, &out, &errb, time.Second)
	if code != 3 || out.String() != "hi\n" || errb.String() != "oops\n" {
		t.Errorf("exit %d, out %q, err %q", code, out.String(), errb.String())
	}
	if code := Exec([]string{"/nonexistent/prog"}, "", strings.NewReader(""), &out, &errb, time.Second); code != 127 {
		t.Errorf("missing program: exit %d, want 127", code)
	}
}

// The shim writes the start mark on stderr once the program runs, beside
// the program's own stderr (a file, as the exec's stream is one the
// program shares), also for a program that prints nothing; a program
// that cannot start gets the shim's error and no mark.
func TestExecWritesStartMark(t *testing.T) {
	mark := StartMark("f00d")
	if !strings.HasSuffix(mark, "\n") || strings.Count(mark, "\n") != 1 || !strings.Contains(mark, "f00d") {
		t.Fatalf("mark %q: one line with the token", mark)
	}
	for _, c := range []struct {
		argv      []string
		code      int
		wantMark  bool
		wantOther string // stderr without the mark
	}{
		{[]string{"sh", "-c", "echo oops >&2"}, 0, true, "oops\n"},
		{[]string{"true"}, 0, true, ""},
		{[]string{"/nonexistent/prog"}, 127, false, "agent exec: fork/exec /nonexistent/prog: no such file or directory\n"},
	} {
		f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		r, w := io.Pipe()
		code := Exec(c.argv, mark, r, io.Discard, f, time.Second)
		w.Close()
		f.Close()
		b, _ := os.ReadFile(f.Name())
		got := string(b)
		if strings.Contains(got, mark) != c.wantMark || strings.Replace(got, mark, "", 1) != c.wantOther || code != c.code {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, mark %v, other %q", c.argv, code, got, c.code, c.wantMark, c.wantOther)
		}
	}
}
