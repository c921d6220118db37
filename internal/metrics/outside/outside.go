// Package outside measures the CPU time this machine spent on processes
// outside a run: user processes in the host's network namespace that are
// neither cnibench nor started by it. The noise guard (runner) marks a
// trial disturbed when that share is high: a compile or a backup beside a
// benchmark moves its numbers, and a run on a shared machine should say
// so rather than average it in.
//
// What counts: for each such process, utime+stime plus cutime+cstime (the
// CPU of its children it has reaped), so short-lived children of a
// long-lived parent (a compiler under `go build`, `make -j`) are counted
// when they end. Not counted: a whole process tree that starts and ends
// inside the window, kernel threads (they carry the run's own softirq
// work), and processes in other network namespaces (the run's pods and
// nodes; on this engine those are the run's, or another run's).
package outside

import (
	"fmt"
	"os"

	"github.com/prometheus/procfs"
)

// pfKthread is PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
const pfKthread = 0x00200000

// Snapshot is the cumulative CPU ticks of the outside processes at one
// moment, by PID.
type Snapshot map[int]uint64

// Take scans fs for the processes outside the run whose root process is
// self (cnibench's PID, which runs in the host's network namespace): a
// process is skipped when it is a kernel thread, self or a descendant of
// self, or in another network namespace than self's. A process whose
// namespace cannot be read (in a container, PID 1 of the host may be
// hidden so) is skipped too: it cannot be told apart from a pod's.
func Take(fs procfs.FS, self int) (Snapshot, error) {
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	hostNet, err := netInode(fs, self)
	if err != nil {
		return nil, err
	}
	stats := make(map[int]procfs.ProcStat, len(procs))
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // ended while we looked
		}
		stats[p.PID] = st
	}
	out := Snapshot{}
	for pid, st := range stats {
		if st.Flags&pfKthread != 0 || descends(stats, pid, self) {
			continue
		}
		if ino, err := netInode(fs, pid); err != nil || ino != hostNet {
			continue
		}
		out[pid] = Ticks(st)
	}
	return out, nil
}

// Ticks is a process's own and reaped children's CPU time in clock ticks.
func Ticks(st procfs.ProcStat) uint64 {
	return uint64(st.UTime) + uint64(st.STime) + uint64(max(st.CUTime, 0)) + uint64(max(st.CSTime, 0))
}

// descends reports whether pid is root or one of its descendants.
func descends(stats map[int]procfs.ProcStat, pid, root int) bool {
	for hops := 0; pid > 0 && hops < 4096; hops++ {
		if pid == root {
			return true
		}
		st, ok := stats[pid]
		if !ok {
			return false
		}
		pid = st.PPID
	}
	return false
}

func netInode(fs procfs.FS, pid int) (uint32, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	ns, err := p.Namespaces()
	if err != nil {
		return 0, fmt.Errorf("namespaces of %d: %w", pid, err)
	}
	n, ok := ns["net"]
	if !ok {
		return 0, fmt.Errorf("process %d has no net namespace link", pid)
	}
	return n.Inode, nil
}

// Ticks between two snapshots: for each process in both, what it used in
// between (a process whose counter fell is a new process with a reused
// PID and counts from zero). Processes only in b started inside the
// window and count in full.
func Between(a, b Snapshot) uint64 {
	var sum uint64
	for pid, tb := range b {
		ta, ok := a[pid]
		if !ok || tb < ta {
			sum += tb
			continue
		}
		sum += tb - ta
	}
	return sum
}

// Percent is ticks as a share of the machine's CPU time over seconds:
// 100 means every CPU was busy with outside processes the whole time.
// Reaped children count their whole CPU time when they end, part of it
// from before the window (a compiler under `go build`), so the ticks can
// exceed the window's CPU time; the share stops at 100 (a trial beside a
// build read "203.7%").
func Percent(ticks uint64, seconds float64, cpus int) float64 {
	if seconds <= 0 || cpus <= 0 {
		return 0
	}
	return min(100, 100*float64(ticks)/float64(userHZ)/seconds/float64(cpus))
}

// userHZ is USER_HZ, the unit of /proc's tick counters: 100 on every
// Linux architecture cnibench runs on (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// Self is this process's PID, the root of the run's processes.
func Self() int { return os.Getpid() }
