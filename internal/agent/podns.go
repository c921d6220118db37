package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cnibench/cnibench/internal/tune"
)

// ProcPods finds a pod's network namespace from the environment of its
// processes (PodEnv) and names it by path, PROC/PID/ns/net, which
// netns and tune.LocalFS enter directly: nothing is bound or linked
// under netns.Dir, so nothing is left on the node. When the pod is gone
// the path is too and the namespace counts as gone (tune.ErrGone).
type ProcPods struct {
	ProcRoot string // the node's /proc

	mu  sync.Mutex
	pid map[string]int
}

// Netns returns the namespace reference of pod "NAMESPACE/NAME".
func (p *ProcPods) Netns(pod string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid == nil {
		p.pid = map[string]int{}
	}
	pid, ok := p.pid[pod]
	if !ok || !hasMarker(p.ProcRoot, pid, pod) {
		var err error
		if pid, err = FindPodPID(p.ProcRoot, pod); err != nil {
			return "", err
		}
		p.pid[pod] = pid
	}
	root, err := filepath.Abs(p.ProcRoot)
	if err != nil {
		return "", fmt.Errorf("netns of pod %s: %w", pod, err)
	}
	return filepath.Join(root, strconv.Itoa(pid), "ns/net"), nil
}

// FindPodPID returns the lowest PID under procRoot whose environment has
// PodEnv=pod. No such process means the pod is gone (tune.ErrGone).
func FindPodPID(procRoot, pod string) (int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, err
	}
	best := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (best != 0 && pid > best) {
			continue
		}
		if hasMarker(procRoot, pid, pod) {
			best = pid
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("pod %s: no process with %s=%s on this node: %w", pod, PodEnv, pod, tune.ErrGone)
	}
	return best, nil
}

func hasMarker(procRoot string, pid int, pod string) bool {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	want := []byte(PodEnv + "=" + pod)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

var errNoIptables = errors.New("iptables-save is not in the agent image")
