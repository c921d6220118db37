package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// TestCountedPathLeavesOutSetUpTraffic runs a counting cell three times
// with no pause, the first trial right after its pods are made, and
// checks every trial counts the same iptables path: the multicast reports
// of the new interfaces (which Kube-router's masquerade rule meets) are
// out before the first window opens (countersSettle), and the first
// contact's ARP broadcast (which Weave floods over its VXLAN to the other
// node, intra-host too) happened before it (the runner's greeting).
func TestCountedPathLeavesOutSetUpTraffic(t *testing.T) {
	for _, tc := range []struct{ datapath, workload string }{
		{"kube-router", "{name: tcp-inter, tool: iperf3, protocol: tcp, length: 1M, counters: true}"},
		{"weave", "{name: tcp-intra, tool: iperf3, protocol: tcp, length: 1M, counters: true, placement: intra-node}"},
	} {
		t.Run(tc.datapath, func(t *testing.T) {
			run := runLocal(t, "cni-compare", []string{"iperf3", "iptables-save"}, study.Options{Set: []string{
				"datapaths=[" + tc.datapath + "]", "workloads=[" + tc.workload + "]",
				"trials=3", "duration=3s", "warmup=1s", "cooldown=0s",
			}})
			var paths [][2]float64
			for _, smp := range run.Samples {
				paths = append(paths, [2]float64{smp.Metrics[iptables.MetricPathChains], smp.Metrics[iptables.MetricPathRules]})
			}
			if len(paths) != 3 {
				t.Fatalf("%d trials with a path, want 3", len(paths))
			}
			for i, p := range paths {
				if p[0] <= 0 || p != paths[len(paths)-1] {
					t.Errorf("trial %d counted %v chains/rules, the last %v: every trial's path should be the measured flow's alone", i+1, p, paths[len(paths)-1])
				}
			}
		})
	}
}

// runLocal resolves a built-in study and runs it on the local engine, as
// root, with the tools it needs (skipped with the reason otherwise, and
// when the kernel lacks a feature the study needs), and loads the run.
func runLocal(t *testing.T, name string, tools []string, opt study.Options) *results.Run {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (builds emulated nodes)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err2 := exec.LookPath("/usr/sbin/" + tool); err2 != nil {
				t.Skipf("skipped: %s not installed", tool)
			}
		}
	}
	s, err := study.Resolve(name, opt, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	runIDPrefix = "t"
	t.Cleanup(func() { runIDPrefix = "" })
	out := filepath.Join(t.TempDir(), "run")
	dir, err := Run(context.Background(), Options{Study: s, OutDir: out, JournalDir: t.TempDir(), Progress: progress.New(io.Discard)})
	if errors.Is(err, probe.ErrUnsupported) {
		// The full-kernel VM has every kernel feature: one missing there
		// is a broken probe or VM (as kerneltest.RequireKernel).
		if k := kernelMissing(err); k != nil && os.Getenv("CNIBENCH_IN_VM") != "" {
			t.Fatalf("in the full-kernel VM: %v", k)
		}
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatalf("run %s: %v", dir, err)
	}
	run, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// kernelMissing is the first *probe.UnsupportedError of kind kernel in
// err's tree (a refusal joins several, of any kind), or nil.
func kernelMissing(err error) *probe.UnsupportedError {
	var ue *probe.UnsupportedError
	if errors.As(err, &ue) && ue.Kind == probe.KindKernel {
		return ue
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if k := kernelMissing(e); k != nil {
				return k
			}
		}
	case interface{ Unwrap() error }:
		return kernelMissing(u.Unwrap())
	}
	return nil
}
