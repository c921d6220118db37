package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
)

// hostLockPath is the machine's lock (journal.HostLockPath; tests use
// their own).
var hostLockPath = journal.HostLockPath

// changesThisMachine says whether a run changes this machine's own
// values, and so takes the machine's lock whatever its journal directory,
// and why, for a refusal: a local run does; a kube run does when its
// nodes run on this machine's kernel (kind, k3d, the test cluster: their
// kubelets report this machine's boot ID), since its agents then write
// this machine's RFS table, global sysctls and CPU idle limits, and a
// local run beside it would journal its values as the old ones. A kube
// run on other machines' kernels changes nothing here and needs no root
// here. Without its cluster's configuration (advise's lock over its
// candidates) a kube run cannot tell, and takes none: each of its runs
// then decides for itself.
func changesThisMachine(opt Options) (bool, string, error) {
	if opt.Engine != "kube" {
		return true, "", nil
	}
	if opt.Kube == nil {
		return false, "", nil
	}
	local, err := localBootID()
	if err != nil {
		return false, "", fmt.Errorf("read this machine's boot ID, to tell whether the run's nodes run on its kernel: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := kubeBootIDs(ctx, *opt.Kube)
	if err != nil {
		return false, "", fmt.Errorf("find whether the run's nodes run on this machine's kernel (a kube run there takes its lock, as a local run does): %w", err)
	}
	nodes := onThisKernel(local, ids)
	if len(nodes) == 0 {
		return false, "", nil
	}
	return true, fmt.Sprintf("node %s runs on this machine's kernel (boot ID %s), so the kube run changes this machine's values "+
		"(the RFS table, global sysctls, the CPUs' idle limits) through its agents, as a local run does, and takes the machine's lock "+
		"(with sudo, give --kubeconfig: sudo resets KUBECONFIG and HOME)", strings.Join(nodes, ", "), local), nil
}

// onThisKernel are the nodes of ids (boot IDs by node name) whose boot
// ID is local, sorted.
func onThisKernel(local string, ids map[string]string) []string {
	var out []string
	for n, id := range ids {
		if local != "" && id == local {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// localBootID is this machine's boot ID and kubeBootIDs the kube run's
// nodes' (tests replace them).
var (
	localBootID = journal.BootID
	kubeBootIDs = kube.NodeBootIDs
)

// LockMachine takes the machine's lock (journal.LockHost) for runs that
// change this machine (changesThisMachine), or returns a nil lock when
// they do not (kube, on other machines' nodes). A refusal is a
// *PreflightError. A caller that holds it over several runs sets their
// Options.MachineLocked.
func LockMachine(opt Options) (*journal.Lock, error) {
	changes, why, err := changesThisMachine(opt)
	if err != nil {
		return nil, &PreflightError{err}
	}
	if !changes {
		return nil, nil
	}
	l, err := journal.LockHost(hostLockPath)
	if err != nil {
		if why != "" {
			err = fmt.Errorf("%s: %w", why, err)
		}
		return nil, &PreflightError{err}
	}
	return l, nil
}
