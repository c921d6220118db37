package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/tune"
)

// unreachableCluster's teardown fails, as a kube cluster's does when the
// API server went away mid-run.
type unreachableCluster struct {
	engine.Cluster
	closed bool
}

func (c *unreachableCluster) Server() engine.Node { return sysNode{name: "s"} }
func (c *unreachableCluster) Client() engine.Node { return sysNode{name: "c"} }
func (c *unreachableCluster) Close() error {
	c.closed = true
	return errors.New("delete pods: the server is unreachable")
}

type teardownEngine struct{ upEngine }

func (teardownEngine) FS(n engine.Node) tune.FS { return nodeFS{node: n.Name()} }

// TestTeardownErrorJoinedToTheRunsOwn: a datapath whose work failed (or
// was stopped) and whose teardown failed too reports both, the work's
// first: before, Close's error was dropped whenever the run had already
// failed, which is when a teardown is likeliest to fail (API server
// unreachable, pods stuck), and nothing said objects remain.
func TestTeardownErrorJoinedToTheRunsOwn(t *testing.T) {
	s := parseSpec(t, "  datapaths: [bridge]\n  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n")
	out, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &unreachableCluster{}
	r := &run{engine: teardownEngine{upEngine{c: c}}, study: s, out: out, clusters: 1,
		plan: &plan{datapaths: map[string]engine.Datapath{}}}
	stopped := errors.New("trial 3: context canceled")
	err = r.upDatapath(context.Background(), s.Spec.Datapaths[0], func(engine.Cluster, *knob.Target) error { return stopped }, notLost)
	if !c.closed {
		t.Fatal("cluster not closed")
	}
	if !errors.Is(err, stopped) || err == nil || !strings.HasPrefix(err.Error(), stopped.Error()+"\n") ||
		!strings.Contains(err.Error(), "tear down bridge: delete pods: the server is unreachable") {
		t.Errorf("upDatapath = %v; want the work's error first, then the teardown's", err)
	}
}
