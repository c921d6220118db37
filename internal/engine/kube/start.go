package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnibench/cnibench/internal/agent"
)

// startTimeout bounds how long Start waits for the program to run: an
// exec reaches its node in 0.1-0.5 s, so one that has not started the
// program after this is stuck (an API server or kubelet that stopped
// answering), and a trial timed from it would be wrong.
var startTimeout = 30 * time.Second

// markFlag asks the shim for the start mark; an `agent exec` older than
// it refuses the flag with oldShimRefusal (exit 2) and runs nothing.
const (
	markFlag       = "--start-mark"
	oldShimRefusal = "unknown flag: " + markFlag
)

// noteOldShim says, once per pod, that its image's shim is too old to
// mark the start (a variable for tests).
var noteOldShim = func(msg string) { slog.Default().Warn(msg) }

// shimArgv wraps argv in the stop-on-stdin-EOF shim; with a token the
// shim also writes agent.StartMark(token) on stderr once argv runs.
func shimArgv(argv []string, token string) []string {
	shim := []string{BinPath, "agent", "exec"}
	if token != "" {
		shim = append(shim, markFlag, token)
	}
	return append(append(shim, "--"), argv...)
}

// startMarked execs argv through the shim in t and returns once the shim
// has written its start mark: the program runs. The exec's own trip
// (API server, kubelet, runtime) takes 0.1-0.5 s, which a driver opening
// its window when Start returns must not count. It also returns the
// process, as before the mark existed, when the exec ended without the
// mark (the program could not start: Wait has the shim's error) or ctx
// ended (Wait has why). No mark within startTimeout is an error naming
// the pod and the program, the exec stopped.
//
// The workload pods run the image the runner was given, whose version
// nothing checks (the agents' handshake checks theirs): a shim older than
// the mark refuses its flag at once, and with oldShim (nil: no fallback)
// the pod is then remembered and argv started as before, without the
// wait, with a note.
func startMarked(ctx context.Context, ex Execer, t target, argv []string, line func(string), oldShim *atomic.Bool) (*process, error) {
	if oldShim != nil && oldShim.Load() {
		return startExec(ctx, ex, t, argv, shimArgv(argv, ""), line, ""), nil
	}
	token := newToken()
	p := startExec(ctx, ex, t, argv, shimArgv(argv, token), line, agent.StartMark(token))
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-p.started:
	case <-p.done:
		if !p.marked() && oldShim != nil && p.refusedMark() {
			if oldShim.CompareAndSwap(false, true) {
				noteOldShim(fmt.Sprintf("pod %s/%s: its image's `cnibench agent exec` is older than this cnibench and cannot say when a program starts; "+
					"programs there are timed from the exec request, 0.1-0.5 s before they run, so short windows take in idle time: "+
					"run the image of this version (`cnibench kube image`)", t.ns, t.pod))
			}
			return startExec(ctx, ex, t, argv, shimArgv(argv, ""), line, ""), nil
		}
	case <-ctx.Done():
	case <-timer.C:
		p.Stop()
		p.cancel()
		return nil, fmt.Errorf("pod %s/%s: %s did not start within %v of its exec (no start mark from `cnibench agent exec`)",
			t.ns, t.pod, strings.Join(argv, " "), startTimeout)
	}
	return p, nil
}

// marked reports whether the start mark came.
func (p *process) marked() bool {
	select {
	case <-p.started:
		return true
	default:
		return false
	}
}

// refusedMark reports whether the ended exec was a shim refusing the
// mark's flag (nothing ran). Only after done.
func (p *process) refusedMark() bool {
	var ce *ExitCodeError
	return errors.As(p.err, &ce) && ce.Code == 2 && bytes.Contains(p.stderr.Bytes(), []byte(oldShimRefusal))
}

// newToken is a start mark's token: random, so no program's output is
// taken for the mark.
func newToken() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// markWriter passes what is written on to w without the first occurrence
// of mark, calling found when it comes. The shim writes the mark in one
// write, but the program may have written part of a line before it, and
// the stream may cut it anywhere: a tail that may begin the mark is held
// back until the next write tells (flush hands it on at the end).
type markWriter struct {
	mu    sync.Mutex
	w     io.Writer
	mark  []byte
	found func()
	seen  bool
	held  []byte
}

func newMarkWriter(w io.Writer, mark string, found func()) *markWriter {
	return &markWriter{w: w, mark: []byte(mark), found: found}
}

// Write implements io.Writer; it reports all of b written unless w
// failed.
func (m *markWriter) Write(b []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen {
		return m.pass(b, len(b))
	}
	buf := append(m.held, b...)
	m.held = nil
	if i := bytes.Index(buf, m.mark); i >= 0 {
		m.seen = true
		m.found()
		return m.pass(append(buf[:i:i], buf[i+len(m.mark):]...), len(b))
	}
	k := heldTail(buf, m.mark)
	m.held = append([]byte(nil), buf[len(buf)-k:]...)
	return m.pass(buf[:len(buf)-k], len(b))
}

func (m *markWriter) pass(b []byte, n int) (int, error) {
	if len(b) == 0 {
		return n, nil
	}
	if _, err := m.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// flush hands on a held tail: the stream ended before it could be the
// mark.
func (m *markWriter) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pass(m.held, 0)
	m.held = nil
}

// heldTail is the length of the longest end of b that begins mark (and
// is shorter than it).
func heldTail(b, mark []byte) int {
	for k := min(len(b), len(mark)-1); k > 0; k-- {
		if bytes.HasSuffix(b, mark[:k]) {
			return k
		}
	}
	return 0
}
