package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/tune"
)

// ProcPods finds a pod's network namespace from the environment of its
// processes (PodEnv) and names it by path, PROC/PID/ns/net, which
// netns and tune.LocalFS enter directly: nothing is bound or linked
// under netns.Dir, so nothing is left on the node. When the pod is gone
// the path is too and the namespace counts as gone (tune.ErrGone).
//
// The mark is an environment variable, which any process can set: a
// process of another pod that carries it must not have the agent write
// the tuning into its namespace. So every marked process must be in one
// namespace (a disagreement is refused, naming the PIDs), and a PID is
// trusted only while it still carries the mark and is still in the
// namespace it was found in (a PID reused by another process is not).
// What this cannot tell is a lone impostor while the pod has no process
// up: that needs the pod's UID, which the controller does not send.
type ProcPods struct {
	ProcRoot string // the node's /proc

	mu  sync.Mutex
	pid map[string]podProc
}

// podProc is a marked process of a pod and the namespace it was in.
type podProc struct {
	pid int
	ns  nsID
}

// nsID tells namespaces apart: the device and inode of the nsfs file.
type nsID struct{ dev, ino uint64 }

func statNS(path string) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nsID{}, err
	}
	return nsID{uint64(st.Dev), st.Ino}, nil
}

func (p *ProcPods) nsPath(pid int) string {
	return filepath.Join(p.ProcRoot, strconv.Itoa(pid), "ns/net")
}

// lookup returns a marked process of pod, the cached one while it still
// carries the mark and is in the namespace it was found in.
func (p *ProcPods) lookup(pod string) (podProc, error) {
	if p.pid == nil {
		p.pid = map[string]podProc{}
	}
	if pp, ok := p.pid[pod]; ok && hasMarker(p.ProcRoot, pp.pid, pod) {
		if id, err := statNS(p.nsPath(pp.pid)); err == nil && id == pp.ns {
			return pp, nil
		}
	}
	delete(p.pid, pod)
	pp, err := findPod(p.ProcRoot, pod)
	if err != nil {
		return podProc{}, err
	}
	p.pid[pod] = pp
	return pp, nil
}

// Netns returns the namespace reference of pod "NAMESPACE/NAME".
func (p *ProcPods) Netns(pod string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp, err := p.lookup(pod)
	if err != nil {
		return "", err
	}
	root, err := filepath.Abs(p.ProcRoot)
	if err != nil {
		return "", fmt.Errorf("netns of pod %s: %w", pod, err)
	}
	return filepath.Join(root, strconv.Itoa(pp.pid), "ns/net"), nil
}

// Open pins pod's namespace for one access: it opens PID/ns/net, then
// checks that the descriptor is the namespace the marked process was
// found in and that the process still carries the mark, and returns
// /proc/self/fd/N, which stays that namespace whatever becomes of the PID
// until release. A path handed on instead could name another process's
// namespace by the time it is opened, if the pod's process exited and its
// PID was reused.
func (p *ProcPods) Open(pod string) (ref string, release func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range 3 {
		pp, err := p.lookup(pod)
		if err != nil {
			return "", nil, err
		}
		f, err := os.Open(p.nsPath(pp.pid))
		if err != nil {
			delete(p.pid, pod) // exited since the lookup: look again
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err == nil && (nsID{uint64(st.Dev), st.Ino}) == pp.ns && hasMarker(p.ProcRoot, pp.pid, pod) {
			return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), func() { f.Close() }, nil
		}
		f.Close()
		delete(p.pid, pod)
	}
	return "", nil, fmt.Errorf("pod %s: its processes kept changing while the agent opened its namespace; try again", pod)
}

// FindPodPID returns the lowest PID under procRoot whose environment has
// PodEnv=pod. No such process means the pod is gone (tune.ErrGone);
// marked processes in different network namespaces are refused.
func FindPodPID(procRoot, pod string) (int, error) {
	pp, err := findPod(procRoot, pod)
	return pp.pid, err
}

func findPod(procRoot, pod string) (podProc, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return podProc{}, err
	}
	byNS := map[nsID][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !hasMarker(procRoot, pid, pod) {
			continue
		}
		id, err := statNS(filepath.Join(procRoot, e.Name(), "ns/net"))
		if err != nil {
			continue // exited (or a zombie, whose namespaces are gone)
		}
		byNS[id] = append(byNS[id], pid)
	}
	switch len(byNS) {
	case 0:
		return podProc{}, fmt.Errorf("pod %s: no process with %s=%s on this node: %w", pod, PodEnv, pod, tune.ErrGone)
	case 1:
		for id, pids := range byNS {
			return podProc{pid: slices.Min(pids), ns: id}, nil
		}
	}
	return podProc{}, disagreement(pod, byNS)
}

// disagreement refuses a pod whose marked processes are in different
// namespaces: one of them carries the mark without being the pod's, and
// the agent cannot tell which.
func disagreement(pod string, byNS map[nsID][]int) error {
	var groups []string
	for id, pids := range byNS {
		slices.Sort(pids)
		s := make([]string, len(pids))
		for i, p := range pids {
			s[i] = strconv.Itoa(p)
		}
		word := "PID "
		if len(pids) > 1 {
			word = "PIDs "
		}
		groups = append(groups, fmt.Sprintf("%s%s in net:[%d]", word, strings.Join(s, ", "), id.ino))
	}
	slices.Sort(groups)
	return fmt.Errorf("pod %s: processes with %s=%s are in %d network namespaces (%s); a process outside the pod carries its mark, so the agent enters none; find the process (cat /proc/PID/cgroup) and stop it",
		pod, PodEnv, pod, len(byNS), strings.Join(groups, "; "))
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
