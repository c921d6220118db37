package journal

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultDir is where runs keep their journals.
const DefaultDir = "/run/cnibench"

// Ext is the file name extension of journals.
const Ext = ".journal"

// version is the journal format version written in the header.
const version = 1

// FS kinds of a Set.
const (
	FSSysfs = "sysfs"
	FSProc  = "proc"
)

// Object kinds.
const (
	KindNetns   = "netns"
	KindLink    = "link"
	KindProcess = "process"
	// KindDir is a directory of run state (Name is its path): the run's
	// StateDir, which holds what wiring cni's plugins keep per node.
	KindDir = "dir"
)

// Sentinel errors.
var (
	// ErrExists means a journal for the run ID is already present.
	ErrExists = errors.New("journal already exists")
	// ErrClosed means the journal was closed.
	ErrClosed = errors.New("journal closed")
	// ErrBadHeader means a journal's header does not describe the file
	// it is in (a crafted or corrupted journal); cleanup leaves it alone.
	ErrBadHeader = errors.New("bad journal header")
	// ErrUnknownSeq means MarkDone got a sequence number never recorded.
	ErrUnknownSeq = errors.New("unknown journal sequence number")
)

// PendingError is returned by Close when some changes were not undone: the
// file is kept so `cnibench cleanup` can undo them once this process exits.
type PendingError struct {
	Path    string
	Pending int
	// Cleanup is the command that undoes the changes, as printed; empty:
	// DefaultCleanup. A kube run's command names the cluster
	// (`cnibench cleanup --kube ...`): the local one never touches it.
	Cleanup string
}

// DefaultCleanup is the command that undoes a local run's changes.
const DefaultCleanup = "cnibench cleanup"

func (e *PendingError) Error() string {
	cleanup := cmp.Or(e.Cleanup, DefaultCleanup)
	return fmt.Sprintf("journal %s kept: %d change(s) not undone; run %s after this process exits", e.Path, e.Pending, cleanup)
}

// Header is the first line of a journal.
type Header struct {
	Version int    `json:"version"`
	RunID   string `json:"run"`
	PID     int    `json:"pid"`
	// PIDStart is field 22 of /proc/PID/stat (clock ticks after boot).
	PIDStart uint64    `json:"pidStart"`
	Started  time.Time `json:"started"`
	// Prefix is the name prefix of everything the run creates ("cnb-").
	Prefix string `json:"prefix"`
	// Boot is when the journal was opened on the boot clock (ns since
	// boot, CLOCK_BOOTTIME), and BootID the boot's
	// (/proc/sys/kernel/random/boot_id): replay order (newestFirst).
	Boot   int64  `json:"boot,omitempty"`
	BootID string `json:"bootId,omitempty"`
}

