// Package netns is the one place cnibench switches network namespaces:
// the only code that locks OS threads, calls setns, unshares or mounts
// (sysfs.go mounts a namespace's sysfs). internal/archtest fails when
// code elsewhere does.
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
	"syscall"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Dir is where named namespaces are bound, as `ip netns` does.
const Dir = "/var/run/netns"

// Path returns the file of a namespace reference. A reference is either
// the name of a namespace bound under Dir (as `ip netns` names them) or
// an absolute path to a namespace file, such as /proc/PID/ns/net: the
// node agent reaches the init namespace and pods' namespaces that way,
// without binding (and so without leaving) anything under Dir.
func Path(ref string) string {
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(Dir, ref)
}

// Add creates a named network namespace without entering it. As iproute2
// does, it makes Dir a shared mount (makeShared), creates the file under
// Dir, then a namespace on a throw-away thread, and binds that to the
// file; if the namespace or the bind fails, the file is removed, so a
// failed Add leaves no name that looks like a namespace and is none (a
// run killed between the two steps leaves one, which Delete removes).
// Equivalent to: ip netns add NAME
func Add(name string) error {
	if filepath.IsAbs(name) {
		return fmt.Errorf("ip netns add %s: not a name", name)
	}
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return fmt.Errorf("ip netns add %s: %w", name, err)
	}
	err := onThread(func() error {
		if err := makeShared(Dir, unix.Mount); err != nil {
			return err
		}
		return add(Path(name), bindNew)
	})
	if err != nil {
		return fmt.Errorf("ip netns add %s: %w", name, err)
	}
	return nil
}

// makeShared makes dir a mount point of its own in a shared peer group,
// as iproute2's netns_add does before every namespace it adds: a
// namespace bound below dir then propagates to every mount namespace that
// copied the mount (a container's, a unit's with PrivateMounts), so
// deleting it in one unmounts it in all and the kernel can free the
// namespace, where a private copy elsewhere would keep it alive. Like
// iproute2 it holds an flock on dir meanwhile: two processes upgrading it
// at once would stack bind mounts (Debian bug 949235), and goes on
// without the lock if it cannot be taken. mount is unix.Mount (tests
// fake it). Equivalent to:
//
//	mount --make-rshared DIR ||
//	  { mount --rbind DIR DIR && mount --make-rprivate DIR && mount --make-rshared DIR; }
func makeShared(dir string, mount func(source, target, fstype string, flags uintptr, data string) error) error {
	if f, err := os.Open(dir); err == nil {
		defer f.Close()
		_ = unix.Flock(int(f.Fd()), unix.LOCK_EX) // dropped by Close
	}
	made := false
	for {
		err := mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		// EINVAL: dir is no mount point yet. Upgrade it once.
		if !errors.Is(err, unix.EINVAL) || made {
			return fmt.Errorf("mount --make-shared %s: %w", dir, err)
		}
		if err := mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount --bind %s %s: %w", dir, dir, err)
		}
		// Private, then shared again: a peer group of its own, not the
		// parent mount's.
		if err := mount(dir, dir, "none", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount --make-private %s: %w", dir, err)
		}
		made = true
	}
}

// add creates the file p (failing if it exists: that name is someone
// else's) and has bind put a namespace on it; when bind fails the file is
// removed again.
func add(p string, bind func(p string) error) error {
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	f.Close()
	if err := bind(p); err != nil {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove the file again: %w", rerr))
		}
		return err
	}
	return nil
}

// bindNew moves the calling thread (locked, and discarded afterwards)
// into a new network namespace and binds it to p.
func bindNew(p string) error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare network namespace: %w", err)
	}
	self := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	if err := unix.Mount(self, p, "none", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind the namespace to %s: %w", p, err)
	}
	return nil
}

// Delete removes a named namespace; deleting one that is gone succeeds.
// As iproute2 does, it detaches the bind mount and unlinks the file; a
// file no namespace is bound to (left by a creation that died half-way,
// see HalfMade) is only unlinked.
// Equivalent to: ip netns delete NAME
func Delete(name string) error {
	if filepath.IsAbs(name) {
		return fmt.Errorf("ip netns delete %s: not a named namespace", name)
	}
	if err := remove(Path(name)); err != nil {
		return fmt.Errorf("ip netns delete %s: %w", name, err)
	}
	return nil
}

