package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// hostProc runs /proc/sys accesses in the init network namespace.
// /proc/sys/net shows the namespace of the task that opens it, and the
// RFS table size (net.core.rps_sock_flow_entries) exists only in the init
// namespace. On a real node a host-network agent is already there; on a
// test cluster whose nodes are namespaces of one machine it is not, and
// the value it sets is the machine's one global table either way.
type hostProc struct {
	procRoot string
	once     sync.Once
	same     bool
	name     string
	err      error

	sysOnce sync.Once
	sysRO   bool
}

const initLinkName = "cnbinit"

func (h *hostProc) do(fn func() error) error {
	h.once.Do(func() {
		self, err := nsInode("/proc/self/ns/net")
		if err != nil {
			h.same = true // cannot tell: use this namespace
			return
		}
		// PID 1 is in the init namespaces; where it cannot be inspected
		// (some sandboxes), kthreadd (PID 2) is too.
		initPath := ""
		for _, pid := range []string{"1", "2"} {
			p := filepath.Join(h.procRoot, pid, "ns/net")
			if ino, err := nsInode(p); err == nil {
				initPath = p
				h.same = ino == self
				break
			}
		}
		if initPath == "" || h.same {
			h.same = true
			return
		}
		if err := os.MkdirAll(netns.Dir, 0o755); err != nil {
			h.err = err
			return
		}
		link := netns.Path(initLinkName)
		os.Remove(link)
		h.err = os.Symlink(initPath, link)
		h.name = initLinkName
	})
	if h.same {
		return fn()
	}
	if h.err != nil {
		return h.err
	}
	return netns.Do(h.name, fn)
}

func nsInode(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// proc sends the node's /proc/sys and /sys accesses through hostProc.
func (f *nodeFS) proc(ns, fsKind string, fn func() error) error {
	if ns != "" || f.host == nil {
		return fn()
	}
	if fsKind == tune.FSProc {
		return f.host.do(fn)
	}
	return f.host.sysDo(fn)
}

// sysDo runs fn where the node's /sys is writable. A container's /sys
// is often mounted read-only even when the container is privileged (and
// a second sysfs of the same network namespace cannot be mounted); then
// fn runs on a locked thread with a private mount namespace in which
// /sys is remounted read-write. The thread is never unlocked, so Go
// discards it afterwards and nobody else sees the mount.
func (h *hostProc) sysDo(fn func() error) error {
	h.sysOnce.Do(func() {
		var st unix.Statfs_t
		h.sysRO = unix.Statfs("/sys", &st) == nil && st.Flags&unix.ST_RDONLY != 0
	})
	if !h.sysRO {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			errc <- fmt.Errorf("unshare mount namespace: %w", err)
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			errc <- fmt.Errorf("make mounts private: %w", err)
			return
		}
		if err := unix.Mount("", "/sys", "", unix.MS_REMOUNT|unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("remount /sys read-write: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