// Set records a value about to be written. Netns "" is the host. FS
// "sysfs": Path is relative to the namespace's sysfs root; FS "proc": Path
// is absolute (/proc/sys/...), as Netns sees it ("" the host).
type Set struct {
	Netns string `json:"netns"`
	FS    string `json:"fs"`
	Path  string `json:"path"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Object records something about to be created (a netns, link or
// directory) or just started (a process: its pid exists only once it
// runs; a process started in a namespace of the run is found by the
// namespace anyway).
type Object struct {
	Kind  string `json:"kind"`
	Netns string `json:"netns,omitempty"`
	Name  string `json:"name"`
	PID   int    `json:"pid,omitempty"`
	// Start is the process's start time (/proc/PID/stat field 22), so a
	// cleanup never kills a process that merely inherited the pid. Filled
	// in by RecordObject when zero.
	Start uint64 `json:"start,omitempty"`
}

// record is one line of the file; exactly one field group is set.
type record struct {
	Header   *Header `json:"header,omitempty"`
	Seq      int     `json:"seq,omitempty"`
	Set      *Set    `json:"set,omitempty"`
	Object   *Object `json:"object,omitempty"`
	Qdisc    *Qdisc  `json:"qdisc,omitempty"`
	Reverted int     `json:"reverted,omitempty"`
	Removed  int     `json:"removed,omitempty"`
}

// Journal is an open journal owned by this process. It is safe for
// concurrent use.
type Journal struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	header  Header
	seq     int
	pending map[int]*Object // seq -> the Object, or nil for a Set; not yet undone
	closed  bool
	// failed is the first failed append. It is sticky: after it the file
	// may end in a partial line, and a later append would glue onto that
	// line (making the journal unreadable) or reuse a sequence number, so
	// every later append fails with it and the run stops; what is on disk
	// up to the failure stays a valid journal for cleanup.
	failed error
	// out is where lines go (the file; tests inject a failing writer to
	// play a full file system).
	out appender
	// cleanup is the command a kept journal's error names (SetCleanup).
	cleanup string
}

// appender writes one journal line durably.
type appender interface {
	Write(b []byte) (int, error)
	Sync() error
}

// ErrFailed wraps the error of every append after one failed.
var ErrFailed = errors.New("journal failed earlier")

// Open creates the journal of a run in dir (created if missing) and writes
// its header. The run ID must be unique in dir. An existing dir that is
// not this user's alone is refused (CheckDir).
func Open(dir, runID, prefix string) (*Journal, error) {
	start, err := ProcessStart(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("open journal: own start time: %w", err)
	}
	return open(dir, Header{
		Version: version, RunID: runID, PID: os.Getpid(), PIDStart: start,
		Started: time.Now().UTC(), Prefix: prefix, Boot: bootClock(), BootID: bootID(),
	})
}

func open(dir string, h Header) (*Journal, error) {
	if err := CheckRunID(h.RunID); err != nil {
		return nil, err
	}
	if err := CheckPrefix(h.Prefix); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if err := CheckDir(dir); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	path := filepath.Join(dir, h.RunID+Ext)
	line, err := json.Marshal(record{Header: &h})
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPattern(h))
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("open journal: lock: %w", err)
	}
	if _, err := tmp.Write(append(line, '\n')); err == nil {
		err = tmp.Sync()
	}
	if err != nil {
		tmp.Close()
		return nil, fmt.Errorf("open journal: write header: %w", err)
	}
	// link, unlike rename, fails if the name exists: a second run with the
	// same ID never replaces a live journal.
	if err := os.Link(tmp.Name(), path); err != nil {
		tmp.Close()
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("open journal %s: %w", path, ErrExists)
		}
		return nil, fmt.Errorf("open journal: %w", err)
	}
	syncDir(dir)
	// The opened file keeps its offset at the end of the header: appends
	// go to the linked name.
	return &Journal{f: tmp, out: tmp, path: path, header: h, pending: map[int]*Object{}}, nil
}

// Path is the journal's file name.
func (j *Journal) Path() string { return j.path }

// Header returns the journal's header.
func (j *Journal) Header() Header { return j.header }

// RecordSet writes a Set before the value is changed and returns its
// sequence number for MarkDone.
func (j *Journal) RecordSet(s Set) (int, error) {
	if s.FS != FSSysfs && s.FS != FSProc {
		return 0, fmt.Errorf("journal set %s: unknown fs %q", s.Path, s.FS)
	}
	return j.add(record{Set: &s})
}

// RecordObject writes an Object before it is created (a process: right
// after it started) and returns its sequence number for MarkDone.
func (j *Journal) RecordObject(o Object) (int, error) {
	switch o.Kind {
	case KindNetns, KindLink, KindDir:
	case KindProcess:
		if o.PID <= 0 {
			return 0, fmt.Errorf("journal process %s: no pid", o.Name)
		}
		if o.Start == 0 {
			st, err := ProcessStart(o.PID)
			if err != nil {
				return 0, fmt.Errorf("journal process %s: %w", o.Name, err)
			}
			o.Start = st
		}
	default:
		return 0, fmt.Errorf("journal object %s: unknown kind %q", o.Name, o.Kind)
	}
	return j.add(record{Object: &o})
}

func (j *Journal) add(r record) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return 0, ErrClosed
	}
	r.Seq = j.seq + 1
	if err := j.write(r); err != nil {
		return 0, err
	}
	j.seq++
	j.pending[r.Seq] = r.Object
	return r.Seq, nil
}

// MarkDone records that entry seq was undone (a Set reverted, an Object
// removed). Marking an entry twice is a no-op.
func (j *Journal) MarkDone(seq int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	return j.markDone(seq)
}

func (j *Journal) markDone(seq int) error {
	obj, ok := j.pending[seq]
	if !ok {
		if seq >= 1 && seq <= j.seq {
			return nil
		}
		return fmt.Errorf("mark %d done in %s: %w", seq, j.path, ErrUnknownSeq)
	}
	r := record{Removed: seq}
	if obj == nil {
		r = record{Reverted: seq}
	}
	if err := j.write(r); err != nil {
		return err
	}
	delete(j.pending, seq)
	return nil
}

// MarkRemoved marks every pending Object of that kind, namespace and name
// done: for callers that delete objects by name and did not keep the
// sequence numbers (an engine deleting its namespaces). Nothing pending
// with that name is not an error (deleting twice is fine).
func (j *Journal) MarkRemoved(kind, netns, name string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	var seqs []int
	for seq, o := range j.pending {
		if o != nil && o.Kind == kind && o.Netns == netns && o.Name == name {
			seqs = append(seqs, seq)
		}
	}
	sort.Ints(seqs)
	for _, seq := range seqs {
		if err := j.markDone(seq); err != nil {
			return err
		}
	}
	return nil
}

// RecordNetns journals a network namespace before it is created; with
// RemovedNetns, RecordDir and RemovedDir it makes a Journal the local
// engine's Recorder.
func (j *Journal) RecordNetns(name string) error {
	_, err := j.RecordObject(Object{Kind: KindNetns, Name: name})
	return err
}

// RemovedNetns marks a namespace deleted.
func (j *Journal) RemovedNetns(name string) error { return j.MarkRemoved(KindNetns, "", name) }

// RecordDir journals a directory (a run's CNI state) before it is
// created, so cleanup removes it after a crash.
func (j *Journal) RecordDir(p string) error {
	_, err := j.RecordObject(Object{Kind: KindDir, Name: p})
	return err
}

// RemovedDir marks a directory removed.
func (j *Journal) RemovedDir(p string) error { return j.MarkRemoved(KindDir, "", p) }

// SetCleanup sets the command that undoes what the journal keeps, as
// Close's *PendingError names it: a kube run's is `cnibench cleanup
// --kube` with the run's cluster flags, since the default, `cnibench
// cleanup`, touches no cluster.
func (j *Journal) SetCleanup(command string) {
	j.mu.Lock()
	j.cleanup = command
	j.mu.Unlock()
}

// Pending is the number of entries not yet undone.
func (j *Journal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.pending)
}

