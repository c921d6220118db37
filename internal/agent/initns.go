package agent

import (
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// hostProc runs /proc/sys accesses in the init network namespace.
// /proc/sys/net shows the namespace of the task that opens it, and the
// RFS table size (net.core.rps_sock_flow_entries) exists only in the init
// namespace. On a real node a host-network agent is already there; on a
// test cluster whose nodes are namespaces of one machine it is not, and
// the value it sets is the machine's one global table either way.
type hostProc struct {
	procRoot string
	once     sync.Once
	// ref is the init namespace's file (PROC/1/ns/net) when it is not
	// this process's namespace; "" runs accesses where the process is.
	// netns enters it by path: nothing is bound under netns.Dir.
	ref string
}

func (h *hostProc) do(fn func() error) error {
	h.once.Do(func() { h.ref = initNetns(h.procRoot) })
	if h.ref == "" {
		return fn()
	}
	return netns.Do(h.ref, fn)
}

// initNetns returns the file of the init network namespace under
// procRoot when it differs from this process's namespace, and "" when
// they are the same or it cannot tell (then this namespace is used).
func initNetns(procRoot string) string {
	// The calling thread's namespace, not /proc/self's (the leader
	// thread's): threads are where namespaces are switched.
	self, err := nsInode("/proc/thread-self/ns/net")
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(procRoot); err == nil {
		procRoot = abs
	}
	// PID 1 is in the init namespaces; where it cannot be inspected
	// (some sandboxes), kthreadd (PID 2) is too.
	for _, pid := range []string{"1", "2"} {
		p := filepath.Join(procRoot, pid, "ns/net")
		if ino, err := nsInode(p); err == nil {
			if ino == self {
				return ""
			}
			return p
		}
	}
	return ""
}

func nsInode(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// proc sends the node's /proc/sys accesses through hostProc. The node's
// /sys needs nothing here: tune.LocalFS reaches it through
// netns.WithSysfs, which also makes a read-only /sys writable for writes.
func (f *nodeFS) proc(ns, fsKind string, fn func() error) error {
	if ns != "" || f.host == nil || fsKind != tune.FSProc {
		return fn()
	}
	return f.host.do(fn)
}
