package journal

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCraftedHeader: a header that does not describe its own file is not
// trusted: its run or prefix would widen what cleanup deletes.
func TestCraftedHeader(t *testing.T) {
	good := Header{Version: version, RunID: "r1", PID: 1, PIDStart: 1, Started: time.Now(), Prefix: "cnb-"}
	for name, tt := range map[string]struct {
		file string
		mod  func(h *Header)
	}{
		"run of another file": {"r1" + Ext, func(h *Header) { h.RunID = "r2" }},
		"run with a dash":     {"r1" + Ext, func(h *Header) { h.RunID = "r1-x" }},
		"empty run":           {"x" + Ext, func(h *Header) { h.RunID = "" }},
		"traversal run":       {"r1" + Ext, func(h *Header) { h.RunID = "../../etc" }},
		"empty prefix":        {"r1" + Ext, func(h *Header) { h.Prefix = "" }},
		"short prefix":        {"r1" + Ext, func(h *Header) { h.Prefix = "c" }},
		"prefix no dash":      {"r1" + Ext, func(h *Header) { h.Prefix = "cnb" }},
		"prefix with slash":   {"r1" + Ext, func(h *Header) { h.Prefix = "cnb/-" }},
		"prefix upper":        {"r1" + Ext, func(h *Header) { h.Prefix = "Cnb-" }},
		"version":             {"r1" + Ext, func(h *Header) { h.Version = 7 }},
		"pid":                 {"r1" + Ext, func(h *Header) { h.PID = 0 }},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			h := good
			tt.mod(&h)
			b, _ := json.Marshal(record{Header: &h})
			p := filepath.Join(dir, tt.file)
			if err := os.WriteFile(p, append(b, '\n'), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadReplay(p); !errors.Is(err, ErrBadHeader) {
				t.Fatalf("ReadReplay = %v, want ErrBadHeader", err)
			}
			st, err := Stale(dir)
			if len(st) != 0 || !errors.Is(err, ErrBadHeader) {
				t.Fatalf("Stale = %d journals, %v", len(st), err)
			}
			if live, _ := Live(dir); len(live) != 1 {
				t.Fatalf("crafted journal not kept as live (never swept on a guess): %v", live)
			}
		})
	}
	// The good header reads back.
	dir := t.TempDir()
	b, _ := json.Marshal(record{Header: &good})
	p := filepath.Join(dir, "r1"+Ext)
	os.WriteFile(p, append(b, '\n'), 0o600)
	if _, err := ReadReplay(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "r9", "x"); !errors.Is(err, ErrBadPrefix) {
		t.Fatalf("Open with prefix x = %v", err)
	}
}

// fullFS plays a file system that fills up: writes succeed until n bytes
// have been written, then the write that crosses the limit writes what
// fits and fails with ENOSPC, as write(2) does; then space is freed, so
// only the journal's own stickiness can stop a later append from gluing
// onto the partial line.
type fullFS struct {
	f     *os.File
	left  int
	syncs int
}

func (w *fullFS) Write(b []byte) (int, error) {
	if len(b) <= w.left {
		w.left -= len(b)
		return w.f.Write(b)
	}
	n, _ := w.f.Write(b[:w.left])
	w.left = 1 << 20
	return n, syscall.ENOSPC
}

func (w *fullFS) Sync() error { w.syncs++; return w.f.Sync() }

// syncFails plays fsync failing (EIO) after two lines were written.
type syncFails struct {
	f  *os.File
	ok int
}

func (w *syncFails) Write(b []byte) (int, error) { return w.f.Write(b) }
func (w *syncFails) Sync() error {
	if w.ok == 0 {
		return syscall.EIO
	}
	w.ok--
	return w.f.Sync()
}

