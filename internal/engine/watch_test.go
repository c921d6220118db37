package engine

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
)

// TestLines: lines are handed on whole however the writes split them;
// a line longer than MaxLine goes in pieces; a partial line waits.
func TestLines(t *testing.T) {
	var got []string
	l := NewLines(func(s string) { got = append(got, s) })
	for _, w := range []string{"sockperf: Warm", "up\nsockperf: Starting test...\n", "\n", "a\nb", "c\n", "tail"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	want := []string{"sockperf: Warmup", "sockperf: Starting test...", "", "a", "bc"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	got = nil
	long := strings.Repeat("x", MaxLine+10)
	l = NewLines(func(s string) { got = append(got, s) })
	l.Write([]byte(long + "\n"))
	if len(got) != 2 || len(got[0]) != MaxLine || got[1] != "xxxxxxxxxx" {
		t.Errorf("a line of %d bytes went as %d pieces", len(long), len(got))
	}
}

type plainPod struct{ started *bool }

func (plainPod) Name() string { return "p" }
func (plainPod) Node() string { return "n" }
func (plainPod) IP() net.IP   { return net.IPv4(10, 0, 0, 1) }
func (p plainPod) Start(context.Context, []string) (Process, error) {
	*p.started = true
	return nil, nil
}

type watchedPod struct{ plainPod }

func (p watchedPod) StartWatched(_ context.Context, _ []string, line func(string)) (Process, error) {
	line("hello")
	return nil, nil
}

// TestStartWatched: a Watcher is found behind Front and Unfront; a pod
// that is not one is started as it is, and says so.
func TestStartWatched(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     func(*bool) Pod
		watched bool
	}{
		{"watcher", func(b *bool) Pod { return watchedPod{plainPod{b}} }, true},
		{"fronted watcher", func(b *bool) Pod { return Front(watchedPod{plainPod{b}}, net.IPv4(10, 96, 0, 1)) }, true},
		{"unfronted fronted watcher", func(b *bool) Pod { return Unfront(Front(watchedPod{plainPod{b}}, net.IPv4(10, 96, 0, 1))) }, true},
		{"plain", func(b *bool) Pod { return Front(plainPod{b}, net.IPv4(10, 96, 0, 1)) }, false},
	} {
		var started bool
		var lines []string
		_, watched, err := StartWatched(context.Background(), tc.pod(&started), []string{"x"}, func(s string) { lines = append(lines, s) })
		if err != nil || watched != tc.watched || started == watched || (len(lines) == 1) != watched {
			t.Errorf("%s: watched %v, Start called %v, lines %q, err %v", tc.name, watched, started, lines, err)
		}
	}
}

// FuzzLines: however a program's output is split into writes, the lines
// handed on are its text up to its last newline, in order.
func FuzzLines(f *testing.F) {
	f.Add("sockperf: Warmup stage\nsockperf: Starting test...\n", 9)
	f.Add("a\n\nb", 0)
	f.Add("no newline", 3)
	f.Fuzz(func(t *testing.T, out string, cut int) {
		if len(out) > MaxLine {
			return
		}
		cut = max(0, min(len(out), cut))
		var got []string
		l := NewLines(func(s string) { got = append(got, s) })
		l.Write([]byte(out[:cut]))
		l.Write([]byte(out[cut:]))
		whole := out[:strings.LastIndexByte(out, '\n')+1]
		if joined := strings.Join(got, "\n"); len(got) > 0 && joined+"\n" != whole || len(got) == 0 && whole != "" {
			t.Errorf("%q cut at %d: lines %q", out, cut, got)
		}
	})
}
