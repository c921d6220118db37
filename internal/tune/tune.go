// Package tune applies a study.Tuning (RPS masks, RFS tables, network
// sysctls) to the server node and its pods, and puts every value back
// afterwards.
//
// Design notes:
//
//   - Plan is pure: it turns a tuning and a target into the list of writes
//     (one per receive queue of each device, plus the global
//     rps_sock_flow_entries once on the host, plus each sysctl where the
//     kernel keeps it). It only lists queues and looks for sysctls.
//   - Apply reads each old value, journals {old, new} (fsync'ed) and only
//     then writes, reading the value back to check the kernel took it. On
//     any error it undoes what it did. A write that fails or reads back
//     otherwise may still have changed the value (the kernel stores a
//     multi-value sysctl field by field up to the first bad one), so
//     what it reads back is journaled as the run's too, with the same old
//     value: Revert and a replay then recognise it and put the old one
//     back. Only a crash between such a write and that journal line
//     leaves a value neither old nor new, which a replay leaves alone. Revert writes the old values back
//     in reverse order; so does RevertReplay from a dead run's journal.
//   - Values are compared by meaning, not text: the kernel prints masks
//     padded to the CPU count ("3" on 2 CPUs, "00000003" written) and
//     in comma-separated words past 32 CPUs.
//   - A namespace that is gone took its devices and their values with it;
//     that counts as reverted (ErrGone), as CNI's DEL treats a missing
//     container.
//   - The host-global rps_sock_flow_entries is shared by everything on the
//     machine: two runs tuning at once would revert each other's value.
package tune

import (
	"errors"
	"fmt"
	"path"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// FS kinds (the strings the journal records).
const (
	FSSysfs = journal.FSSysfs
	FSProc  = journal.FSProc
)

// SockFlowEntriesPath is the global RFS table size (a host sysctl:
// net.core.rps_sock_flow_entries).
const SockFlowEntriesPath = "/proc/sys/net/core/rps_sock_flow_entries"

// SockFlowEntriesSysctl is its name, Snapshot's key for it.
const SockFlowEntriesSysctl = "net.core.rps_sock_flow_entries"

// Sentinel errors.
var (
	// ErrGone means the namespace or device holding a value no longer
	// exists. Reverting such a value is done: it vanished with its owner.
	ErrGone = errors.New("namespace or device is gone")
	// ErrBadPath means a path escapes its root or has the wrong form.
	ErrBadPath = errors.New("bad tuning path")
	// ErrNoSysctl means a /proc/sys file does not exist in the namespace
	// it was looked for in: the sysctl is global (in the initial
	// namespace only), or this kernel lacks it.
	ErrNoSysctl = errors.New("no such sysctl in this namespace")
	// ErrNotSupported means the kernel lacks the knob: RPS and RFS need a
	// kernel built with CONFIG_RPS (every distribution kernel has it).
	ErrNotSupported = errors.New("kernel lacks RPS/RFS (CONFIG_RPS)")
	// ErrNodeBusy means a run's claim of a cluster node (at its cluster's
	// Up), or a write, was refused because another run's session holds
	// the node: a node's agent lets one run at a time use it, measuring or
	// changing (agent.ErrNodeBusy is it). The run stops: every later
	// claim or write would be refused too.
	ErrNodeBusy = errors.New("node busy")
	// ErrNodeUnclean means a write was refused because a dead session's
	// changes on the node could not be put back first (a journal that
	// cannot be read, or a revert that fails): the node's values are not
	// known to be its own. The run stops, as for ErrNodeBusy, until the
	// operator has looked (cnibench cleanup --kube).
	ErrNodeUnclean = errors.New("node holds a dead session's changes")
)

// FS reads and writes kernel knobs of a namespace. fsKind "sysfs": path is
// relative to the namespace's own sysfs root
// ("class/net/eth1/queues/rx-0/rps_cpus"); fsKind "proc": path is an
// absolute /proc/sys path as the namespace sees it (netns "": the host's;
// a sysctl the namespace does not show: ErrNoSysctl). Implementations
// return an error wrapping ErrGone when the namespace or device does not
// exist.
type FS interface {
	Read(netns, fsKind, path string) (string, error)
	Write(netns, fsKind, path, value string) error
	// List returns the entry names of a directory (to find rx-N queues).
	List(netns, fsKind, dir string) ([]string, error)
}

// WritableFS is an FS that also tells whether a namespace may write a
// /proc/sys file it shows (LocalFS, by the file's mode). Plan asks it
// where a sysctl goes: one a child namespace shows read-only is the
// host's (perNamespace).
type WritableFS interface {
	Writable(netns, fsKind, path string) (bool, error)
}

// Target is what a tuning is applied to.
type Target struct {
	// NodeIfaces are the server node's devices: underlay NIC, tunnel
	// device, host-side veths of the pods.
	NodeIfaces []netns.Iface
	// PodIfaces are eth0 inside each server pod (used when Tuning.Pods).
	PodIfaces []netns.Iface
	// NodeNetns is the server node's network namespace, where a
	// per-namespace sysctl goes ("": the host's, as on a real node).
	NodeNetns string
	// CPUs are the machine's CPUs, which masks are computed from and a
	// cpuIdle tuning bounds.
	CPUs cpuset.Set
	// SoftIRQCore is the core excluded by "all-but-softirq-core"; -1 means
	// unknown, and then the highest CPU is used, as the paper's core 3 of 4.
	SoftIRQCore int
	// NodeWhere and PodsWhere name the node and the pods in the record
	// of what was set (Settings): results.WhereNode and WherePods when
	// "", the client end's names for a client-side tuning.
	NodeWhere, PodsWhere string
}

// Change is one value to write.
type Change struct {
	Netns string
	FS    string
	Path  string
	Value string
}

func (c Change) String() string {
	ns := c.Netns
	if ns == "" {
		ns = "host"
	}
	return fmt.Sprintf("%s %s:%s=%s", ns, c.FS, c.Path, c.Value)
}

// MismatchError means a value read back differs from the value written.
type MismatchError struct {
	Change Change
	Got    string
}

func (e *MismatchError) Error() string {
	msg := fmt.Sprintf("%s: kernel holds %q after writing %q", e.Change, e.Got, e.Change.Value)
	if path.Base(e.Change.Path) == "rps_cpus" {
		// Since Linux 5.10 store_rps_map drops the isolated CPUs.
		msg += " (isolated CPUs (isolcpus/nohz_full)? the kernel keeps RPS off them)"
	}
	return msg
}

// WriteBack writes old back to a knob and reads it back: a revert is done
// only when the knob holds old again. A write can succeed and change
// nothing: the kernel's proc_do_large_bitmap (ip_local_reserved_ports)
// ignores a write with nothing left to parse, so an empty value written
// without LocalFS's newline left the run's ports reserved while the entry
// was marked restored.
func WriteBack(fs FS, ns, fsKind, p, old string) error {
	if err := fs.Write(ns, fsKind, p, old); err != nil {
		return err
	}
	got, err := fs.Read(ns, fsKind, p)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if !Equal(p, got, old) {
		return &MismatchError{Change: Change{Netns: ns, FS: fsKind, Path: p, Value: old}, Got: got}
	}
	return nil
}
