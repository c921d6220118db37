package netns

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// RemountSysfsRW makes the sysfs of the named namespace writable. sysfs
// keeps one superblock per network namespace; when a container runtime
// mounted it first, read-only (as it does for every unprivileged
// container), every later mount shares that read-only superblock and
// writes to queues/rx-N/rps_cpus fail with EROFS. Remounting the
// superblock read-write (in a private mount namespace of a discarded
// thread) changes only the superblock: the container's own /sys mount
// stays read-only. This is what the RPS+ paper's privileged pod did.
// Equivalent to: ip netns exec NAME mount -o remount,rw /sys
func RemountSysfsRW(name string) error {
	return onThread(func() error {
		if err := enter(name); err != nil {
			return err
		}
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare mount namespace: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make mounts private: %w", err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount sysfs of netns %s: %w", name, err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("remount sysfs of netns %s read-write: %w", name, err)
		}
		return nil
	})
}