func TestFailedAppendIsSticky(t *testing.T) {
	for name, inject := range map[string]func(f *os.File) appender{
		"ENOSPC mid-line": func(f *os.File) appender { return &fullFS{f: f, left: 150} },
		"fsync EIO":       func(f *os.File) appender { return &syncFails{f: f, ok: 2} },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			j := openAs(t, dir, "full", deadPID(t), 1)
			j.out = inject(j.f)
			var errs []error
			var seqs []int
			for i := 0; i < 5; i++ {
				seq, err := j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/net/core/x", Old: "0", New: "1"})
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if len(errs) > 0 {
					t.Fatalf("append %d succeeded after a failure (seq %d)", i, seq)
				}
				seqs = append(seqs, seq)
			}
			if len(errs) == 0 {
				t.Fatal("no append failed")
			}
			for _, err := range errs[1:] {
				if !errors.Is(err, ErrFailed) {
					t.Errorf("later append error %v, want ErrFailed", err)
				}
			}
			if j.Err() == nil {
				t.Error("Err() nil after failure")
			}
			if len(seqs) > 0 {
				if err := j.MarkDone(seqs[0]); !errors.Is(err, ErrFailed) {
					t.Errorf("MarkDone after failure = %v", err)
				}
			}
			var pe *PendingError
			if err := j.Close(); !errors.As(err, &pe) {
				t.Fatalf("Close = %v, want the journal kept", err)
			}
			// What is on disk is a readable journal without duplicate
			// sequence numbers, holding every change that may have been
			// made (the appends that returned a sequence number).
			r, err := ReadReplay(filepath.Join(dir, "full"+Ext))
			if err != nil {
				t.Fatalf("journal unreadable after a failed append: %v", err)
			}
			if len(r.Entries) < len(seqs) {
				t.Fatalf("replay has %d entries, %d were acknowledged", len(r.Entries), len(seqs))
			}
			seen := map[int]bool{}
			for _, e := range r.Entries {
				if seen[e.Seq] {
					t.Fatalf("duplicate seq %d", e.Seq)
				}
				seen[e.Seq] = true
			}
		})
	}
}

// TestStaleNewestFirst: replay order is by start time, not file name.
func TestStaleNewestFirst(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	for _, tt := range []struct {
		id  string
		age time.Duration
	}{{"b", 2 * time.Hour}, {"a", 1 * time.Hour}, {"c", 3 * time.Hour}} {
		j, err := open(dir, Header{Version: version, RunID: tt.id, PID: deadPID(t), PIDStart: 1, Started: now.Add(-tt.age), Prefix: "cnb-"})
		if err != nil {
			t.Fatal(err)
		}
		abandon(j)
	}
	got := staleOrder(t, dir)
	if strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("order %v, want newest first a,b,c", got)
	}
}

// lockHelperEnv makes the test binary hold the host lock of a directory
// (as a run does) until its stdin closes.
const lockHelperEnv = "CNIBENCH_JOURNAL_LOCK_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(leaderExitHelperEnv) != "" {
		leaderExit()
	}
	if dir := os.Getenv(lockHelperEnv); dir != "" {
		l, err := BeginRun(dir, "")
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		if path := os.Getenv(machineLockHelperEnv); path != "" {
			h, err := LockHost(path)
			if err != nil {
				os.Stdout.WriteString("error " + err.Error() + "\n")
				os.Exit(1)
			}
			l = l.With(h)
		}
		j, err := Open(dir, "holder", "cnb-")
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("ready\n")
		b := make([]byte, 1)
		os.Stdin.Read(b)
		j.Close()
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestHostLock(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 200)
	n, _ := out.Read(buf)
	if string(buf[:n]) != "ready\n" {
		t.Fatalf("helper: %q", buf[:n])
	}
	// A second run and a cleanup are refused at once, naming the holder.
	for _, take := range []func(string) (*Lock, error){func(d string) (*Lock, error) { return BeginRun(d, "") }, LockDir} {
		_, err := take(dir)
		var be *BusyError
		if !errors.As(err, &be) {
			t.Fatalf("lock while held = %v, want BusyError", err)
		}
		if be.PID != cmd.Process.Pid || be.RunID != "holder" || !strings.Contains(err.Error(), "run holder (pid ") {
			t.Fatalf("BusyError %+v: %v", be, err)
		}
	}
	stdin.Close()
	cmd.Wait()
	l, err := BeginRun(dir, "")
	if err != nil {
		t.Fatalf("lock after the holder ended: %v", err)
	}
	l.Release()
	l.Release() // twice is fine

	// A dead run's journal refuses a run until cleanup, naming it.
	abandon(openAs(t, dir, "dead", deadPID(t), 1))
	_, err = BeginRun(dir, "")
	var se *StaleError
	if !errors.As(err, &se) || len(se.Journals) != 1 || !strings.Contains(err.Error(), "dead"+Ext) || !strings.Contains(err.Error(), "cnibench cleanup") {
		t.Fatalf("BeginRun with a stale journal = %v", err)
	}
	// The refusal released the lock.
	l, err = LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}

// staleOrder is the run IDs of dir's stale journals in replay order,
// each released.
func staleOrder(t *testing.T, dir string) []string {
	t.Helper()
	st, err := Stale(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range st {
		got = append(got, r.Header.RunID)
		r.Release()
	}
	return got
}
