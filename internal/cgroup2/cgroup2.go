// Package cgroup2 finds this process's cgroup in the cgroup v2
// hierarchy: where cgroup BPF programs (socket-level load balancing)
// attach so that they see the processes cnibench starts, and no others.
package cgroup2

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// Mount is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a
// unified system, /sys/fs/cgroup/unified on a hybrid one.
func Mount() (string, error) {
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup2"))
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/mountinfo: %w", err)
	}
	for _, m := range ms {
		// A bind mount of a sub-cgroup (a container's) has Root != "/";
		// the hierarchy's own mount is the one to resolve paths against.
		if m.Root == "/" {
			return m.Mountpoint, nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup/unified, or boot with systemd.unified_cgroup_hierarchy)")
}

// Own is the directory of this process's cgroup v2. Children it starts
// are in it too unless something moves them. When the path /proc/self/
// cgroup names is not under the mount (another cgroup namespace), the
// hierarchy's root is returned: it holds every process.
func Own() (string, error) {
	mnt, err := Mount()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	rel, err := ParseUnified(data)
	if err != nil {
		return "", fmt.Errorf("/proc/self/cgroup: %w", err)
	}
	dir := filepath.Join(mnt, filepath.Clean("/"+rel))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return mnt, nil
	}
	return dir, nil
}

// ParseUnified returns the cgroup v2 path of a /proc/PID/cgroup file:
// the line "0::PATH" (hierarchy 0, no controllers; see cgroups(7)).
func ParseUnified(data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || id != "0" {
			continue
		}
		ctrl, path, ok := strings.Cut(rest, ":")
		if !ok || ctrl != "" {
			continue
		}
		if !strings.HasPrefix(path, "/") {
			return "", fmt.Errorf("cgroup v2 path %q is not absolute", path)
		}
		return path, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 line (0::PATH): the process is in no cgroup v2")
}
