package tune_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// TestKernelSysctlReadOnlyInNetns: nf_conntrack_max exists in every
// network namespace but a child one shows the host's value read-only
// (0444; writing it there is "permission denied"). A tuning of it was
// planned in the node's and pods' namespaces and failed mid-run; it is
// the host's value, planned, applied and reverted there like
// net.core.netdev_max_backlog.
func TestKernelSysctlReadOnlyInNetns(t *testing.T) {
	tunetest.RequireKernel(t)
	const name = "net.netfilter.nf_conntrack_max"
	p := study.SysctlPath(name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: no %s on this host (nf_conntrack not loaded): %v", p, err)
	}
	tunetest.LockMachine(t)
	bed := tunetest.New(t, tunetest.NewID())
	fs := tune.LocalFS{}
	// nf_conntrack registers the sysctl in every namespace once loaded,
	// which the host's file shows: the node's read failing is a fault.
	if _, err := fs.Read(bed.Node, tune.FSProc, p); err != nil {
		t.Fatalf("the node's namespace does not show %s, the host's does: %v", p, err)
	}
	// The kernel's side: read-only in the node's namespace, not the host's.
	if w, err := fs.Writable(bed.Node, tune.FSProc, p); err != nil || w {
		t.Fatalf("Writable in the node's namespace = %v, %v; want false", w, err)
	}
	if w, err := fs.Writable("", tune.FSProc, p); err != nil || !w {
		t.Fatalf("Writable on the host = %v, %v; want true", w, err)
	}
	if err := fs.Write(bed.Node, tune.FSProc, p, "1"); !errors.Is(err, syscall.EACCES) {
		t.Errorf("write in the node's namespace = %v, want permission denied", err)
	}

	before, err := fs.Read("", tune.FSProc, p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(before)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(n + 1024)
	tu := study.Tuning{Name: "ct", Pods: true, Sysctls: map[string]string{name: want}}
	tgt := tune.Target{NodeIfaces: bed.NodeIfaces, PodIfaces: bed.PodIfaces, NodeNetns: bed.Node,
		CPUs: tunetest.OnlineCPUs(t), SoftIRQCore: -1}
	plan, err := tune.Plan(tu, tgt, fs)
	if wantPlan := []tune.Change{{FS: tune.FSProc, Path: p, Value: want}}; err != nil || !slices.Equal(plan, wantPlan) {
		t.Fatalf("Plan = %v, %v; want %v", plan, err, wantPlan)
	}
	a, err := tune.Apply(tunetest.HostJournal(t), fs, tu, tgt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Revert() })
	if v, err := fs.Read("", tune.FSProc, p); err != nil || v != want {
		t.Errorf("the host's %s = %q, %v; want %s", name, v, err, want)
	}
	// The node's namespace reads the host's value: the tuning holds there.
	if v, err := fs.Read(bed.Node, tune.FSProc, p); err != nil || strings.TrimSpace(v) != want {
		t.Errorf("%s in the node's namespace = %q, %v; want the host's %s", name, v, err, want)
	}
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	if v, err := fs.Read("", tune.FSProc, p); err != nil || v != before {
		t.Errorf("the host's %s after Revert = %q, %v; want %s", name, v, err, before)
	}
}
