package tune

import (
	"errors"
	"maps"
	"slices"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// hostValueFS hides the fake's Writable: an FS that cannot tell a
// file's mode, as a node's agent.
type hostValueFS struct{ FS }

// A sysctl every namespace shows but only the host's may write (a child
// namespace reads the host's value, 0444: nf_conntrack_max) is global:
// written once on the host, journaled and reverted, never in the node's
// or the pods' namespaces, where the write failed mid-run with
// "permission denied". An FS that tells modes finds any such sysctl;
// one that cannot (an agent) has the kernel's known ones.
func TestSysctlReadOnlyInNetnsIsGlobal(t *testing.T) {
	const ctMax, ro = "/proc/sys/net/netfilter/nf_conntrack_max", "/proc/sys/net/newproto/table_max"
	setup := func(p string) (*fakeFS, Target) {
		f, tgt := fixture()
		tgt.NodeNetns = nodeNS
		for _, ns := range []string{"", nodeNS, pod0NS, pod1NS} {
			f.vals[key(ns, FSProc, p)] = "65536"
			f.readOnly[key(ns, FSProc, p)] = ns != ""
		}
		return f, tgt
	}
	for _, tc := range []struct {
		name, sysctl, path string
		fs                 func(*fakeFS) FS
	}{
		{"known, an FS that tells modes", "net.netfilter.nf_conntrack_max", ctMax, func(f *fakeFS) FS { return f }},
		{"known, an FS that cannot tell", "net.netfilter.nf_conntrack_max", ctMax, func(f *fakeFS) FS { return hostValueFS{f} }},
		{"found by its mode", "net.newproto.table_max", ro, func(f *fakeFS) FS { return f }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, tgt := setup(tc.path)
			tu := study.Tuning{Name: "ct", Pods: true, Sysctls: map[string]string{tc.sysctl: "262144"}}
			fs := tc.fs(f)
			plan, err := Plan(tu, tgt, fs)
			want := []Change{{FS: FSProc, Path: tc.path, Value: "262144"}}
			if err != nil || !slices.Equal(plan, want) {
				t.Fatalf("Plan = %v, %v; want %v (the host's only)", plan, err, want)
			}
			before := f.snapshot()
			a, err := Apply(openJournal(t), fs, tu, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if v := f.get("", FSProc, tc.path); v != "262144" {
				t.Errorf("the host's %s = %q after Apply, want 262144", tc.sysctl, v)
			}
			if err := a.Revert(); err != nil {
				t.Fatal(err)
			}
			if got := f.snapshot(); !maps.Equal(got, before) {
				t.Errorf("after revert:\n%v\nwant:\n%v", got, before)
			}
		})
	}
	// The fake is the kernel here: written in a child namespace, it fails.
	f, _ := setup(ctMax)
	if err := f.Write(nodeNS, FSProc, ctMax, "1"); !errors.Is(err, syscall.EACCES) {
		t.Errorf("write in the node's namespace = %v, want EACCES", err)
	}
}

// A listed sysctl a kernel gives each namespace its own writable copy
// of is written where the run's sockets read it, when the FS can tell:
// the file's mode, not the list, decides.
func TestListedSysctlWritableInNetnsIsPerNamespace(t *testing.T) {
	const rmem = "/proc/sys/net/core/rmem_max"
	f, tgt := fixture()
	tgt.NodeNetns = nodeNS
	for _, ns := range []string{"", nodeNS, pod0NS, pod1NS} {
		f.vals[key(ns, FSProc, rmem)] = "212992"
	}
	tu := study.Tuning{Name: "rmem", Sysctls: map[string]string{"net.core.rmem_max": "4194304"}}
	plan, err := Plan(tu, tgt, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || plan[0].Netns != nodeNS {
		t.Errorf("Plan = %v, want the node's namespace's copy only", plan)
	}
}
