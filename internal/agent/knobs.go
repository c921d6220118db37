package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
)

// Knob writes of a session: each first old value journaled before the
// write, Revert at the end, Replay of a dead session's journal.

// openJournal opens a node journal in dir. Another session that ends
// may remove the (then empty) directory between the journal package's
// MkdirAll and its create; that shows as a missing directory, and one
// more attempt re-creates it.
func openJournal(dir, id string) (*journal.Journal, error) {
	var err error
	for range 3 {
		var j *journal.Journal
		if j, err = journal.Open(dir, id, "cnb-"); err == nil {
			return j, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	return nil, err
}

// removeEmptyDir removes the journal directory if it holds nothing, and
// then DefaultJournalDir when dir was the node's directory under it, so
// a clean run leaves no empty /run/cnibench/agent/NODE behind. rmdir
// fails on a directory that is not empty, which is what keeps the
// journals of other (live or dead) sessions: that error is expected.
func removeEmptyDir(dir string) {
	if dir == "" || os.Remove(dir) != nil {
		return
	}
	if filepath.Dir(filepath.Clean(dir)) == DefaultJournalDir {
		_ = os.Remove(DefaultJournalDir)
	}
}

func key(ns, fs, p string) string { return ns + "|" + fs + "|" + p }

// write journals the knob's first old value, then writes. Writing the old
// value back closes the entry.
func (s *Server) write(ns, fsKind, p, value string) error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	// The node's lock before the old value is read: read while another
	// session held the node, it could be that session's (nodelock.go).
	if err := s.openJournalLocked(); err != nil {
		return err
	}
	k := key(ns, fsKind, p)
	if ps, ok := s.pending[k]; ok {
		if tune.Equal(p, ps.set.New, value) {
			return s.fs.Write(ns, fsKind, p, value)
		}
		if tune.Equal(p, ps.set.Old, value) {
			if err := tune.WriteBack(s.fs, ns, fsKind, p, value); err != nil {
				return errors.Join(err, s.settle(ps.set, ps))
			}
			delete(s.pending, k)
			return s.j.MarkDone(ps.seq)
		}
		// A new value for a knob already changed: journal it (same Old,
		// new New) before writing, so a replay's compare-before-swap
		// recognises the value as the session's; the earlier entry is
		// closed only after the write, so a crash in between leaves one
		// of the two matching what the knob holds.
		set := journal.Set{Netns: ns, FS: fsKind, Path: p, Old: ps.set.Old, New: value}
		seq, err := s.j.RecordSet(set)
		if err != nil {
			return fmt.Errorf("node journal: %w", err)
		}
		if err := s.fs.Write(ns, fsKind, p, value); err != nil {
			return errors.Join(err, s.settle(set, ps, pendingSet{seq: seq, set: set}))
		}
		s.pending[k] = pendingSet{seq: seq, set: set}
		return s.j.MarkDone(ps.seq)
	}
	old, err := s.fs.Read(ns, fsKind, p)
	if err != nil {
		return fmt.Errorf("read the old value of %s: %w", p, err)
	}
	if tune.Equal(p, old, value) {
		return nil
	}
	set := journal.Set{Netns: ns, FS: fsKind, Path: p, Old: old, New: value}
	seq, err := s.j.RecordSet(set)
	if err != nil {
		return fmt.Errorf("node journal: %w", err)
	}
	if err := s.fs.Write(ns, fsKind, p, value); err != nil {
		return errors.Join(err, s.settle(set, pendingSet{seq: seq, set: set}))
	}
	s.pending[k] = pendingSet{seq: seq, set: set}
	return nil
}

// settle decides, after a write of want.New to a knob failed, which of
// the knob's open journal entries (open, the one Revert compares with
// first) says what the knob holds now, and closes the others. A failed
// write may still have changed the knob: the kernel stores a multi-value
// sysctl (tcp_rmem) field by field up to the first value it refuses. So
// the knob is read back: holding its old value, every entry closes;
// holding an entry's value, that one stays; holding a third value, that
// value is journaled as the session's too (same Old), so that Revert and
// a replay put the old one back instead of leaving it as someone else's.
// Unreadable, every entry stays open for a replay to sort out.
func (s *Server) settle(want journal.Set, open ...pendingSet) error {
	k := key(want.Netns, want.FS, want.Path)
	got, err := s.fs.Read(want.Netns, want.FS, want.Path)
	if err != nil {
		s.pending[k] = open[0]
		return nil
	}
	keep := -1
	for i, ps := range open {
		if tune.Equal(want.Path, got, ps.set.New) {
			keep = i
		}
	}
	var errs []error
	switch {
	case keep >= 0:
		s.pending[k] = open[keep]
	case tune.Equal(want.Path, got, want.Old):
		delete(s.pending, k)
	default:
		set := want
		set.New = got
		seq, err := s.j.RecordSet(set)
		if err != nil {
			s.pending[k] = open[0]
			return fmt.Errorf("node journal: %w", err)
		}
		s.pending[k] = pendingSet{seq: seq, set: set}
	}
	for i, ps := range open {
		if i != keep {
			errs = append(errs, s.j.MarkDone(ps.seq))
		}
	}
	return errors.Join(errs...)
}

// Revert puts back every qdisc the session still impairs, then writes
// back every value it still has changed, newest first, and counts what
// it put back. A value whose namespace is gone, or that holds its old
// value already, is done without a write; one someone else changed is
// left alone and reported: neither is counted.
func (s *Server) Revert() (int, error) {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	n, qerr := s.revertQdiscsLocked()
	errs := []error{qerr, s.stopTraceLocked()}
	var list []pendingSet
	for _, ps := range s.pending {
		list = append(list, ps)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].seq > list[j].seq })
	for _, ps := range list {
		st := ps.set
		// Compare before swap: only a value that still holds the
		// session's last write is put back; another writer's is left
		// alone (and reported), as cleanup does.
		now, err := s.fs.Read(st.Netns, st.FS, st.Path)
		wrote := false
		switch {
		case err == nil && !tune.Equal(st.Path, now, st.New) && !tune.Equal(st.Path, now, st.Old):
			errs = append(errs, fmt.Errorf("revert %s of %s: changed by someone else since (found %q); left alone", st.Path, where(st.Netns), now))
		case err == nil && !tune.Equal(st.Path, now, st.Old):
			err = tune.WriteBack(s.fs, st.Netns, st.FS, st.Path, st.Old)
			wrote = err == nil
		}
		if err != nil && !errors.Is(err, tune.ErrGone) {
			errs = append(errs, fmt.Errorf("revert %s of %s to %q: %w", st.Path, where(st.Netns), st.Old, err))
			continue
		}
		if err := s.j.MarkDone(ps.seq); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.pending, key(st.Netns, st.FS, st.Path))
		if wrote {
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (s *Server) closeJournal() error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if s.j == nil {
		return nil
	}
	err := s.j.Close()
	s.j = nil
	return err
}