// Close closes the journal. When every entry is undone it removes the file;
// otherwise the file stays and Close returns a *PendingError.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	if n := len(j.pending); n > 0 {
		j.f.Close()
		return &PendingError{Path: j.path, Pending: n, Cleanup: j.cleanup}
	}
	// Remove while still holding the lock, so no cleanup can pick up a
	// journal that is being retired.
	err := os.Remove(j.path)
	syncDir(filepath.Dir(j.path))
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close journal: %w", err)
	}
	return nil
}

// write appends one line and fsyncs it. A failed write leaves at most a
// truncated last line, which readers ignore; it also fails the journal for
// good (see Journal.failed), so the truncated line stays the last one and
// no sequence number is written twice.
func (j *Journal) write(r record) error {
	if j.failed != nil {
		return fmt.Errorf("journal %s: %w: %w", j.path, ErrFailed, j.failed)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, err := j.out.Write(append(line, '\n')); err != nil {
		j.failed = err
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.out.Sync(); err != nil {
		// The line may or may not be on disk: either way its sequence
		// number must never be used again.
		j.failed = err
		return fmt.Errorf("journal %s: fsync: %w", j.path, err)
	}
	return nil
}

// Err returns the error that failed the journal, or nil.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed
}

// syncDir makes a created or removed name durable; errors are ignored as
// the file's own fsync already holds the data (and /run is tmpfs).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
