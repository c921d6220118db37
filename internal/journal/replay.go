package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoHeader means a file does not start with a journal header.
var ErrNoHeader = errors.New("journal has no header")

// Entry is one recorded change, with whether it was undone.
type Entry struct {
	Seq    int
	Set    *Set
	Object *Object
	Qdisc  *Qdisc
	Done   bool
}

// Replay is a journal read back from disk.
type Replay struct {
	Path   string
	Header Header
	// Entries are in the order they were recorded; undo in reverse.
	Entries []Entry
	// Truncated reports that the last line was cut short by a crash and
	// ignored: a record of a change not yet made (records are written
	// before the change), or an undo mark of a change already undone
	// (marks are written after it), whose entry is then still pending
	// here, and undoing it again finds it done.
	Truncated bool
	// Damaged are lines other than a cut last line that cannot be read
	// (ReadSalvage only; ReadReplay fails on the first instead). What
	// they recorded is unknown.
	Damaged []Damage

	lock *os.File // held flock when returned by Stale
}

// Pending returns the entries not undone, in recorded order.
func (r *Replay) Pending() []Entry {
	var out []Entry
	for _, e := range r.Entries {
		if !e.Done {
			out = append(out, e)
		}
	}
	return out
}

// Remove deletes the journal file once its changes are undone, and
// releases the lock Stale took.
func (r *Replay) Remove() error {
	err := os.Remove(r.Path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	syncDir(filepath.Dir(r.Path))
	r.Release()
	if err != nil {
		return fmt.Errorf("remove journal: %w", err)
	}
	return nil
}

// Release drops the lock Stale took, leaving the file in place (for a
// later cleanup when undoing failed). Safe to call more than once.
func (r *Replay) Release() {
	if r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
}

// ReadReplay reads a journal file. A truncated or garbled last line is
// ignored (Truncated is set); a garbled line before it is an error.
func ReadReplay(path string) (*Replay, error) { return read(path, false) }

// read reads a journal file; salvage lists unreadable lines before the
// last in Replay.Damaged instead of failing (ReadSalvage).
func read(path string, salvage bool) (*Replay, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	r, err := parse(b, salvage)
	if err == nil {
		err = checkHeader(r.Header, filepath.Base(path))
	}
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", path, err)
	}
	r.Path = path
	return r, nil
}

// checkHeader validates a header read from the file named base. Cleanup
// removes what the header names (namespaces PREFIX<run>-*, the state
// directory of the run), so a header is trusted only when it could have
// been written by Open for this very file.
func checkHeader(h Header, base string) error {
	if h.Version != version {
		return fmt.Errorf("%w: version %d, want %d", ErrBadHeader, h.Version, version)
	}
	if err := CheckRunID(h.RunID); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if base != h.RunID+Ext {
		return fmt.Errorf("%w: run %q in file %s", ErrBadHeader, h.RunID, base)
	}
	if err := CheckPrefix(h.Prefix); err != nil {
		return fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if h.PID <= 0 {
		return fmt.Errorf("%w: pid %d", ErrBadHeader, h.PID)
	}
	return nil
}

// parse reads a journal's lines. A line other than the header and a cut
// last line that cannot be read fails it, or, with salvage, is listed in
// Damaged and the rest is read on.
func parse(b []byte, salvage bool) (*Replay, error) {
	lines := bytes.Split(b, []byte("\n"))
	// A complete file ends with '\n', leaving an empty last element.
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, ErrNoHeader
	}
	r := &Replay{}
	index := map[int]int{}
	for i, line := range lines {
		err := r.line(i, line, len(lines), index)
		if err == nil {
			continue
		}
		if i == 0 || !salvage {
			return nil, err
		}
		var le *LineError
		if errors.As(err, &le) {
			err = le.Err // the line is Damage's own
		}
		r.Damaged = append(r.Damaged, Damage{Line: i + 1, Text: string(line), Err: err})
	}
	return r, nil
}

