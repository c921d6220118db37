package netns

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// chrootEnv marks the child of TestWithSysfsInChroot.
const chrootEnv = "CNIBENCH_TEST_CHROOT"

// chrootScript builds a root in the plain directory $1 (not a mount
// point) from bind mounts of the host's directories, as a chroot made by
// hand has, and runs the test binary ($0) inside it.
const chrootScript = `R=$1
for d in /usr /bin /sbin /lib /lib64 /etc /dev /sys; do
	if [ -L "$d" ]; then cp -P "$d" "$R$d"; elif [ -d "$d" ]; then mkdir -p "$R$d"; mount --rbind "$d" "$R$d"; fi
done
mkdir -p "$R/proc" "$R/run" "$R/tmp" "$R/var" "$R/t"
mount -t proc proc "$R/proc"
mount -t tmpfs tmpfs "$R/run"
ln -s ../run "$R/var/run"
: > "$R/t/test"
mount --bind "$0" "$R/t/test"
exec chroot "$R" /t/test -test.run '^TestWithSysfsInChroot$' -test.v`

// WithSysfs works in a chroot whose root is not a mount point (where "/"
// cannot be made private): a namespace's devices are seen and its RPS
// mask written. Before, WithSysfs failed there with "make mounts
// private: invalid argument", and a run refused every RPS tuning.
func TestWithSysfsInChroot(t *testing.T) {
	if os.Getenv(chrootEnv) != "" {
		chrootChild(t)
		return
	}
	requireRoot(t)
	for _, tool := range []string{"unshare", "chroot", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: needs %s(1) to build a chroot apart from the host", tool)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	runChild(t, chrootEnv, exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-ec", chrootScript, self, t.TempDir()))
}

func chrootChild(t *testing.T) {
	if err := rootPropagation(); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("making / private in the chroot: %v, want EINVAL (the case under test)", err)
	}
	ns := scratch(t)
	vethIn(t, ns, "cnbc0")
	requireRPS(t, ns, "cnbc0")
	if err := writeFile(ns, Write, rpsFile("cnbc0"), "1"); err != nil {
		t.Fatalf("write in the chroot: %v", err)
	}
	if got := readMask(t, ns, rpsFile("cnbc0")); got != 1 {
		t.Errorf("cnbc0's rps_cpus = %x after writing 1", got)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Count(string(mounts), " /sys ") > 1 {
		t.Errorf("extra /sys mount visible to the process:\n%s", mounts)
	}
}

// rootPropagation tries what private() tries first, on a thread of its
// own mount namespace, and says what the kernel answered.
func rootPropagation() error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			errc <- err
			return
		}
		errc <- unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	}()
	return <-errc
}
