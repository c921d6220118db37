package engine

import (
	"bytes"
	"context"
	"sync"
)

// Watcher is a pod whose programs' stdout can be followed as they print
// it: how a driver learns when a tool's measured part begins, where that
// is not when the tool starts (sockperf's client sleeps two seconds
// between its warm-up messages and its test). Both engines' pods are.
type Watcher interface {
	// StartWatched is Pod.Start that also hands each line the program
	// prints on stdout, without its newline, to line as it is printed
	// (from one goroutine, in order). Wait still returns all of stdout.
	StartWatched(ctx context.Context, argv []string, line func(string)) (Process, error)
}

// unwrapper is a pod that wraps another (Front, Unfront): it starts
// programs in that one.
type unwrapper interface{ unwrap() Pod }

// StartWatched starts argv in p and hands each line of its stdout to line
// as it is printed, where p (or the pod it wraps) is a Watcher; watched
// says whether it is. Elsewhere argv is started as by p.Start and line is
// never called.
func StartWatched(ctx context.Context, p Pod, argv []string, line func(string)) (proc Process, watched bool, err error) {
	for q := p; q != nil; {
		if w, ok := q.(Watcher); ok {
			proc, err = w.StartWatched(ctx, argv, line)
			return proc, true, err
		}
		u, ok := q.(unwrapper)
		if !ok {
			break
		}
		q = u.unwrap()
	}
	proc, err = p.Start(ctx, argv)
	return proc, false, err
}

// MaxLine bounds a line Lines hands on: a longer one goes in pieces of
// MaxLine bytes (and what is left), so a program that never ends a line
// does not grow it without bound.
const MaxLine = 64 << 10

// Lines is an io.Writer that hands each complete line written to it to
// its function, as a Watcher does with a program's stdout. It never fails
// a write. Safe for one writer (exec's and remotecommand's copy loops
// write from one goroutine); the lock keeps a stray second one safe.
type Lines struct {
	mu   sync.Mutex
	fn   func(string)
	part []byte
}

// NewLines returns a Lines handing lines to fn.
func NewLines(fn func(string)) *Lines { return &Lines{fn: fn} }

// Write implements io.Writer.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		l.part = append(l.part, chunk...)
		for len(l.part) > MaxLine {
			l.fn(string(l.part[:MaxLine]))
			l.part = append(l.part[:0], l.part[MaxLine:]...)
		}
		if i < 0 {
			break
		}
		l.fn(string(l.part))
		l.part, p = l.part[:0], p[i+1:]
	}
	return n, nil
}