// line reads line i (0-based) of n into r.
func (r *Replay) line(i int, line []byte, n int, index map[int]int) error {
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil {
		if i == n-1 && i > 0 {
			r.Truncated = true
			return nil
		}
		return &LineError{Line: i + 1, Err: err}
	}
	if i == 0 {
		if rec.Header == nil {
			return ErrNoHeader
		}
		r.Header = *rec.Header
		return nil
	}
	switch {
	case rec.Set != nil || rec.Object != nil || rec.Qdisc != nil:
		if _, dup := index[rec.Seq]; dup || rec.Seq <= 0 {
			return &LineError{Line: i + 1, Err: fmt.Errorf("bad sequence number %d", rec.Seq)}
		}
		index[rec.Seq] = len(r.Entries)
		r.Entries = append(r.Entries, Entry{Seq: rec.Seq, Set: rec.Set, Object: rec.Object, Qdisc: rec.Qdisc})
	case rec.Reverted != 0 || rec.Removed != 0:
		seq := rec.Reverted + rec.Removed
		k, ok := index[seq]
		if !ok {
			return &LineError{Line: i + 1, Err: fmt.Errorf("undo of unknown entry %d", seq)}
		}
		r.Entries[k].Done = true
	default:
		return &LineError{Line: i + 1, Err: errors.New("empty record")}
	}
	return nil
}

// Stale returns the journals in dir whose owner is dead, newest first by
// the start time in their header: the pid is gone or now names a process
// that started at another time, and nobody holds the file's lock. Each
// returned Replay holds the lock, so concurrent cleanups do not replay it
// twice; call Remove or Release. Unreadable journals (a damaged line
// too) are skipped and reported in the error; the returned list is valid
// even when the error is not nil. A missing dir has no journals.
func Stale(dir string) ([]*Replay, error) { return scan(dir, false, false) }

// Dead is Stale for `cnibench cleanup`: a dead run's journal with damaged
// lines (Replay.Damaged) is returned too, read as far as it can be, so
// its readable changes can be undone and the file set aside (SetAside);
// one whose header cannot be read or trusted is still only reported.
// With peek (a dry run), each journal's lock is only tested, taken and
// dropped at once, and the returned Replays hold none: a dry run must not
// look, to a run starting (BeginRun) or a cleanup (Live, Stale), like a
// live owner holding a dead run's journal.
func Dead(dir string, peek bool) ([]*Replay, error) { return scan(dir, true, peek) }

func scan(dir string, salvage, peek bool) ([]*Replay, error) {
	paths, err := list(dir)
	if err != nil {
		return nil, err
	}
	read := ReadReplay
	if salvage {
		read = ReadSalvage
	}
	var out []*Replay
	var errs []error
	for _, p := range paths {
		r, err := read(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // retired by its owner meanwhile
		}
		if err != nil {
			errs = append(errs, untrusted(salvage, p, err))
			continue
		}
		if ProcessAlive(r.Header.PID, r.Header.PIDStart) {
			continue
		}
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("lock journal: %w", err))
			continue
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			// Held: an owner in another pid namespace, or another cleanup.
			f.Close()
			continue
		}
		if peek {
			f.Close()
			f = nil
		}
		// Re-read under the lock: a previous cleanup may have removed it
		// or the owner may have appended before dying.
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			closeFile(f)
			continue
		}
		if r, err = read(p); err != nil {
			closeFile(f)
			errs = append(errs, untrusted(salvage, p, err))
			continue
		}
		r.lock = f
		out = append(out, r)
	}
	newestFirst(out)
	return out, errors.Join(errs...)
}

// untrusted is the error of a journal that cannot be read: for cleanup
// (Dead), one that says what the operator can do about it.
func untrusted(salvage bool, path string, err error) error {
	if salvage {
		return Untrusted{Path: path, Err: err}
	}
	return err
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// Live returns the run IDs of journals in dir whose owner is alive (or
// whose lock is held). Unreadable journals count as live: nothing of
// theirs should be swept on a guess.
func Live(dir string) (map[string]bool, error) {
	paths, err := list(dir)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), Ext)
		r, err := ReadReplay(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil || ProcessAlive(r.Header.PID, r.Header.PIDStart) || locked(p) {
			live[id] = true
		}
	}
	return live, nil
}

// locked reports whether someone holds the flock of path.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil
}

// list returns the journal files of dir, sorted; temporary files (starting
// with '.') are not journals yet.
func list(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list journals: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, Ext) && !strings.HasPrefix(n, ".") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}
