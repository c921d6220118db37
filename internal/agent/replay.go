package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
)

// ReplaySummary says what replaying dead sessions' journals did. Only
// Restored values were written: the others were found already back,
// gone with their pod, or changed by someone else, and a count that
// lumped them together said "reverted" of values nothing wrote.
type ReplaySummary struct {
	Restored int // values written back
	Already  int // values found back already (a crash before the write)
	Gone     int // values and qdiscs whose pod or device is gone
	// Changed are values someone else changed after the session's write;
	// they are left alone, and named so the operator can check them.
	Changed []tune.Outcome
	// Qdiscs counts impaired devices whose qdisc was put back where the
	// session's netem still sat (a no-op where it was removed already);
	// a pod's gone with its namespace is counted in Gone.
	Qdiscs int
	// QdiscsLeft are impaired devices an older agent journaled by the
	// path of a pod process's namespace (DEV in /proc/PID/ns/net), which
	// may be another's now: left alone, named for the operator to check.
	QdiscsLeft []string
	Traces     int // trace tables of dead sessions deleted
	// Probes counts scratch namespaces of dead sessions' probes deleted
	// (scratch.go).
	Probes int
	// Held: a live session holds the node, and replayed what dead ones
	// left before its first change; nothing was looked at.
	Held bool
}

func (s *ReplaySummary) add(outs []tune.Outcome) {
	for _, o := range outs {
		switch o.Action {
		case tune.Restored:
			s.Restored++
		case tune.Already:
			s.Already++
		case tune.Gone:
			s.Gone++
		case tune.Changed:
			s.Changed = append(s.Changed, o)
		}
	}
}

// Empty says the replay found nothing to do.
func (s ReplaySummary) Empty() bool {
	return s.Restored+s.Already+s.Gone+len(s.Changed)+s.Qdiscs+len(s.QdiscsLeft)+s.Traces+s.Probes == 0
}

// String words the summary by outcome, leaving out what did not happen.
func (s ReplaySummary) String() string {
	var parts []string
	if s.Restored > 0 {
		parts = append(parts, "restored "+plural(s.Restored, "value"))
	}
	if s.Already > 0 {
		parts = append(parts, fmt.Sprintf("%d already back", s.Already))
	}
	if s.Gone > 0 {
		parts = append(parts, fmt.Sprintf("%d gone with its pod or device", s.Gone))
	}
	if len(s.Changed) > 0 {
		names := make([]string, len(s.Changed))
		for i, o := range s.Changed {
			names[i] = o.String()
		}
		parts = append(parts, fmt.Sprintf("%d changed by someone else since, left alone: %s", len(s.Changed), strings.Join(names, "; ")))
	}
	if s.Qdiscs > 0 {
		parts = append(parts, "put back the qdisc of "+plural(s.Qdiscs, "impaired device"))
	}
	if len(s.QdiscsLeft) > 0 {
		parts = append(parts, fmt.Sprintf("%s of an older agent's journal left alone, its namespace named by a PID that may be another process's now (check with tc qdisc show, remove a netem with handle cb1: by hand): %s",
			plural(len(s.QdiscsLeft), "impaired device"), strings.Join(s.QdiscsLeft, "; ")))
	}
	if s.Traces > 0 {
		parts = append(parts, "deleted "+plural(s.Traces, "trace table"))
	}
	if s.Probes > 0 {
		parts = append(parts, "deleted "+plural(s.Probes, "scratch namespace")+" of killed probes")
	}
	if s.Held && s.Empty() {
		return "a live session holds the node (it put back what dead sessions left when it took the node)"
	}
	if s.Empty() {
		return "nothing left by dead sessions"
	}
	return strings.Join(parts, "; ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// replay reverts the journals of dead sessions and deletes their trace
// tables and their probes' scratch namespaces. It holds the node's lock while it does (nodelock.go): a replay
// without it could hold a dead journal's own lock just when a session
// took the node, whose replay then skipped that journal, journaled the
// dead session's value as its old one and put it back at its end. A
// session holding the node has replayed every dead journal before its
// first change, and none can die in the directory while it holds the
// node, so a held node is skipped (Held), not waited for.
func (s *Server) replay() (ReplaySummary, error) {
	var sum ReplaySummary
	var err error
	if _, serr := os.Stat(s.cfg.JournalDir); serr == nil {
		var l *journal.Lock
		if l, err = journal.LockDir(s.cfg.JournalDir); err == nil {
			sum, err = Replay(s.cfg.JournalDir, s.fs)
			l.Release()
		} else if be := (*journal.BusyError)(nil); errors.As(err, &be) {
			sum.Held, err = true, nil
		}
		// LockDir makes the directory when a session's end removed it
		// meanwhile: leave none behind.
		removeEmptyDir(s.cfg.JournalDir)
	}
	m, terr := sweepTraces()
	sum.Traces = m
	// Not under the node's lock: a scratch namespace is no session's
	// change, and a live prober's is left to it.
	p, perr := s.scratch.sweep()
	sum.Probes = p
	return sum, errors.Join(err, terr, perr)
}

// Replay reverts the journals in dir whose session is dead and removes
// them; it says what it found and did with each value. A damaged journal
// (a line other than the last unreadable: journal.Dead) is undone as far
// as it can be read, as `cnibench cleanup` does on a host, and set aside
// as PATH.corrupt with an error naming its lines: kept as a journal, it
// failed every later replay for good.
//
// fs is the node's: a *nodeFS finds the pods a dead session's qdisc
// records name; another FS reverts the node's own devices only.
func Replay(dir string, fs tune.FS) (ReplaySummary, error) {
	nfs, ok := fs.(*nodeFS)
	if !ok {
		nfs = &nodeFS{base: fs}
	}
	stale, err := journal.Dead(dir, false)
	errs := []error{err}
	var sum ReplaySummary
	for _, r := range stale {
		if r.FromEarlierBoot() {
			// The node rebooted: the session's values and qdiscs
			// went with it; nothing to write back.
			errs = append(errs, r.Remove())
			continue
		}
		// What was written is counted even when another entry of the
		// journal failed (which keeps the journal for the next replay).
		outs, verr := tune.RevertReplayOutcomes(r, fs, false)
		sum.add(outs)
		qerr := replayQdiscs(r, nfs, &sum)
		if rerr := errors.Join(verr, qerr); rerr != nil {
			errs = append(errs, fmt.Errorf("journal %s: %w", r.Header.RunID, rerr))
			r.Release()
			continue
		}
		if len(r.Damaged) > 0 {
			errs = append(errs, setAside(r))
			continue
		}
		if rerr := r.Remove(); rerr != nil {
			errs = append(errs, rerr)
		}
	}
	return sum, errors.Join(errs...)
}

// setAside moves a damaged journal out of the way once what could be read
// of it is undone, and says what the operator must still check.
func setAside(r *journal.Replay) error {
	to, err := r.SetAside()
	if err != nil {
		return err
	}
	return fmt.Errorf("journal %s of session %s was damaged: what could be read of it is undone, and it is set aside as %s; "+
		"what %s recorded is unknown: check the node by hand, then remove %s", r.Path, r.Header.RunID, to, r.DamagedLines(), to)
}