// remove detaches the namespace bound to p, if any, and unlinks p. EINVAL
// from umount means p is no mount point (a plain file): iproute2's
// on_netns_del ignores it too.
func remove(p string) error {
	if isNamespace(p) {
		err := unix.Unmount(p, unix.MNT_DETACH)
		if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("umount: %w", err)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
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

// Exists reports whether a namespace reference (a name or a path) names a
// network namespace: a file of the namespace file system (nsfs), as a
// bound name and /proc/PID/ns/net are. A file under Dir that no namespace
// is bound to is none (HalfMade).
func Exists(ref string) bool { return isNamespace(Path(ref)) }

// HalfMade reports whether the name is a file under Dir that no namespace
// is bound to: what a creation leaves that died between creating the file
// and binding the namespace to it. Entering it fails; Delete removes it.
func HalfMade(name string) bool {
	if filepath.IsAbs(name) {
		return false
	}
	p := Path(name)
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && !isNamespace(p)
}

// isNamespace reports whether p is a namespace file: on nsfs, or on proc
// where kernels before 3.19 kept namespace files.
func isNamespace(p string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC || st.Type == unix.PROC_SUPER_MAGIC
}

// Do runs fn inside the namespace ref names (a name or a path; the empty
// reference means the namespace of the process, i.e. the host) on a
// dedicated locked thread that is discarded afterwards.
func Do(name string, fn func() error) error { return DoPinned(name, nil, fn) }

// DoPinned is Do on a thread whose CPU affinity is cpus when cpus is
// non-empty: work that must run where a pinned program would (a reader
// standing in for a pinned server). fn does not run when either fails.
func DoPinned(name string, cpus cpuset.Set, fn func() error) error {
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
	return DoPinned(name, cpus, cmd.Start)
}

// enter moves the calling, locked thread into the namespace ref names.
func enter(name string) error {
	h, err := netns.GetFromPath(Path(name))
	if err != nil {
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("enter netns %s: %w", name, err)
	}
	return nil
}

// init keeps the main goroutine on the process's first thread for good.
// A goroutine that exits while locked has its thread thrown away, except
// the first one: Go cannot end the thread-group leader, so it parks it,
// still in whatever namespace onThread's fn entered. The leader is what
// /proc/self/ns/net shows, so one such landing made the process look as
// if it lived in a pod's (or a test's) namespace. Holding the leader for
// the main goroutine means onThread never runs there.
func init() { runtime.LockOSThread() }

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

// KillGroupOnCancel makes cmd the leader of its own process group and,
// when its context ends, kills the whole group: a program that hangs and
// is killed at a deadline must not leave a child it started (a wrapper
// script's sleep) running, reparented to init, holding its pipes. Call
// it before Start.
func KillGroupOnCancel(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// Cookie is the network namespace's cookie, the id BPF programs read
// with bpf_get_netns_cookie (SO_NETNS_COOKIE, Linux 5.14).
func Cookie(ref string) (uint64, error) {
	var cookie uint64
	err := Do(ref, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		if cookie, err = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE); err != nil {
			return fmt.Errorf("SO_NETNS_COOKIE (Linux 5.14): %w", err)
		}
		return nil
	})
	if err != nil {
		if ref == "" {
			ref = "of this process"
		}
		return 0, fmt.Errorf("cookie of netns %s: %w", ref, err)
	}
	return cookie, nil
}

// InitRef returns the file of the init network namespace under procRoot
// (PROC/1/ns/net) when it differs from the calling thread's namespace,
// and "" when they are the same or it cannot tell (then Do runs where
// the caller is). /proc/sys/net shows the namespace of the task that
// opens it, and host-global sysctls such as the RFS table size
// (net.core.rps_sock_flow_entries) exist only in the init namespace: a
// host-network agent on a node whose "host" is a namespace (the test
// cluster) reads them through this.
func InitRef(procRoot string) string {
	// The calling thread's namespace, not /proc/self's (the leader
	// thread's): threads are where namespaces are switched.
	self, err := nsInode("/proc/thread-self/ns/net")
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(procRoot); err == nil {
		procRoot = abs
	}
	// PID 1 is in the init namespaces; where it cannot be inspected
	// (some sandboxes), kthreadd (PID 2) is too.
	for _, pid := range []string{"1", "2"} {
		p := filepath.Join(procRoot, pid, "ns/net")
		if ino, err := nsInode(p); err == nil {
			if ino == self {
				return ""
			}
			return p
		}
	}
	return ""
}

// The fixed inode numbers of init namespaces (include/linux/proc_ns.h):
// the PID namespace's since Linux 3.8, the network namespace's in newer
// kernels (older ones number it like any other, from 0xF0000000 up, so
// it never takes this one).
const (
	pidInitIno = 0xEFFFFFFC
	netInitIno = 0xEFFFFFF9
)

// InInit reports whether the calling thread is provably in the init
// network namespace: its namespace has init's fixed number, or this
// process is in the init PID namespace (so PID 1 under procRoot is the
// machine's init) and shares PID 1's (or kthreadd's) network namespace.
// A container with network and PID namespaces of its own proves
// nothing: its PID 1 is its own init. InitRef's "" means the same
// namespace or cannot tell; this tells them apart.
func InInit(procRoot string) bool {
	self, err := nsInode("/proc/thread-self/ns/net")
	if err != nil {
		return false
	}
	if self == netInitIno {
		return true
	}
	if pid, err := nsInode("/proc/self/ns/pid"); err != nil || pid != pidInitIno {
		return false
	}
	for _, pid := range []string{"1", "2"} {
		if ino, err := nsInode(filepath.Join(procRoot, pid, "ns/net")); err == nil {
			return ino == self
		}
	}
	return false
}

func nsInode(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
