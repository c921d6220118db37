package agent

import (
	"sync"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// hostProc runs /proc/sys accesses in the init network namespace.
// /proc/sys/net shows the namespace of the task that opens it, and the
// RFS table size (net.core.rps_sock_flow_entries) exists only in the init
// namespace. On a real node a host-network agent is already there; on a
// test cluster whose nodes are namespaces of one machine it is not, and
// the value it sets is the machine's one global table either way (which
// is why runs on nodes of one kernel are kept apart by the engine's
// kernel claim, not by the node lock).
type hostProc struct {
	procRoot string
	once     sync.Once
	// ref is the init namespace's file (PROC/1/ns/net) when it is not
	// this process's namespace; "" runs accesses where the process is.
	// netns enters it by path: nothing is bound under netns.Dir.
	ref string
}

func (h *hostProc) do(fn func() error) error {
	h.once.Do(func() { h.ref = netns.InitRef(h.procRoot) })
	if h.ref == "" {
		return fn()
	}
	return netns.Do(h.ref, fn)
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
