package runner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// stealWindow is a window of two cores, the first with steal v, the
// second offline at the end (its 0 is no reading and must not halve v).
func stealWindow(v float64) metrics.Window {
	return metrics.Window{Cores: []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Steal: v}}, {CPU: 1}}, Offline: []int{1}}
}

// A cluster's client node runs a kernel of its own on a machine of its
// own: its steal is recorded beside the server node's, and the guard
// judges the larger, naming the node. Before, only the server node's
// was judged: a client VM with 30% steal left the trial unmarked. Where
// the nodes share one kernel (no client window) nothing changes.
func TestClientStealJudged(t *testing.T) {
	g := study.Noise{MaxStealPct: 10, MaxOutsidePct: 25, Repeats: 1}
	server, client := stealWindow(2), stealWindow(30)
	n := trialNoise(collect.Result{CPU: &server, Client: &client}, span{})
	if n.StealPct != 2 || n.ClientStealPct == nil || *n.ClientStealPct != 30 {
		t.Fatalf("noise %+v; want the server's steal 2 and the client's 30 recorded", n)
	}
	if got := disturbed(*n, g, false); got != "steal 30.0% on the client node > 10%" {
		t.Errorf("client node at 30%% steal: disturbed %q", got)
	}
	if got := barOf(*n, g, false); got != (quietBar{steal: 10}) {
		t.Errorf("client node at 30%% steal: quiet bar %+v, want steal 10", got)
	}

	server, client = stealWindow(14), stealWindow(3)
	n = trialNoise(collect.Result{CPU: &server, Client: &client}, span{})
	if got := disturbed(*n, g, false); got != "steal 14.0% on the server node > 10%" {
		t.Errorf("server node at 14%% steal: disturbed %q", got)
	}

	server, client = stealWindow(8), stealWindow(9)
	n = trialNoise(collect.Result{CPU: &server, Client: &client}, span{})
	if got := disturbed(*n, g, false); got != "" {
		t.Errorf("both nodes under the bound: disturbed %q", got)
	}

	// One kernel (emulated nodes, a kind-style cluster): the server
	// window is the machine's, and there is no client steal.
	server = stealWindow(12)
	n = trialNoise(collect.Result{CPU: &server}, span{})
	if n.ClientStealPct != nil {
		t.Errorf("one kernel: client steal %g recorded", *n.ClientStealPct)
	}
	if got := disturbed(*n, g, false); got != "steal 12.0% > 10%" {
		t.Errorf("one kernel at 12%% steal: disturbed %q", got)
	}
}

// stealKernel's CPU sampler gives windows whose first core's steal is
// taken from a list, one per window (the last over and over); startErr
// fails its Start.
type stealKernel struct {
	engine.Kernel
	steal         []float64
	starts, stops int
	startErr      error
}

func (k *stealKernel) CPU() engine.Sampler { return k }
func (k *stealKernel) Start() error {
	if k.startErr != nil {
		return k.startErr
	}
	k.starts++
	return nil
}
func (k *stealKernel) Stop() (metrics.Window, error) {
	v := k.steal[min(k.stops, len(k.steal)-1)]
	k.stops++
	return stealWindow(v), nil
}

// nodesCluster is a cluster of nodes "s" and "c".
type nodesCluster struct{ engine.Cluster }

func (nodesCluster) Server() engine.Node { return sysNode{name: "s"} }
func (nodesCluster) Client() engine.Node { return sysNode{name: "c"} }

// kernelEngine reads each node through its kernel from a map by name.
type kernelEngine struct {
	stubEngine
	k map[string]*stealKernel
}

func (e kernelEngine) Kernel(n engine.Node) engine.Kernel { return e.k[n.Name()] }

// On a cluster the quiet wait reads the nodes through their kernels'
// CPU samplers (the kube engine's agents): the larger of the two nodes'
// steal, over their online cores, or the server node's alone where the
// nodes share a kernel. Every sampler started is stopped, also when
// another node's fails to start or the run is cancelled.
func TestNodesMeter(t *testing.T) {
	ks := map[string]*stealKernel{"s": {steal: []float64{3}}, "c": {steal: []float64{25}}}
	kernel := func(n engine.Node) engine.Kernel { return ks[n.Name()] }
	steal, out, err := nodesMeter(nodesCluster{}, kernel, false)(context.Background(), 10*time.Millisecond)
	if err != nil || steal != 25 || out != 0 {
		t.Errorf("two nodes: steal %g, outside %g, %v; want the client's 25, no outside CPU", steal, out, err)
	}
	steal, _, err = nodesMeter(nodesCluster{}, kernel, true)(context.Background(), 10*time.Millisecond)
	if err != nil || steal != 3 || ks["c"].starts != 1 {
		t.Errorf("one kernel: steal %g, %v, client sampled %d times; want the server's 3, the client's once (before)", steal, err, ks["c"].starts)
	}

	ks = map[string]*stealKernel{"s": {steal: []float64{3}}, "c": {steal: []float64{25}, startErr: errors.New("agent gone")}}
	if _, _, err := nodesMeter(nodesCluster{}, kernel, false)(context.Background(), 10*time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "node c: agent gone") || ks["s"].stops != ks["s"].starts {
		t.Errorf("client sampler failed: %v, server started %d and stopped %d times", err, ks["s"].starts, ks["s"].stops)
	}

	ks = map[string]*stealKernel{"s": {steal: []float64{3}}, "c": {steal: []float64{25}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := nodesMeter(nodesCluster{}, kernel, false)(ctx, time.Hour); !errors.Is(err, context.Canceled) ||
		ks["s"].stops != 1 || ks["c"].stops != 1 {
		t.Errorf("cancelled: %v, samplers stopped %d and %d times", err, ks["s"].stops, ks["c"].stops)
	}
}

// A one-cell round's repeat on a cluster waits for quiet nodes, read
// through the engine's kernels: before, it started at once, inside the
// burst of steal that disturbed its attempt.
func TestBeforeRepeatWaitsForQuietNodes(t *testing.T) {
	var log bytes.Buffer
	r := newRoundsRun(t, roundsStudy(t), t.TempDir(), &log)
	ks := map[string]*stealKernel{"s": {steal: []float64{2}}, "c": {steal: []float64{4}}}
	r.engine = kernelEngine{k: ks}
	r.plan.remote = true
	r.attemptsRun = 3
	if err := r.beforeRepeat(context.Background(), nodesCluster{}, "x trial 2", attemptsSoFar{bar: quietBar{steal: 10}, at: 3}); err != nil {
		t.Fatal(err)
	}
	if ks["s"].stops != 1 || ks["c"].stops != 1 ||
		!strings.Contains(log.String(), "note: x trial 2: nodes quiet after 1 s (steal 4.0%, bound 10% over the last second); repeating it") {
		t.Errorf("nodes sampled %d and %d times, log %q; want each once, quiet at the client's 4%%", ks["s"].stops, ks["c"].stops, log.String())
	}
}
