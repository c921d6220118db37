// Package netns is the one place cnibench switches network namespaces.
//
// Design notes: a Linux namespace belongs to an OS thread, not to a
// goroutine. Every switch therefore happens on a goroutine that has locked
// its thread, and that goroutine never unlocks it: when it returns, the Go
// runtime destroys the thread instead of handing a thread that may still be
// inside a foreign namespace (or carry a changed CPU affinity) back to the
// pool. This is the rule containernetworking's pkg/ns and cilium/ebpf's
// test utilities follow, done the simplest way.
package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Dir is where named namespaces are bound, as `ip netns` does.
const Dir = "/var/run/netns"

// Path returns the bind-mount path of a named namespace.
func Path(name string) string { return filepath.Join(Dir, name) }

// Add creates a named network namespace without entering it.
// Equivalent to: ip netns add NAME
func Add(name string) error {
	return onThread(func() error {
		origin, err := netns.Get()
		if err != nil {
			return fmt.Errorf("get current netns: %w", err)
		}
		defer origin.Close()
		h, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("ip netns add %s: %w", name, err)
		}
		h.Close()
		// Thread is discarded anyway, but leave it where it was for clarity.
		return netns.Set(origin)
	})
}

// Delete removes a named namespace; deleting one that is gone succeeds.
// Equivalent to: ip netns delete NAME
func Delete(name string) error {
	err := netns.DeleteNamed(name)
	if err == nil || errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return fmt.Errorf("ip netns delete %s: %w", name, err)
}

// List returns the named namespaces whose names start with prefix.
func List(prefix string) ([]string, error) {
	ents, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Exists reports whether a named namespace exists.
func Exists(name string) bool {
	_, err := os.Stat(Path(name))
	return err == nil
}

// Do runs fn inside the named namespace (the empty name means the
// namespace of the process, i.e. the host) on a dedicated locked thread.
func Do(name string, fn func() error) error {
	return onThread(func() error {
		if name != "" {
			if err := enter(name); err != nil {
				return err
			}
		}
		return fn()
	})
}

// Handle opens a netlink handle bound to the named namespace ("" = host).
// Use it instead of Do for netlink work: it needs no thread switching.
func Handle(name string) (*NetlinkHandle, error) {
	return newHandle(name)
}

// Start starts cmd inside the named namespace, with its CPU affinity set
// to cpus when cpus is non-empty. The child inherits namespace and affinity
// from the forking thread, so no window exists in which it runs elsewhere.
func Start(name string, cpus cpuset.Set, cmd *exec.Cmd) error {
	return onThread(func() error {
		if name != "" {
			if err := enter(name); err != nil {
				return err
			}
		}
		if len(cpus) > 0 {
			var set unix.CPUSet
			for _, c := range cpus {
				set.Set(c)
			}
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				return fmt.Errorf("pin to CPUs %s: %w", cpus, err)
			}
		}
		return cmd.Start()
	})
}

// WithSysfs runs fn with a sysfs instance of the named namespace mounted
// at /sys, as `ip netns exec` does. sysfs shows the network devices of the
// namespace that mounted it, so this is how per-device knobs such as
// queues/rx-0/rps_cpus of a device inside a pod or node are reached.
//
// The mount happens in a private mount namespace of the locked, discarded
// thread: nobody else sees it, and it vanishes with the thread even if the
// process is killed in the middle (nothing to clean up after a crash).
func WithSysfs(name string, fn func(sysRoot string) error) error {
	if name == "" {
		return fn("/sys")
	}
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
		return fn("/sys")
	})
}

func enter(name string) error {
	h, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("enter netns %s: %w", name, err)
	}
	return nil
}

// onThread runs fn on a fresh goroutine whose OS thread is locked and, by
// never being unlocked, is thrown away afterwards.
func onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// CLONE_FS is shared between Go's threads; unsharing it is not
		// needed for setns(CLONE_NEWNET), which is per thread.
		errc <- fn()
	}()
	return <-errc
}
