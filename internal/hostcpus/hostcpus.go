// Package hostcpus reads which of this machine's CPUs this process and
// the programs it starts may use: its affinity, its cgroup's cpuset (v1
// or v2) and the online CPUs. The CPU lists themselves are package
// cpuset's (pure); these are the reads of the running kernel.
package hostcpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/cpuset"
)

// Affinity is the set of CPUs this process may run on (sched_getaffinity):
// its cgroup's cpuset, or less where taskset narrowed it. The programs it
// starts inherit it, and may be pinned anywhere in the cpuset (Allowed).
func Affinity() (cpuset.Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, err
	}
	var s cpuset.Set
	for cpu := 0; cpu <= cpuset.MaxCPU && len(s) < m.Count(); cpu++ {
		if m.IsSet(cpu) {
			s = append(s, cpu)
		}
	}
	return s, nil
}

// Allowed is the set of CPUs the programs this process starts may be
// pinned to, and what it is: its cgroup's cpuset (CgroupCPUs), or, where
// that cannot be read, its affinity. The cpuset, not the affinity, is the
// bound: taskset and sched_setaffinity may widen a child's affinity to
// any CPU of its cpuset, so `taskset -c 0 cnibench run` narrows cnibench
// itself and still lets a workload pin to CPU 1.
func Allowed() (cpuset.Set, string, error) {
	if s, err := CgroupCPUs(); err == nil {
		return s, "its cgroup's cpuset", nil
	}
	s, err := Affinity()
	return s, "its affinity (its cgroup's cpuset could not be read)", err
}

// Machine are the CPUs a local run uses: the emulated nodes share them,
// and the CPU time of other processes is a share of them. They are this
// process's cgroup's cpuset (every online CPU on a host, those a container
// was given); where none is readable, its affinity. Not its affinity
// first: taskset on cnibench narrows cnibench alone (RPS to "every CPU of
// the node" was CPU 0 alone under taskset -c 0). Not 0..NumCPU-1 either:
// a container's cpuset 2-5 is not CPUs 0-3.
func Machine() cpuset.Set {
	if s, _, err := Allowed(); err == nil && len(s) > 0 {
		return s
	}
	return cpuset.Range(runtime.NumCPU())
}

// Online are the machine's online CPUs (sysfs).
func Online() (cpuset.Set, error) {
	return readCPUs(os.ReadFile, "/sys/devices/system/cpu/online")
}

// CgroupCPUs is the effective cpuset of this process's cgroup: cgroup
// v1's cpuset.effective_cpus where a v1 hierarchy holds the cpuset
// controller (a hybrid machine's), else v2's cpuset.cpus.effective of the
// nearest cgroup up its path that has the file (the controller is
// enabled only where a parent's subtree_control says so; the root always
// has it).
func CgroupCPUs() (cpuset.Set, error) {
	fsys, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	self, err := fsys.Self()
	if err != nil {
		return nil, err
	}
	cgs, err := self.Cgroups()
	if err != nil {
		return nil, fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup", "cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("reading the cgroup mounts: %w", err)
	}
	return cgroupCPUs(cgs, mounts, os.ReadFile)
}

// cgroupCPUs finds the cpuset file of cgs among mounts and reads it with
// read.
func cgroupCPUs(cgs []procfs.Cgroup, mounts []*mountinfo.Info, read func(string) ([]byte, error)) (cpuset.Set, error) {
	for _, cg := range cgs {
		if cg.HierarchyID == 0 || !slices.Contains(cg.Controllers, "cpuset") {
			continue
		}
		for _, m := range mounts {
			if m.FSType == "cgroup" && slices.Contains(strings.Split(m.VFSOptions, ","), "cpuset") {
				return readCPUs(read, filepath.Join(m.Mountpoint, cgroup2.Within(cg.Path, m.Root), "cpuset.effective_cpus"))
			}
		}
		return nil, errors.New("the cgroup v1 cpuset hierarchy is not mounted")
	}
	for _, cg := range cgs {
		if cg.HierarchyID != 0 {
			continue
		}
		for _, m := range mounts {
			if m.FSType != "cgroup2" {
				continue
			}
			for p := cgroup2.Within(cg.Path, m.Root); ; p = path.Dir(p) {
				s, err := readCPUs(read, filepath.Join(m.Mountpoint, p, "cpuset.cpus.effective"))
				if !errors.Is(err, fs.ErrNotExist) || p == "/" {
					return s, err
				}
			}
		}
	}
	return nil, errors.New("no cgroup with a cpuset")
}

// readCPUs parses a cpuset file; an empty one (a v1 cgroup no CPU was
// given yet) is an error, not "no CPU allowed".
func readCPUs(read func(string) ([]byte, error), file string) (cpuset.Set, error) {
	b, err := read(file)
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return nil, fmt.Errorf("%s is empty", file)
	}
	s, err := cpuset.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Isolated are the CPUs the kernel keeps RPS off: those isolated from
// the scheduler (isolcpus=) and the adaptive-tick ones (nohz_full=), CPU
// lists under sysRoot ("/sys"). Since Linux 5.10 ("net: Restrict receive
// packets queuing to housekeeping CPUs") store_rps_map drops them from a
// mask written to rps_cpus, and refuses one left empty. Either file is
// absent on kernels built without the feature, and nohz_full reads
// "(null)" or nothing where none was asked for: none of its CPUs then.
func Isolated(sysRoot string) (cpuset.Set, error) {
	var out cpuset.Set
	for _, f := range []string{"isolated", "nohz_full"} {
		file := filepath.Join(sysRoot, "devices/system/cpu", f)
		b, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		text := strings.TrimSpace(string(b))
		if text == "" || text == "(null)" {
			continue
		}
		set, err := cpuset.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, set...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
