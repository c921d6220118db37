package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
)

// The node's lock. One run at a time uses a node, for two reasons.
// Numbers: two runs measuring on one node load each other's trials, and
// on a cluster the noise guard cannot see it (outside CPU is not
// measured there), so both would record skewed numbers silently, even
// runs that change nothing (baseline cells). Changes: a session
// journals each knob's first old value before it writes, and puts that
// value back when it ends; two sessions changing one node at once break
// that: B journals A's value as its "old" one, A's revert then finds B's
// value and leaves it alone, and B's revert puts A's value back, so the
// node stays changed with nothing pending. The kube engine's Lease check
// keeps apart the runs of one namespace only, so the agent keeps apart
// the runs that use its node, whatever their namespace. (Nodes of one
// kernel share part of what a run tunes, the RFS table, global sysctls
// and CPU idle limits, which this per-node lock cannot guard: the engine
// claims each kernel with a Lease named by its boot ID, kube's
// kernellease.go, and a runner on that kernel takes its machine lock.)
// A run's session claims the node when it opens (OpClaim: Cluster.Up
// sends it right after the handshake, before the run reads or makes anything there)
// and a session that never claimed takes the lock at its first write or
// netem request (even one that finds its value there already: what it
// reads may be another session's). Either takes an exclusive flock on
// the node's journal directory (DefaultJournalDir/NODE, one per node even
// where nodes share a machine's /run/cnibench) and holds it until the
// session has reverted and retired its journal. Another session's claim
// or first change is refused meanwhile (*NodeBusyError), before it reads
// or writes anything; a session of the same run too, since two sessions
// of one run would journal each other's values just the same (the kube
// engine opens one session per node and run that claims: Cluster.Up).
// Preflight's and advise's sessions only read: they never claim, and
// reads never take the lock, so they work beside a run that holds the
// node. The kernel drops the lock when its holder dies, so a killed
// session never keeps the node: its journal is replayed as before
// (Replay takes no lock: it only touches journals whose owner is dead
// and whose own flock is free, never a live session's). The new holder
// replays them too, as it takes the lock (openJournalLocked), so before
// its first change: a claim replays at the session's start.
//
// Version skew: the engine and the agent must be one cnibench version
// (the handshake refuses another before the claim). Were they not, an
// older agent answers the claim "unknown op", which fails Cluster.Up
// rather than letting the run go on unclaimed, and an older engine that
// never claims still has its changes kept apart at its first change.
//
// The directory itself is locked (journal.LockDir), so no lock file is
// left on the node, and the directory goes when its last journal does
// (removeEmptyDir). A session opens its journal before it locks: from
// then until it has retired that journal the directory is not empty, so
// no other session's removeEmptyDir can remove it, and the directory this
// session locks is the one its journal, and every other locker's, is in.
// (Locking first would let a session lock an empty directory that
// another session's end then removes; its journal would go into a new
// directory that a third session could lock too.) The holder is named as
// a local run's is: its pid from /proc/locks, its run from the journal
// that pid has in the directory.

// ErrNodeBusy is a claim or change refused because another session
// holds the node; *NodeBusyError is it, and a *RemoteError of KindBusy
// matches it. It is tune's, so a runner knows it without importing the
// agent.
var ErrNodeBusy = tune.ErrNodeBusy

// NodeBusyError is a session's claim or first change refused while
// another session holds the node (measuring or changing it).
type NodeBusyError struct {
	Node string
	// Run is the holder's run and PID its session's process, where found
	// (PID 0 when /proc/locks does not name it, Run "" when no journal of
	// that pid is in the directory).
	Run string
	PID int
	// Same says the holder is a session of this session's own run.
	Same bool
}

