package agent

import (
	"errors"
	"fmt"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// Scratch namespaces of the agent's own probes. A session's features op
// (the kube preflight's) probes the node's kernel as doctor does, in a
// scratch namespace named after the probing process
// (probe.ScratchName: cnbprobe-PID-START-TAG) and deleted when the probe
// ends. A session killed meanwhile (SIGKILL: `cleanup --kube` ending a
// session that outlived its SIGTERM wait, the OOM killer, kill -9 on the
// node) leaves that name in the agent container's /var/run/netns, and
// the namespace with it, until the container restarts. On a host `cnibench cleanup` deletes the
// scratch namespaces whose prober is gone (docs/safety.md); on a node
// the agent's replay does, which its daemon runs at start and every few
// seconds and `cnibench cleanup --kube` asks for (`agent replay`). A live
// prober's is left to it. A name without the prober's pid and start (an
// older cnibench's random one) is left too, as cleanup leaves it without
// --orphans: the container is as new as its image (an upgrade restarts
// it, and names bound in its mount namespace go with it), so there is
// none to find. The probes start no process in the namespace, so
// deleting the name frees it.

// scratchNetns lists the agent's scratch namespaces, tells whether their
// prober lives and deletes them: netns.List, journal.ProcessAlive and
// netns.Delete on a real node; tests fake them.
type scratchNetns struct {
	list   func(prefix string) ([]string, error)
	alive  func(pid int, start uint64) bool
	delete func(name string) error
}

var nodeScratch = scratchNetns{list: netns.List, alive: journal.ProcessAlive, delete: netns.Delete}

// sweep deletes the scratch namespaces whose prober is gone and counts
// them.
func (sc *scratchNetns) sweep() (int, error) {
	if sc == nil {
		return 0, nil // not a real node's session: nothing of its probes to find
	}
	names, err := sc.list(probe.NamespacePrefix)
	if err != nil {
		return 0, fmt.Errorf("list probe scratch namespaces: %w", err)
	}
	n := 0
	var errs []error
	for _, name := range names {
		pid, start, ok := probe.ParseScratchName(name)
		if !ok || sc.alive(pid, start) {
			continue
		}
		if err := sc.delete(name); err != nil {
			errs = append(errs, fmt.Errorf("scratch namespace of a gone probe (pid %d): %w", pid, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
