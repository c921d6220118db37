package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
)

// slowShim is an exec whose program starts when begin is closed (the
// exec's trip to the node): its shim writes the mark (in pieces, after a
// part line of the program's), then the program writes the rest of its
// line and runs until stdin ends.
type slowShim struct {
	begin chan struct{}
	mu    sync.Mutex
	argvs [][]string
}

func (s *slowShim) Exec(ctx context.Context, _, _, _ string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	s.mu.Lock()
	s.argvs = append(s.argvs, argv)
	s.mu.Unlock()
	select {
	case <-s.begin:
	case <-ctx.Done():
		return ctx.Err()
	}
	_, mark := shimTool(argv)
	stderr.Write([]byte("warn"))
	for i := 0; i < len(mark); i += 7 {
		stderr.Write([]byte(mark[i:min(i+7, len(mark))]))
	}
	stderr.Write([]byte("ing: slow\n"))
	stdout.Write([]byte("out\n"))
	_, err := io.Copy(io.Discard, stdin)
	return err
}

// Start returns when the program runs in the pod (the shim's mark came),
// not when the exec was requested: the drivers open the metric window
// then. Wait's stderr is the program's, without the mark.
func TestStartWaitsForStartMark(t *testing.T) {
	ex := &slowShim{begin: make(chan struct{})}
	pod := &Pod{ns: "cnibench", name: "cnb-r1-cli-0", exec: ex}
	type res struct {
		p   engine.Process
		err error
	}
	got := make(chan res, 1)
	go func() {
		p, err := pod.Start(context.Background(), []string{"iperf3", "-c", "x"})
		got <- res{p, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("Start returned (%v) before the program ran in the pod", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	close(ex.begin)
	var r res
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after the start mark")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if tool, mark := shimTool(ex.argvs[0]); mark == "" || !slices.Equal(tool, []string{"iperf3", "-c", "x"}) {
		t.Errorf("exec argv %v: the program with a start mark asked for", ex.argvs[0])
	}
	r.p.Stop()
	out, stderr, err := r.p.Wait()
	if err != nil || string(out) != "out\n" || string(stderr) != "warning: slow\n" {
		t.Errorf("Wait = %q, %q, %v; want the program's output, the mark taken out", out, stderr, err)
	}
}

// The mark is taken out wherever the stream cuts it, once; what only
// looked like its beginning, or another exec's mark, is passed on.
func TestMarkWriterEveryCut(t *testing.T) {
	mark := agent.StartMark("0123abcd")
	other := agent.StartMark("ffff0000")
	in := "a cnibench agent exec: st" + other + "b" + mark + "c\n" + mark + "cnibench agent"
	want := "a cnibench agent exec: st" + other + "bc\n" + mark + "cnibench agent"
	for cut := range len(in) {
		for cut2 := cut; cut2 <= len(in); cut2 += 5 {
			var b bytes.Buffer
			found := 0
			w := newMarkWriter(&b, mark, func() { found++ })
			for _, part := range []string{in[:cut], in[cut:cut2], in[cut2:]} {
				if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.flush()
			if b.String() != want || found != 1 {
				t.Fatalf("cut at %d, %d: %q, found %d times; want %q once", cut, cut2, b.String(), found, want)
			}
		}
	}
}

// An exec that never starts its program (the mark never comes) fails
// Start after startTimeout, naming the pod and the program, and its
// stream is ended.
func TestStartTimesOut(t *testing.T) {
	defer func(d time.Duration) { startTimeout = d }(startTimeout)
	startTimeout = 100 * time.Millisecond
	ex := &slowShim{begin: make(chan struct{})} // never begins
	pod := &Pod{ns: "cnibench", name: "cnb-r1-srv-0", exec: ex}
	p, err := pod.Start(context.Background(), []string{"iperf3", "-s"})
	if err == nil || p != nil || !strings.Contains(err.Error(), "cnibench/cnb-r1-srv-0") || !strings.Contains(err.Error(), "iperf3 -s") {
		t.Fatalf("Start = %v, %v; want an error naming the pod and the program", p, err)
	}
}

// A program the shim cannot start: no mark, Start returns at the exec's
// end and Wait has the shim's error. A cancelled start returns too.
func TestStartWithoutProgram(t *testing.T) {
	ex := execFunc(func(_ context.Context, _ []string, stderr io.Writer) error {
		io.WriteString(stderr, "agent exec: exec: \"iperf3\": executable file not found in $PATH\n")
		return &ExitCodeError{Code: 127}
	})
	pod := &Pod{ns: "cnibench", name: "cnb-r1-cli-0", exec: ex}
	p, err := pod.Start(context.Background(), []string{"iperf3"})
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := p.Wait()
	var ce *ExitCodeError
	if !errors.As(err, &ce) || ce.Code != 127 || !strings.Contains(string(stderr), "executable file not found") {
		t.Errorf("Wait = %q, %v; want the shim's error", stderr, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stuck := &slowShim{begin: make(chan struct{})}
	time.AfterFunc(50*time.Millisecond, cancel)
	p, err = (&Pod{ns: "cnibench", name: "x", exec: stuck}).Start(ctx, []string{"iperf3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled start: Wait = %v", err)
	}
}

// An image whose shim predates the mark refuses its flag: the program is
// started as before, without the wait, the pod remembered, with a note.
func TestStartOldShim(t *testing.T) {
	var notes []string
	defer func(f func(string)) { noteOldShim = f }(noteOldShim)
	noteOldShim = func(s string) { notes = append(notes, s) }
	var argvs [][]string
	ex := execFunc(func(_ context.Context, argv []string, stderr io.Writer) error {
		argvs = append(argvs, argv)
		if slices.Contains(argv, markFlag) {
			io.WriteString(stderr, "cnibench: unknown flag: --start-mark\n")
			return &ExitCodeError{Code: 2}
		}
		return nil
	})
	pod := &Pod{ns: "cnibench", name: "cnb-r1-cli-0", exec: ex}
	for range 2 {
		p, err := pod.Start(context.Background(), []string{"ab", "-n", "1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, stderr, err := p.Wait(); err != nil || len(stderr) != 0 {
			t.Errorf("Wait = %q, %v", stderr, err)
		}
	}
	want := [][]string{shimArgv([]string{"ab", "-n", "1"}, ""), shimArgv([]string{"ab", "-n", "1"}, "")}
	if len(argvs) != 3 || !slices.Equal(argvs[1], want[0]) || !slices.Equal(argvs[2], want[1]) {
		t.Errorf("execs %q: one refused, then the program twice without the flag", argvs)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "cnibench/cnb-r1-cli-0") {
		t.Errorf("notes %q, want one naming the pod", notes)
	}
}

// execFunc is an Execer with no stdin or stdout.
type execFunc func(ctx context.Context, argv []string, stderr io.Writer) error

func (f execFunc) Exec(ctx context.Context, _, _, _ string, argv []string, _ io.Reader, _, stderr io.Writer) error {
	return f(ctx, argv, stderr)
}
