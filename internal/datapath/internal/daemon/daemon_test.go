package daemon

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the daemon: with DAEMON_TEST_HELPER set it
// behaves as that mode asks instead of running tests.
func TestMain(m *testing.M) {
	switch os.Getenv("DAEMON_TEST_HELPER") {
	case "":
		os.Exit(m.Run())
	case "run":
		fmt.Println("started")
		time.Sleep(time.Minute)
	case "exit3":
		fmt.Println("line 1")
		fmt.Fprintln(os.Stderr, "boom: config error")
		os.Exit(3)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring SIGTERM")
		time.Sleep(time.Minute)
	}
	os.Exit(0)
}

// start runs the test binary in mode, in the test's own namespace.
func start(t *testing.T, mode string) *Daemon {
	t.Helper()
	t.Setenv("DAEMON_TEST_HELPER", mode)
	d, err := Start("", "node0", t.TempDir(), []string{os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(time.Second) })
	return d
}

func waitLog(t *testing.T, d *Daemon, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(d.Tail(10), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log never showed %q; it has:\n%s", want, d.Tail(10))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStopTerminates(t *testing.T) {
	d := start(t, "run")
	waitLog(t, d, "started")
	if ok, _ := d.Exited(); ok {
		t.Fatal("exited early")
	}
	if syscall.Kill(d.PID(), 0) != nil {
		t.Fatalf("pid %d not running", d.PID())
	}
	if pgid, _ := syscall.Getpgid(d.PID()); pgid != d.PID() {
		t.Errorf("process group %d, want its own (%d)", pgid, d.PID())
	}
	if err := d.Stop(5 * time.Second); err != nil {
		t.Errorf("stop: %v", err)
	}
	select {
	case <-d.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if err := d.Stop(time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

func TestExitIsReportedWithLog(t *testing.T) {
	d := start(t, "exit3")
	<-d.Done()
	err := d.ErrExited()
	for _, want := range []string{"on node0 exited", "exit status 3", "line 1", "boom: config error"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if !strings.HasSuffix(d.LogPath(), "-node0.log") {
		t.Errorf("log path %s", d.LogPath())
	}
}

func TestStopKillsWhatIgnoresTERM(t *testing.T) {
	d := start(t, "ignore-term")
	waitLog(t, d, "ignoring SIGTERM")
	err := d.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "ignored SIGTERM") {
		t.Errorf("stop = %v, want the SIGKILL to be reported", err)
	}
	if ok, _ := d.Exited(); !ok {
		t.Error("not reaped after Stop")
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start("", "n", t.TempDir(), nil); err == nil {
		t.Error("empty argv accepted")
	}
	if _, err := Start("", "n", t.TempDir(), []string{"/nonexistent/prog"}); err == nil || !strings.Contains(err.Error(), "start prog on n") {
		t.Errorf("missing program: %v", err)
	}
	if _, err := Start("", "n", "/nonexistent-dir", []string{os.Args[0]}); err == nil {
		t.Error("unwritable log accepted")
	}
}