func (e *NodeBusyError) Error() string {
	who := "another agent session"
	switch {
	case e.Same:
		who = fmt.Sprintf("another session of this run %s (pid %d)", e.Run, e.PID)
	case e.Run != "":
		who = fmt.Sprintf("run %s (agent session pid %d)", e.Run, e.PID)
	case e.PID > 0:
		who = fmt.Sprintf("an agent session (pid %d)", e.PID)
	}
	return fmt.Sprintf("node %s is in use by %s, measuring or changing it: one run uses a node at a time, since two runs' "+
		"numbers on one node skew each other and two runs' changes would journal each other's values as the old ones and leave "+
		"the node changed; wait for it to end (it puts the node back and lets go); if its run is dead (its runner gone, its Lease stale), "+
		"`cnibench cleanup --kube` ends the session it left and puts the node back", e.Node, who)
}

// Is makes errors.Is(err, ErrNodeBusy) hold.
func (e *NodeBusyError) Is(target error) bool { return target == ErrNodeBusy }

// claim holds the node for this session's run from now to its end
// (OpClaim), whether or not the run ever changes it: see the comment
// above. A second claim, or one after a change, holds it already.
func (s *Server) claim() error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	return s.openJournalLocked()
}

// openJournalLocked opens the session's node journal and takes the
// node's lock, at the session's claim or else its first change, before
// it reads the value it will journal as old (s.jmu held). Refused, it
// leaves nothing: the journal held its header alone.
func (s *Server) openJournalLocked() error {
	if s.j != nil {
		return nil
	}
	j, err := openJournal(s.cfg.JournalDir, s.cfg.Run+"_"+strconv.Itoa(os.Getpid()))
	if err != nil {
		return fmt.Errorf("node journal: %w", err)
	}
	l, err := journal.WaitDir(s.cfg.JournalDir, nodeLockWait)
	if err != nil {
		if be := (*journal.BusyError)(nil); errors.As(err, &be) {
			err = s.busy(be.PID, j.Path())
		} else {
			err = fmt.Errorf("node lock: %w", err)
		}
		return errors.Join(err, j.Close())
	}
	// A session killed moments ago left its values, which the daemon's
	// replay (every few seconds) may not have put back yet: this session
	// would journal them as its old ones and put them back at its end.
	// So, holding the node, it undoes dead sessions' journals first (its
	// own is live and left alone), and changes nothing while it cannot.
	if sum, err := Replay(s.cfg.JournalDir, s.fs); err != nil {
		l.Release()
		return errors.Join(fmt.Errorf("node %s: a dead session's changes could not be put back before this session's claim or first change (%s): %w: %w",
			s.cfg.Node, sum, tune.ErrNodeUnclean, err), j.Close())
	}
	s.j, s.lock = j, l
	return nil
}

// nodeLockWait is how long a session's claim or first change waits for
// the node: a replay (the daemon's, every few seconds, or cleanup's)
// holds it for moments, and so does a session between retiring its
// journal and letting go; a run's session holds it for its run.
// A refusal stops the caller's run (tune.ErrNodeBusy), so a moment's
// overlap must not refuse.
var nodeLockWait = 3 * time.Second

// busy is the refusal of a claim or change while the process pid (0: not known)
// holds the node: its run is the one of its journal in the directory,
// named RUN_PID. journal's BusyError names a run the same way but may
// name this session's own journal, which is in the directory too (one
// process, in tests, holding both): own is left out here.
func (s *Server) busy(pid int, own string) error {
	e := &NodeBusyError{Node: s.cfg.Node, PID: pid}
	if pid <= 0 {
		return e
	}
	paths, _ := filepath.Glob(filepath.Join(s.cfg.JournalDir, "*"+journal.Ext))
	for _, p := range paths {
		if p == own {
			continue
		}
		if r, err := journal.ReadReplay(p); err == nil && r.Header.PID == pid {
			if run, ok := sessionRun(r.Header); ok {
				e.Run, e.Same = run, run == s.cfg.Run
			}
			break
		}
	}
	return e
}

// releaseNode lets go of the node once the session has retired its
// journal. A journal kept (changes left that the session could not put
// back) keeps the node too, until the process ends: another session
// would journal those values as its old ones.
func (s *Server) releaseNode(kept bool) {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if !kept {
		s.lock.Release()
		s.lock = nil
	}
}
