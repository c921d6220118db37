// Package workloadtest builds throw-away emulated clusters for the kernel
// tests of workload drivers and metrics: two nodes (network namespaces
// named "cnb-t<hex>-*") joined by an underlay veth, wired by a real
// datapath, removed in t.Cleanup. Traffic only ever goes to addresses of
// pods these helpers created.
package workloadtest

import (
	"context"
	"os"
	"testing"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/workload"
)

// RequireRoot skips the test when it cannot create namespaces.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("skipped: kernel test needs root (creates network namespaces)")
	}
}

// Cluster builds an emulated two-node cluster on datapath dp with n pod
// pairs (servers on the server node, clients on the client node). It
// skips when not root or when the kernel lacks the datapath's features.
func Cluster(tb testing.TB, dp string, n int) (*local.Cluster, []workload.Pair) {
	tb.Helper()
	RequireRoot(tb)
	d, err := catalog.Lookup(dp)
	if err != nil {
		tb.Fatal(err)
	}
	return ClusterOf(tb, d, n)
}

// ClusterOf is Cluster on datapath d as given (one another
// implementation builds, catalog.Build).
func ClusterOf(tb testing.TB, d datapath.Datapath, n int) (*local.Cluster, []workload.Pair) {
	tb.Helper()
	RequireRoot(tb)
	if err := probe.Require(d.Features()...); err != nil {
		tb.Skipf("skipped: %v", err)
	}
	id := kerneltest.RunID()
	c, err := local.Up(context.Background(), local.Config{RunID: id, Datapath: d, Recorder: kerneltest.Journal(tb, id), Kill: cleanup.KillInNetns})
	if err != nil {
		tb.Fatalf("up %s: %v", d.Name(), err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("close cluster: %v", err)
		}
		for _, ns := range c.Namespaces() {
			if netns.Exists(ns) {
				tb.Errorf("namespace %s left behind", ns)
			}
		}
	})
	srv, cli, err := c.Scale(context.Background(), n)
	if err != nil {
		tb.Fatalf("scale to %d pairs: %v", n, err)
	}
	return c, Pairs(srv, cli)
}

// Pairs zips server and client pods into pairs, each with its server
// pod's port as the runner's placement gives it.
func Pairs(srv, cli []engine.Pod) []workload.Pair {
	out := make([]workload.Pair, len(srv))
	for i := range srv {
		out[i] = workload.Pair{Server: srv[i], Client: cli[i], Port: engine.BasePort + i}
	}
	return out
}
