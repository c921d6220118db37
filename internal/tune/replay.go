package tune

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cnibench/cnibench/internal/journal"
)

// Outcome says what RevertReplay did with one journaled value.
type Outcome struct {
	Set journal.Set
	// Seq is the journal entry's.
	Seq int
	// Action is one of the Outcome constants.
	Action string
	// Now is the value found before acting (empty when gone).
	Now string
}

// Outcome actions.
const (
	Restored = "restored"      // the new value was there; the old one is back
	Already  = "already"       // the old value was there (crash before the write, or reverted but not marked)
	Gone     = "gone"          // the namespace or device no longer exists
	Changed  = "changed-since" // someone else changed it after us; left alone
	Planned  = "would-restore" // dry run: would write the old value
)

func (o Outcome) String() string {
	ns := o.Set.Netns
	if ns == "" {
		ns = "host"
	}
	return fmt.Sprintf("%s %s:%s %s (old %q, ours %q, found %q)", ns, o.Set.FS, o.Set.Path, o.Action, o.Set.Old, o.Set.New, o.Now)
}

// RevertReplay undoes the Set entries of a dead run's journal that were
// not reverted, newest first. See RevertReplayOutcomes.
func RevertReplay(r *journal.Replay, fs FS) error {
	_, err := RevertReplayOutcomes(r, fs, false)
	return err
}

// RevertReplayOutcomes undoes the pending Set entries of r, newest first,
// and says what it did with each. A value is restored only if it still
// holds what the run wrote: if it holds the old value there is nothing to
// do, and if it holds a third value someone changed it after the run died,
// and overwriting that would undo their change rather than ours. With
// dryRun nothing is written: the old value a would-restore would write is
// what the older entries of the path then find (DryRunFS; pass one to
// carry it on to older journals), as they would in the real replay. A
// journal of an earlier boot has nothing to undo (FromEarlierBoot).
func RevertReplayOutcomes(r *journal.Replay, fs FS, dryRun bool) ([]Outcome, error) {
	if r.FromEarlierBoot() {
		return nil, nil // its values went with the reboot
	}
	if dryRun {
		fs = DryRun(fs)
	}
	var out []Outcome
	var errs []error
	pending := r.Pending()
	for i := len(pending) - 1; i >= 0; i-- {
		s := pending[i].Set
		if s == nil {
			continue
		}
		o := Outcome{Set: *s, Seq: pending[i].Seq}
		now, err := fs.Read(s.Netns, s.FS, s.Path)
		switch {
		case errors.Is(err, ErrGone):
			o.Action = Gone
		case err != nil:
			errs = append(errs, fmt.Errorf("revert %s: read: %w", o.Set.Path, err))
			continue
		case Equal(s.Path, now, s.Old):
			o.Action, o.Now = Already, now
		case !runWrote(pending, s, now):
			o.Action, o.Now = Changed, now
		case dryRun:
			o.Action, o.Now = Planned, now
			_ = fs.Write(s.Netns, s.FS, s.Path, s.Old) // DryRunFS: remembered, not written
		default:
			o.Now = now
			err := WriteBack(fs, s.Netns, s.FS, s.Path, s.Old)
			if errors.Is(err, ErrGone) {
				o.Action = Gone
				break
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("revert %s to %q: %w", s.Path, s.Old, err))
				continue
			}
			o.Action = Restored
		}
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// runWrote says whether now, found at s's knob, is what the run left
// there: s's value, or that of another of its pending entries for the
// knob with the same old value. The agent journals a knob's second value
// (X->V2) before writing it over the first (X->V1); killed in between,
// the knob holds V1: the newer entry finds the run's own value, not
// someone else's, and putting X back is what the older would do.
func runWrote(pending []journal.Entry, s *journal.Set, now string) bool {
	if Equal(s.Path, now, s.New) {
		return true
	}
	for _, e := range pending {
		o := e.Set
		if o != nil && o.Netns == s.Netns && o.FS == s.FS && o.Path == s.Path &&
			Equal(s.Path, o.Old, s.Old) && Equal(s.Path, now, o.New) {
			return true
		}
	}
	return false
}

// DryRunFS is what a dry run's replay reads: the values of FS, but where
// the replay would have written a value back, that value. A half-made
// write pair journals one path twice (X->N, then X->P, with P there):
// the newer entry restores X, and the older then finds X, "already",
// not P, "changed since". Likewise across journals, newest first. It
// never writes to FS.
type DryRunFS struct {
	FS
	mu   sync.Mutex
	vals map[string]string
}

// DryRun is fs seen by a dry run (fs itself when it is one already).
func DryRun(fs FS) *DryRunFS {
	if d, ok := fs.(*DryRunFS); ok {
		return d
	}
	return &DryRunFS{FS: fs, vals: map[string]string{}}
}

func dryKey(ns, kind, p string) string { return ns + "|" + kind + "|" + p }

// Read is the value the replay would have written, else FS's.
func (d *DryRunFS) Read(ns, kind, p string) (string, error) {
	d.mu.Lock()
	v, ok := d.vals[dryKey(ns, kind, p)]
	d.mu.Unlock()
	if ok {
		return v, nil
	}
	return d.FS.Read(ns, kind, p)
}

// Write remembers value as the path's, writing nothing.
func (d *DryRunFS) Write(ns, kind, p, value string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.vals[dryKey(ns, kind, p)] = value
	return nil
}
