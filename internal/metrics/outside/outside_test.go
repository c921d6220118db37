package outside

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/procfs"
)

// fakeProc writes a /proc with the given processes: pid -> (ppid, flags,
// utime, cutime, net inode).
type fakeP struct {
	ppid, flags, utime, cutime int
	net                        uint32
}

var roots = map[procfs.FS]string{}

func fsRoot(t *testing.T, fs procfs.FS) string { return roots[fs] }

func fakeProc(t *testing.T, ps map[int]fakeP) procfs.FS {
	t.Helper()
	root := t.TempDir()
	for pid, p := range ps {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		// Fields after comm: state ppid pgrp session tty tpgid flags minflt
		// cminflt majflt cmajflt utime stime cutime cstime ...
		stat := fmt.Sprintf("%d (a (b) c) S %d 1 1 0 -1 %d 0 0 0 0 %d 5 %d 0 20 0 1 0 100 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			pid, p.ppid, p.flags, p.utime, p.cutime)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(fmt.Sprintf("net:[%d]", p.net), filepath.Join(dir, "ns", "net")); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	roots[fs] = root
	return fs
}

func TestTakeCountsOnlyOutsideProcesses(t *testing.T) {
	const host, pod = 4026531840, 4026532000
	fs := fakeProc(t, map[int]fakeP{
		1:  {ppid: 0, utime: 7, net: host},                     // init: outside
		10: {ppid: 1, utime: 100, cutime: 50, net: host},       // a compile job: outside
		20: {ppid: 1, utime: 900, net: host},                   // cnibench itself
		21: {ppid: 20, utime: 300, net: host},                  // perf, started by cnibench
		22: {ppid: 21, utime: 30, net: host},                   // its child
		30: {ppid: 1, utime: 800, net: pod},                    // a pod's iperf3
		40: {ppid: 2, flags: pfKthread, utime: 500, net: host}, // ksoftirqd
	})
	s, err := Take(fs, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{1: 7 + 5, 10: 100 + 5 + 50}
	// a process whose namespace cannot be read is not counted
	if err := os.Remove(filepath.Join(fsRoot(t, fs), "1", "ns", "net")); err != nil {
		t.Fatal(err)
	}
	s, err = Take(fs, 20)
	if err != nil {
		t.Fatal(err)
	}
	delete(want, 1)
	if len(s) != len(want) {
		t.Fatalf("snapshot %v, want %v", s, want)
	}
	for pid, v := range want {
		if s[pid] != v {
			t.Errorf("pid %d: %d ticks, want %d", pid, s[pid], v)
		}
	}
}

func TestBetween(t *testing.T) {
	a := Snapshot{1: 10, 2: 100, 3: 50}
	b := Snapshot{1: 15, 2: 40 /* PID reused */, 4: 20 /* new */}
	if got, want := Between(a, b), uint64(5+40+20); got != want {
		t.Errorf("Between = %d, want %d", got, want)
	}
	if got := Percent(200, 2, 2); got != 50 {
		t.Errorf("Percent(200 ticks, 2 s, 2 CPUs) = %g, want 50", got)
	}
	// A reaped compiler's whole CPU time can exceed the window's.
	if got := Percent(900, 2, 2); got != 100 {
		t.Errorf("Percent(900 ticks, 2 s, 2 CPUs) = %g, want 100 (the whole machine)", got)
	}
}

// TestTakeThisMachine reads the real /proc: this test process is self,
// so it must not be in its own snapshot, and PID 1 (in the host's
// namespace when the test runs there) has a counter.
func TestTakeThisMachine(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	s, err := Take(fs, Self())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s[Self()]; ok {
		t.Errorf("the run's own process %d is counted as outside", Self())
	}
	if _, ok := s[os.Getppid()]; !ok && os.Geteuid() == 0 {
		t.Errorf("the parent process %d (go test) is not counted as outside: %v", os.Getppid(), s)
	}
}
