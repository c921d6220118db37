package probe

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// readOnlyProcSysEnv makes the test binary mount /proc/sys read-only in
// the mount namespace it was started in (a container's /proc/sys, as
// Docker mounts it without --privileged), print sysctlIn and rfsTableIn
// there, and exit (see TestMain).
const readOnlyProcSysEnv = "CNIBENCH_PROBE_RO_PROCSYS"

func readOnlyProcSysHelper(name string) int {
	for _, m := range []struct {
		src, target string
		flags       uintptr
	}{
		{"", "/", unix.MS_PRIVATE | unix.MS_REC},
		{"/proc/sys", "/proc/sys", unix.MS_BIND},
		{"", "/proc/sys", unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY},
	} {
		if err := unix.Mount(m.src, m.target, "", m.flags, ""); err != nil {
			fmt.Printf("mount %s: %v\n", m.target, err)
			return 1
		}
	}
	ok, detail := sysctlIn("/proc", name)
	fmt.Printf("%v %s\n", ok, detail)
	ok, detail = rfsTableIn("/proc")
	fmt.Printf("%v %s\n", ok, detail)
	return 0
}

// TestReadOnlyProcSys (root; a mount namespace of its own, no network
// namespace): a sysctl's mode bits (0644) said writable where /proc/sys
// is mounted read-only, as in a container, so preflight passed and
// every trial's write failed (EROFS). The kernel's answer (access(2))
// now decides, for tuning sysctls and the RFS table alike.
func TestReadOnlyProcSys(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root for a mount namespace")
	}
	const name = "net.core.somaxconn"
	if _, err := os.Stat(rfsTable); err != nil {
		t.Skipf("skipped: this host has no %s: %v", rfsTable, err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), readOnlyProcSysEnv+"="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("helper printed %q", out)
	}
	for i, what := range []string{name, rfsTable} {
		if !strings.HasPrefix(lines[i], "false ") || !strings.Contains(lines[i], "read-only mount") {
			t.Errorf("%s on a read-only /proc/sys: %q, want refused as on a read-only mount", what, lines[i])
		}
	}
	// On the host's own /proc/sys both are writable.
	if ok, why := sysctlIn("/proc", name); !ok {
		t.Errorf("%s on this host: %s", name, why)
	}
	if ok, why := rfsTableIn("/proc"); !ok {
		t.Errorf("RFS table on this host: %s", why)
	}
}

func TestWriteRefused(t *testing.T) {
	if got := writeRefused("/proc/sys/net/core/somaxconn", &os.PathError{Op: "access", Err: unix.EROFS}); !strings.Contains(got, "read-only mount") {
		t.Errorf("EROFS: %q", got)
	}
	if got := writeRefused("/proc/sys/net/core/somaxconn", &os.PathError{Op: "access", Err: unix.EACCES}); !strings.Contains(got, "run as root") {
		t.Errorf("EACCES: %q", got)
	}
}
