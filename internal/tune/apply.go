package tune

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/study"
)

// Applied is a tuning in effect; Revert undoes it.
type Applied struct {
	mu   sync.Mutex
	j    *journal.Journal
	fs   FS
	done []write // in the order written
	// seen is every planned write with the value found before it, the
	// ones left alone (already holding the value) too: Settings.
	seen []write
}

// write is one journaled write and whether it has been undone. Value is
// what the journal entry says the run left there: the value planned, or
// what a failed or mismatched write left instead (apply's read-back).
type write struct {
	Change
	old      string
	seq      int
	reverted bool
}

// Apply makes the writes of Plan(t, tgt): for each it reads the current
// value, journals old and new (on disk before the write), writes, and reads
// back to check. Values that already hold what the tuning wants are left
// alone. On error everything written so far is reverted and the error is
// returned with the revert's, if any, as an *UndoError.
func Apply(j *journal.Journal, fs FS, t study.Tuning, tgt Target) (*Applied, error) {
	if j == nil {
		return nil, errors.New("apply tuning: a journal is required to undo changes after a crash")
	}
	plan, err := Plan(t, tgt, fs)
	if err != nil {
		return nil, err
	}
	a := &Applied{j: j, fs: fs}
	for _, c := range plan {
		if err := a.apply(c); err != nil {
			err = fmt.Errorf("apply tuning %s: %w", t.Name, err)
			if rerr := a.Revert(); rerr != nil {
				err = errors.Join(err, &UndoError{rerr})
			}
			return nil, err
		}
	}
	return a, nil
}

func (a *Applied) apply(c Change) error {
	old, err := a.fs.Read(c.Netns, c.FS, c.Path)
	if err != nil {
		return fmt.Errorf("read %s: %w", c, err)
	}
	a.mu.Lock()
	a.seen = append(a.seen, write{Change: c, old: old})
	a.mu.Unlock()
	if Equal(c.Path, old, c.Value) {
		return nil
	}
	if err := a.record(c, old); err != nil {
		return err
	}
	// From here the write may have happened, or half: a failed write can
	// still leave the kernel changed. A multi-value sysctl (tcp_rmem,
	// tcp_mem) is stored value by value as the kernel parses it, up to
	// the first it refuses (__do_proc_dointvec, proc_doulongvec_minmax),
	// so "8192 262144 0" over "4096 131072 6291456" leaves "8192 262144
	// 6291456": neither old nor new. Whatever the kernel holds after a
	// failed or mismatched write is journaled as the run's too (ours).
	werr := a.fs.Write(c.Netns, c.FS, c.Path, c.Value)
	got, rerr := a.fs.Read(c.Netns, c.FS, c.Path)
	err = nil
	switch {
	case werr != nil:
		err = fmt.Errorf("write %s: %w", c, werr)
	case rerr != nil:
		return fmt.Errorf("read back %s: %w", c, rerr)
	case !Equal(c.Path, got, c.Value):
		err = &MismatchError{Change: c, Got: got}
	}
	if rerr == nil && !Equal(c.Path, got, c.Value) && !Equal(c.Path, got, old) {
		err = errors.Join(err, a.ours(c, old, got))
	}
	return err
}

// record journals a write of c over old before it is made, and keeps it
// for Revert.
func (a *Applied) record(c Change, old string) error {
	seq, err := a.j.RecordSet(journal.Set{Netns: c.Netns, FS: c.FS, Path: c.Path, Old: old, New: c.Value})
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.done = append(a.done, write{Change: c, old: old, seq: seq})
	a.mu.Unlock()
	return nil
}

// ours journals got, a value the kernel kept after a write of c over old
// that failed or read back otherwise, as a further entry of the run
// (same old): Revert (newest first) and a cleanup after a crash then
// compare with it, find it theirs and put old back, where they took it
// for someone else's change and left it.
func (a *Applied) ours(c Change, old, got string) error {
	kept := c
	kept.Value = got
	return a.record(kept, old)
}

// Revert writes every replaced value back, newest first, and marks each
// done in the journal. A value whose namespace or device is gone counts as
// reverted. It tries every value even when some fail and returns the
// failures; calling it again retries only those. Safe on a nil *Applied
// (a baseline or failed Apply).
func (a *Applied) Revert() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for i := len(a.done) - 1; i >= 0; i-- {
		w := &a.done[i]
		if w.reverted {
			continue
		}
		// Compare before swap: only a value that still holds what this
		// run wrote is ours to put back (the host lock keeps other runs
		// away; anyone else's later change is left alone and reported).
		now, err := a.fs.Read(w.Netns, w.FS, w.Path)
		switch {
		case err == nil && !a.oursLocked(w, now) && !Equal(w.Path, now, w.old):
			errs = append(errs, fmt.Errorf("revert %s: changed by someone else since (found %q); left alone", w.Change, now))
		case err == nil && !Equal(w.Path, now, w.old):
			err = WriteBack(a.fs, w.Netns, w.FS, w.Path, w.old)
		}
		if err != nil && !errors.Is(err, ErrGone) {
			errs = append(errs, fmt.Errorf("revert %s to %q: %w", w.Change, w.old, err))
			continue
		}
		if err := a.j.MarkDone(w.seq); err != nil {
			errs = append(errs, err)
			continue
		}
		w.reverted = true
	}
	return errors.Join(errs...)
}

// oursLocked says whether now, found at w's knob, is what this run left
// there: w's value, or that of another of its entries for the knob not
// yet reverted with the same old value. A write that failed half-way
// journals the value it left beside the one planned (X->N, then X->P);
// when putting X back over P fails for the newer entry, the older finds
// P, the run's own, not someone else's, and putting X back is still its
// to do.
func (a *Applied) oursLocked(w *write, now string) bool {
	if Equal(w.Path, now, w.Value) {
		return true
	}
	for _, o := range a.done {
		if !o.reverted && o.Netns == w.Netns && o.FS == w.FS && o.Path == w.Path &&
			Equal(w.Path, o.old, w.old) && Equal(w.Path, now, o.Value) {
			return true
		}
	}
	return false
}

// UndoError is a failed undo of a partial tuning: values the tuning wrote
// are still in place (the journal still holds them for cleanup).
type UndoError struct{ Err error }

func (e *UndoError) Error() string { return "undo partial tuning: " + e.Err.Error() }
func (e *UndoError) Unwrap() error { return e.Err }
