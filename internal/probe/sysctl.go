package probe

import (
	"errors"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/suggest"
)

// sysctlPrefix marks a sysctl as a feature: "sysctl:net.core.busy_poll".
const sysctlPrefix = "sysctl:"

// Sysctl is the feature a tuning's sysctl needs: that this kernel has it.
// A network sysctl is looked for in the initial namespace, which shows
// the global ones (net.core.busy_poll) and its own copy of each
// per-namespace one (net.ipv4.tcp_rmem).
func Sysctl(name string) string { return sysctlPrefix + name }

// probeSysctl checks that the sysctl named by the feature exists and
// that the host may write it.
// Equivalent to: sysctl net.core.busy_poll
func probeSysctl(feature string) Result {
	name := strings.TrimPrefix(feature, sysctlPrefix)
	r := Result{Name: feature, Kind: KindKernel}
	if strings.Contains(name, "/") || strings.Contains(name, "..") {
		r.Detail = name + " is not a sysctl name"
		return r
	}
	r.OK, r.Detail = sysctlIn("/proc", name)
	return r
}

// sysctlIn looks for the sysctl in the init network namespace of
// procRoot's PID 1. Missing where this process is not provably in the
// init namespace (a container with network and PID namespaces of its
// own, whose PID 1 is its own init), it says so: a global sysctl
// (net.core.netdev_max_backlog) exists in the host's network namespace
// only, and the kernel may well have it. One the host shows read-only
// (net.netfilter.nf_conntrack_count) is the kernel's report, which no
// tuning sets: the write would fail mid-run. Whether this process may
// write it is the kernel's answer (access(2)), in that namespace: the
// mode bits say nothing of a /proc/sys mounted read-only, as a
// container's is, where every write fails.
func sysctlIn(procRoot, name string) (bool, string) {
	file := study.SysctlPath(name)
	var near []string
	var inInit, readOnly bool
	var denied error
	err := netns.Do(netns.InitRef(procRoot), func() error {
		inInit = netns.InInit(procRoot)
		st, err := os.Stat(file)
		if errors.Is(err, os.ErrNotExist) {
			// Its neighbours, for a name that is one slip away.
			ents, _ := os.ReadDir(path.Dir(file))
			parent := name[:strings.LastIndex(name, ".")+1]
			for _, e := range ents {
				near = append(near, parent+e.Name())
			}
		}
		if err == nil {
			readOnly = st.Mode().Perm()&0o222 == 0
			denied = writeDenied(file)
		}
		return err
	})
	switch {
	case err == nil && denied != nil && !readOnly:
		return false, writeRefused(file, denied)
	case err == nil && readOnly && !inInit:
		// Such a file is often the host's value mirrored (nf_conntrack_max),
		// which only the host's network namespace can set.
		return false, "this network namespace, which is not the host's (a container with its own network namespace?), shows " +
			file + " read-only: a global sysctl is set in the host's network namespace only; run cnibench there " +
			"(e.g. docker run --network host --privileged)"
	case err == nil && readOnly:
		return false, file + " is read-only: the kernel reports it, and no tuning can set it"
	case err == nil:
		return true, file
	case errors.Is(err, os.ErrNotExist) && !inInit:
		return false, strings.TrimSpace(suggest.Hint(name, near) + "this network namespace, which is not the host's " +
			"(a container with its own network namespace?), has no " + file + ": a global sysctl exists in the host's " +
			"network namespace only; run cnibench there (e.g. docker run --network host --privileged), unless the name is misspelt")
	case errors.Is(err, os.ErrNotExist):
		return false, strings.TrimSpace(suggest.Hint(name, near) + "this kernel has no " + file +
			" (misspelt, or built without its feature)")
	}
	return false, "checking " + file + " failed: " + err.Error()
}

// writeDenied is why this process may not write file, nil when it
// may: the kernel's answer, which sees a read-only mount (EROFS) and a
// missing privilege.
// Equivalent to: test -w FILE
func writeDenied(file string) error {
	if err := unix.Access(file, unix.W_OK); err != nil {
		return &os.PathError{Op: "access", Path: file, Err: err}
	}
	return nil
}

// writeRefused words writeDenied's answer for a file whose mode allows
// writing.
func writeRefused(file string, denied error) string {
	if errors.Is(denied, unix.EROFS) {
		return file + " is on a read-only mount here (a container's /proc/sys is, unless the container is privileged): " +
			"every write would fail; run cnibench on the host, or in a container with --privileged"
	}
	return "this process may not write " + file + ": " + denied.Error() + " (run as root)"
}

// IsKernel reports whether name is a kernel feature cnibench probes: one
// of KernelFeatures, or a Sysctl.
func IsKernel(name string) bool {
	return slices.Contains(KernelFeatures(), name) || strings.HasPrefix(name, sysctlPrefix)
}
