package journal

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// machineLockHelperEnv makes the lock helper (TestMain) hold the
// machine's lock at this path too, as a run does.
const machineLockHelperEnv = "CNIBENCH_JOURNAL_MACHINE_LOCK_HELPER"

// TestMachineLock: a run of one journal directory holds the machine's
// lock; one of another directory (whose own directory's lock is free) is
// refused at once, naming the holder's run, pid and journal; WaitHost
// waits for the holder and gives up after its timeout.
func TestMachineLock(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	lockPath := filepath.Join(t.TempDir(), "cnibench.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dirA, machineLockHelperEnv+"="+lockPath)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 200)
	if n, _ := out.Read(buf); string(buf[:n]) != "ready\n" {
		t.Fatalf("helper: %q", buf[:n])
	}
	dl, err := BeginRun(dirB, "")
	if err != nil {
		t.Fatalf("run of another directory: its own lock = %v", err)
	}
	defer dl.Release()
	_, err = LockHost(lockPath)
	var be *BusyError
	if !errors.As(err, &be) {
		t.Fatalf("machine's lock while held = %v, want BusyError", err)
	}
	want := "run holder (pid " + strconv.Itoa(cmd.Process.Pid) + ", journal " + filepath.Join(dirA, "holder"+Ext) + ") holds the host lock on " + lockPath
	if be.PID != cmd.Process.Pid || be.RunID != "holder" || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("BusyError %+v:\n%v\nwant it to start %q", be, err, want)
	}
	if _, err := WaitHost(lockPath, 100*time.Millisecond); !errors.As(err, &be) {
		t.Fatalf("WaitHost while held = %v, want BusyError after the timeout", err)
	}
	go func() { time.Sleep(200 * time.Millisecond); stdin.Close() }()
	l, err := WaitHost(lockPath, time.Minute)
	if err != nil {
		t.Fatalf("WaitHost once the holder ends = %v", err)
	}
	l.Release()
	l.Release() // twice is fine
}

// The machine's lock file is never reached through a link: root must not
// be led to create or lock a file elsewhere.
func TestMachineLockRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "elsewhere"), filepath.Join(dir, "cnibench.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var le *LockError
	if _, err := LockHost(link); !errors.As(err, &le) {
		t.Fatalf("LockHost through a link = %v, want LockError", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was created (%v)", err)
	}
}

// TestHostLockExcludesFlockCommand: the machine's lock is a flock(2)
// lock, which flock(1) takes too: scripts/fresh-root.sh writes
// rps_sock_flow_entries back under `flock /run/cnibench.lock`, and that
// keeps out a run only while LockHost stays flock(2), not fcntl or OFD
// locks, which flock(1) does not see.
func TestHostLockExcludesFlockCommand(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	path := filepath.Join(t.TempDir(), "cnibench.lock")
	l, err := LockHost(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("flock", "-n", path, "true").Run(); err == nil {
		t.Errorf("flock(1) took %s while LockHost held it", path)
	}
	l.Release()
	if out, err := exec.Command("flock", "-n", path, "true").CombinedOutput(); err != nil {
		t.Errorf("flock(1) after Release: %v %s", err, out)
	}
}
