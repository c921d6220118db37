package ab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/workload"
)

// hangingPod is a server pod whose nginx the test can freeze: SIGSTOP to
// the master and its workers. The kernel still accepts connections and
// takes requests (the listen backlog), but no byte of a response comes
// and no reset either, as with a hung server; only ab's -s timeout ends
// the wait. Freezing a process is used rather than taking the pod's link
// down because after a few seconds without a link the neighbour entry
// fails and connects get "host unreachable", which ab counts as failed
// requests, not as a timeout.
type hangingPod struct {
	engine.Pod
	mu     sync.Mutex
	dir    string // nginx's prefix (-p), where its pid file is
	frozen []int
}

func (h *hangingPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	p, err := h.Pod.Start(ctx, argv)
	if err != nil || filepath.Base(argv[0]) != "nginx" {
		return p, err
	}
	for i := range argv[:len(argv)-1] {
		if argv[i] == "-p" {
			h.mu.Lock()
			h.dir = argv[i+1]
			h.mu.Unlock()
		}
	}
	return thawing{p, h}, nil
}

// freezeAfter freezes nginx after delay and reports on done.
func (h *hangingPod) freezeAfter(delay time.Duration, done chan<- error) {
	go func() {
		time.Sleep(delay)
		done <- h.freeze()
	}()
}

func (h *hangingPod) freeze() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		return fmt.Errorf("nginx was not started in %s", h.Name())
	}
	b, err := os.ReadFile(filepath.Join(h.dir, "nginx.pid"))
	if err != nil {
		return fmt.Errorf("nginx pid: %w", err)
	}
	master, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil {
		return fmt.Errorf("nginx pid file: %w", err)
	}
	pids := append([]int{master}, childrenOf(master)...)
	if len(pids) < 2 {
		return fmt.Errorf("nginx %d has no worker", master)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return fmt.Errorf("stop nginx %d: %w", pid, err)
		}
		h.frozen = append(h.frozen, pid)
	}
	return nil
}

// thaw resumes what freeze stopped, so the driver's SIGTERM reaches a
// running nginx and no stopped worker outlives its master.
func (h *hangingPod) thaw() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pid := range h.frozen {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	h.frozen = nil
}

type thawing struct {
	engine.Process
	h *hangingPod
}

func (t thawing) Stop() {
	t.h.thaw()
	t.Process.Stop()
}

// childrenOf lists the processes whose parent is pid (from /proc/PID/stat).
func childrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces, so split
		// after its closing parenthesis.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscan(string(b[i+1:]), &state, &ppid); err == nil && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// hangPairs wraps the first pair's server so the test can freeze it.
func hangPairs(t *testing.T, pairs []workload.Pair) *hangingPod {
	t.Helper()
	h := &hangingPod{Pod: pairs[0].Server}
	pairs[0].Server = h
	t.Cleanup(h.thaw)
	return h
}
