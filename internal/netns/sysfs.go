package netns

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Access says what a WithSysfs caller does with the files it is given.
type Access int

const (
	// Read needs the sysfs as it is; a read-only mount will do.
	Read Access = iota
	// Write needs a writable sysfs: a read-only one is made writable
	// first (see WithSysfs).
	Write
)

// sysfsFlags are the flags every sysfs mount gets, as container runtimes
// and `ip netns exec` mount it.
const sysfsFlags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// WithSysfs runs fn with the sysfs of the namespace ref names (a name, a
// path such as /proc/PID/ns/net, or "" for the namespace of the process)
// at sysRoot. sysfs shows the network devices of the namespace that
// mounted it, so this is how per-device knobs such as
// class/net/DEV/queues/rx-0/rps_cpus of a device inside a pod or node are
// reached. It is the one place cnibench mounts sysfs.
//
// For another namespace, fn runs on a locked thread that entered it and
// unshared a private mount namespace with a fresh sysfs at /sys (as `ip
// netns exec` does): nobody else sees the mount, and it vanishes with the
// thread, which is discarded afterwards, even if the process is killed in
// the middle (nothing to clean up after a crash).
//
// Write also handles the two read-only cases seen on nodes:
//   - The process's own /sys is mounted read-only (a container's /sys
//     often is, even for a privileged one, and a second sysfs of the same
//     namespace cannot be mounted there): fn runs on a discarded thread
//     whose private mount namespace has /sys bind-remounted read-write.
//   - A pod's sysfs superblock is read-only: sysfs keeps one superblock
//     per network namespace, and when the container runtime mounted it
//     first, read-only, every later mount shares that and writes to
//     rps_cpus fail with EROFS. The superblock is remounted read-write
//     (the container's own /sys mount stays read-only); this is what the
//     RPS+ paper's privileged pod did, and it outlives the call.
//     Equivalent to: ip netns exec NAME mount -o remount,rw /sys
func WithSysfs(ref string, access Access, fn func(sysRoot string) error) error {
	if ref == "" && (access == Read || !readOnly("/sys")) {
		return fn("/sys")
	}
	return onThread(func() error {
		if ref != "" {
			if err := enter(ref); err != nil {
				return err
			}
		}
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare mount namespace: %w", err)
		}
		if err := private(); err != nil {
			return err
		}
		if ref == "" {
			if err := unix.Mount("", "/sys", "", unix.MS_REMOUNT|unix.MS_BIND|sysfsFlags, ""); err != nil {
				return fmt.Errorf("remount /sys read-write: %w", err)
			}
			return fn("/sys")
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", sysfsFlags, ""); err != nil {
			return fmt.Errorf("mount sysfs of netns %s: %w", ref, err)
		}
		if access == Write && readOnly("/sys") {
			if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_REMOUNT|sysfsFlags, ""); err != nil {
				return fmt.Errorf("remount sysfs of netns %s read-write: %w", ref, err)
			}
		}
		return fn("/sys")
	})
}

// private keeps the thread's mounts from reaching the rest of the
// machine: "/" is made private, recursively. In a chroot into a plain
// directory "/" is not a mount point and the kernel refuses to change its
// propagation (EINVAL); then /sys, the only place WithSysfs mounts on, is
// made private instead, which is what keeps those mounts to this thread.
// Equivalent to: mount --make-rprivate / (or /sys)
func private() error {
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mount("", "/sys", "", unix.MS_REC|unix.MS_PRIVATE, "")
	}
	if err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	return nil
}

// readOnly reports whether the file system at dir is read-only, by its
// mount or by its superblock.
func readOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}
