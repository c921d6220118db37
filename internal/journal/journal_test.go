package journal

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// openAs opens a journal whose header names another owner, so a test can
// play a run that has died.
func openAs(t testing.TB, dir, runID string, pid int, start uint64) *Journal {
	t.Helper()
	j, err := open(dir, Header{Version: version, RunID: runID, PID: pid, PIDStart: start, Started: time.Now().UTC(), Prefix: "cnb-"})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// abandon plays a crash: the kernel closes the file (dropping the lock) and
// nothing else happens.
func abandon(j *Journal) { j.f.Close() }

func TestLifecycleRemovesFileWhenAllUndone(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, "r1", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	if h := j.Header(); h.PID != os.Getpid() || h.PIDStart == 0 || h.RunID != "r1" || h.Prefix != "cnb-" {
		t.Fatalf("header %+v", h)
	}
	s, err := j.RecordSet(Set{Netns: "cnb-r1-node", FS: FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_cpus", Old: "0", New: "3"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := j.RecordObject(Object{Kind: KindNetns, Name: "cnb-r1-node"})
	if err != nil {
		t.Fatal(err)
	}
	if s != 1 || o != 2 || j.Pending() != 2 {
		t.Fatalf("seq %d %d pending %d", s, o, j.Pending())
	}
	for _, seq := range []int{o, s, s} { // twice: idempotent
		if err := j.MarkDone(seq); err != nil {
			t.Fatal(err)
		}
	}
	n1, _ := j.RecordObject(Object{Kind: KindNetns, Name: "cnb-r1-pod0"})
	n2, _ := j.RecordObject(Object{Kind: KindNetns, Name: "cnb-r1-pod0"}) // recreated
	l, _ := j.RecordObject(Object{Kind: KindLink, Netns: "cnb-r1-node", Name: "cnb-r1-pod0"})
	if err := j.MarkRemoved(KindNetns, "", "cnb-r1-pod0"); err != nil || j.Pending() != 1 {
		t.Fatalf("MarkRemoved = %v, pending %d (seqs %d %d)", err, j.Pending(), n1, n2)
	}
	if err := j.MarkDone(l); err != nil {
		t.Fatal(err)
	}
	if err := j.MarkDone(70); !errors.Is(err, ErrUnknownSeq) {
		t.Fatalf("MarkDone(70) = %v, want ErrUnknownSeq", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("journal not removed: %v", err)
	}
	if _, err := j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("record after close = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestCloseKeepsPending(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, "r2", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"})
	j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/b", Old: "1", New: "2"})
	j.MarkDone(seq)
	var pe *PendingError
	if err := j.Close(); !errors.As(err, &pe) || pe.Pending != 1 {
		t.Fatalf("Close = %v, want PendingError with 1", err)
	}
	r, err := ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	p := r.Pending()
	if len(p) != 1 || p[0].Seq != 2 || p[0].Set.Path != "/proc/sys/b" || p[0].Set.Old != "1" {
		t.Fatalf("pending %+v", p)
	}
}

// TestCrashReplay abandons a journal mid-run, as a killed process does, and
// checks that Stale hands back exactly what is left to undo, in order.
func TestCrashReplay(t *testing.T) {
	dir := t.TempDir()
	j := openAs(t, dir, "crash", deadPID(t), 1)
	var want []int
	for i, s := range []Set{
		{FS: FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"},
		{Netns: "cnb-crash-node", FS: FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_cpus", Old: "00000000", New: "00000003"},
		{Netns: "cnb-crash-pod0", FS: FSSysfs, Path: "class/net/eth0/queues/rx-0/rps_cpus", Old: "0", New: "3"},
	} {
		seq, err := j.RecordSet(s)
		if err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			want = append(want, seq)
		} else if err := j.MarkDone(seq); err != nil {
			t.Fatal(err)
		}
	}
	ps := deadPID(t)
	if _, err := j.RecordObject(Object{Kind: KindProcess, Netns: "cnb-crash-pod0", Name: "iperf3", PID: ps, Start: 42}); err != nil {
		t.Fatal(err)
	}
	want = append(want, 4)

	// While the journal is open its lock marks it live, whatever the pid.
	if st, err := Stale(dir); err != nil || len(st) != 0 {
		t.Fatalf("Stale with lock held = %v, %v", st, err)
	}
	abandon(j)

	live, err := Live(dir)
	if err != nil || live["crash"] {
		t.Fatalf("Live = %v, %v", live, err)
	}
	st, err := Stale(dir)
	if err != nil || len(st) != 1 {
		t.Fatalf("Stale = %v, %v", st, err)
	}
	r := st[0]
	var got []int
	for _, e := range r.Pending() {
		got = append(got, e.Seq)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pending %v, want %v", got, want)
	}
	if o := r.Pending()[2].Object; o == nil || o.PID != ps || o.Start != 42 {
		t.Fatalf("object %+v", o)
	}
	// A second cleanup does not get the journal while the first holds it.
	if again, _ := Stale(dir); len(again) != 0 {
		t.Fatalf("Stale while replay held = %d journals", len(again))
	}
	if err := r.Remove(); err != nil {
		t.Fatal(err)
	}
	if again, _ := Stale(dir); len(again) != 0 {
		t.Fatalf("Stale after Remove = %d journals", len(again))
	}
}

// TestRecycledPID: the owner's pid is alive but started at another time,
// so it is some other process and the journal is stale.
func TestRecycledPID(t *testing.T) {
	dir := t.TempDir()
	start, err := ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	j := openAs(t, dir, "recycled", os.Getpid(), start+1)
	abandon(j)
	if st, err := Stale(dir); err != nil || len(st) != 1 {
		t.Fatalf("Stale = %v, %v", st, err)
	} else {
		st[0].Release()
	}

	j2 := openAs(t, dir, "mine", os.Getpid(), start)
	abandon(j2) // lock gone, but the pid and start time are ours: alive
	st, err := Stale(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st {
		if r.Header.RunID == "mine" {
			t.Fatal("journal of a live owner reported stale")
		}
		r.Release()
	}
	if live, _ := Live(dir); !live["mine"] || live["recycled"] {
		t.Fatalf("Live = %v", live)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	dir := t.TempDir()
	j := openAs(t, dir, "trunc", deadPID(t), 1)
	j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/a", Old: "0", New: "1"})
	abandon(j)
	f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":2,"set":{"netns":"","fs":"proc","path":"/proc/sys/b","ol`)
	f.Close()
	r, err := ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || len(r.Entries) != 1 || r.Entries[0].Set.Path != "/proc/sys/a" {
		t.Fatalf("replay %+v", r)
	}

	// A garbled line that is not the last one is corruption, not a crash.
	b, _ := os.ReadFile(j.Path())
	os.WriteFile(j.Path(), append(b, []byte("\n{\"reverted\":1}\n")...), 0o600)
	if _, err := ReadReplay(j.Path()); err == nil {
		t.Fatal("garbled middle line accepted")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, "dup", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := Open(dir, "dup", "cnb-"); !errors.Is(err, ErrExists) {
		t.Fatalf("second Open = %v, want ErrExists", err)
	}
	for _, id := range []string{"", "a-b", "a/b", ".x", strings.Repeat("x", 65)} {
		if _, err := Open(dir, id, "cnb-"); !errors.Is(err, ErrBadRunID) {
			t.Errorf("Open(%q) = %v, want ErrBadRunID", id, err)
		}
	}
	if _, err := j.RecordSet(Set{FS: "xfs"}); err == nil {
		t.Error("unknown fs accepted")
	}
	if _, err := j.RecordObject(Object{Kind: KindProcess, Name: "x"}); err == nil {
		t.Error("process without pid accepted")
	}
	// Only the journal is left: no temporary files.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "dup"+Ext {
		t.Fatalf("dir holds %v", ents)
	}
}

func TestStaleMissingDirAndNoHeader(t *testing.T) {
	if st, err := Stale(filepath.Join(t.TempDir(), "none")); err != nil || st != nil {
		t.Fatalf("Stale(missing) = %v, %v", st, err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad"+Ext), []byte(`{"seq":1,"set":{"fs":"proc"}}`+"\n"), 0o600)
	if _, err := Stale(dir); !errors.Is(err, ErrNoHeader) {
		t.Fatalf("Stale = %v, want ErrNoHeader", err)
	}
	if live, _ := Live(dir); !live["bad"] {
		t.Fatal("unreadable journal not treated as live")
	}
}

func TestParseStat(t *testing.T) {
	line := "1234 (a) b) (c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	state, start, err := parseStat(line)
	if err != nil || state != "S" || start != 987654 {
		t.Fatalf("parseStat = %q %d %v", state, start, err)
	}
	if _, _, err := parseStat("1234 (x) S 1"); err == nil {
		t.Fatal("short line accepted")
	}
	if _, err := ProcessStart(deadPID(t)); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("ProcessStart(dead) = %v", err)
	}
	// A child that exited and was not waited for is a zombie: no process.
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Skipf("skipped: cannot start true: %v", err)
	}
	defer c.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := ProcessStart(c.Process.Pid); errors.Is(err, ErrNoProcess) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("ProcessStart(zombie) = %v, want ErrNoProcess", err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"header":{"version":1,"run":"r"}}` + "\n" + `{"seq":1,"set":{"fs":"proc"}}` + "\n" + `{"reverted":1}` + "\n"))
	f.Add([]byte(`{"header":{}}` + "\n" + `{"seq":1,"object":{"kind":"netns"}}` + "\n{\"rem"))
	f.Add([]byte(`{"header":{}}` + "\n" + `{"seq":1,"set":{"fs":"proc"}}` + "\n{garbled\n" + `{"reverted":1}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parse(b, false)
		if err == nil {
			for _, e := range r.Entries {
				if e.Set == nil && e.Object == nil && e.Qdisc == nil {
					t.Fatal("entry with neither set, object nor qdisc")
				}
			}
		}
		// Salvage reads whatever the strict read does, the same way, and
		// only lists what the strict read fails on.
		s, serr := parse(b, true)
		switch {
		case err == nil && (serr != nil || len(s.Damaged) != 0 || len(s.Entries) != len(r.Entries)):
			t.Fatalf("salvage of a sound journal: %v, %d damaged, %d entries (strict %d)", serr, len(s.Damaged), len(s.Entries), len(r.Entries))
		case err != nil && serr == nil && len(s.Damaged) == 0:
			t.Fatalf("strict read failed (%v), salvage found nothing damaged", err)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 1 1")
	f.Fuzz(func(t *testing.T, s string) { parseStat(s) })
}

func TestDirObjects(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, "r2", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	state := StateDir(dir, "r2")
	if want := filepath.Join(dir, "state", "r2"); state != want {
		t.Fatalf("StateDir = %s, want %s", state, want)
	}
	if _, err := j.RecordObject(Object{Kind: KindDir, Name: state}); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReplay(j.Path())
	if err != nil || len(r.Pending()) != 1 || r.Pending()[0].Object.Kind != KindDir || r.Pending()[0].Object.Name != state {
		t.Fatalf("replay %+v, %v", r, err)
	}
	if err := j.MarkRemoved(KindDir, "", state); err != nil || j.Pending() != 0 {
		t.Fatalf("MarkRemoved = %v, pending %d", err, j.Pending())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIsTempDir(t *testing.T) {
	for p, want := range map[string]bool{
		TempDir("/tmp", "abc123"):    true,
		"/var/tmp/cnibench-abc123":   true,
		"/tmp/cnibench-abc1234":      false, // another run
		"cnibench-abc123":            false, // relative
		"/tmp/x/../cnibench-abc123":  false, // not clean
		"/tmp/cnibench-abc123/inner": false,
		"/tmp/abc123":                false,
	} {
		if got := IsTempDir(p, "abc123"); got != want {
			t.Errorf("IsTempDir(%q) = %v, want %v", p, got, want)
		}
	}
}
