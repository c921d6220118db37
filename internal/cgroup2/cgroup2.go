// Package cgroup2 finds this process's cgroup in the cgroup v2
// hierarchy: where cgroup BPF programs (socket-level load balancing)
// attach so that they see the processes cnibench starts, and no others.
// Within, a cgroup's path inside a mount of its hierarchy, is shared with
// hostcpus, which reads the cpuset of the same cgroup.
package cgroup2

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"
)

// errNoMount says how to get a cgroup v2 mount.
var errNoMount = errors.New("no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup/unified, or boot with systemd.unified_cgroup_hierarchy)")

// Mount is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a
// unified system, /sys/fs/cgroup/unified on a hybrid one, or a
// container's own cgroup mounted there.
func Mount() (string, error) {
	ms, err := mounts()
	if err != nil {
		return "", err
	}
	return ms[0].Mountpoint, nil
}

// Own is the directory of this process's cgroup v2. Children it starts
// are in it too unless something moves them.
func Own() (string, error) {
	ms, err := mounts()
	if err != nil {
		return "", err
	}
	fsys, err := procfs.NewDefaultFS()
	if err != nil {
		return "", err
	}
	self, err := fsys.Self()
	if err != nil {
		return "", err
	}
	cgs, err := self.Cgroups()
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	return own(cgs, ms, func(dir string) bool {
		st, err := os.Stat(dir)
		return err == nil && st.IsDir()
	})
}

// mounts are the cgroup v2 mounts, the hierarchy's own (root "/") first.
func mounts() ([]*mountinfo.Info, error) {
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("reading /proc/self/mountinfo: %w", err)
	}
	if len(ms) == 0 {
		return nil, errNoMount
	}
	for i, m := range ms {
		if m.Root == "/" {
			ms[0], ms[i] = ms[i], ms[0]
			break
		}
	}
	return ms, nil
}

// own finds the cgroup v2 of cgs (hierarchy 0: the line "0::PATH" of
// /proc/self/cgroup, cgroups(7)) under mounts, the hierarchy's own first.
// A container without a cgroup namespace of its own sees its full path
// (/docker/ID) and has only its cgroup mounted, with that path as the
// mount's root. A path that is not a directory under any mount (another
// cgroup namespace's) gives the mount itself: it holds every process
// this one can see.
func own(cgs []procfs.Cgroup, ms []*mountinfo.Info, isDir func(string) bool) (string, error) {
	for _, cg := range cgs {
		if cg.HierarchyID != 0 {
			continue
		}
		if !strings.HasPrefix(cg.Path, "/") {
			return "", fmt.Errorf("/proc/self/cgroup: cgroup v2 path %q is not absolute", cg.Path)
		}
		for _, m := range ms {
			if dir := filepath.Join(m.Mountpoint, Within(cg.Path, m.Root)); isDir(dir) {
				return dir, nil
			}
		}
		return ms[0].Mountpoint, nil
	}
	return "", errors.New("/proc/self/cgroup has no cgroup v2 line (0::PATH): the process is in no cgroup v2")
}

// Within is a cgroup's path p inside a mount of its hierarchy whose root
// is root: a container without its own cgroup namespace sees the full
// path in /proc/self/cgroup, and its cgroup mounted as the mount's root.
func Within(p, root string) string {
	if root != "/" && (p == root || strings.HasPrefix(p, root+"/")) {
		p = strings.TrimPrefix(p, root)
	}
	return path.Clean("/" + p)
}
