package collect

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/workload"
)

// tracerNode traces with a fixed result and records what it was asked.
type tracerNode struct {
	fakeNode
	path    nftrace.Path
	addrs   []netip.Addr
	running bool
}

func (n *tracerNode) Trace(_ context.Context, addrs []netip.Addr) (engine.Trace, error) {
	n.addrs, n.running = addrs, true
	return nodeTrace{n}, nil
}

type nodeTrace struct{ n *tracerNode }

type failingTracer struct{ fakeNode }

func (failingTracer) Trace(context.Context, []netip.Addr) (engine.Trace, error) {
	return nil, errors.New("nft add table: exit status 1: Error: no nft_limit")
}

func (t nodeTrace) Stop() (map[string]float64, error) {
	t.n.running = false
	return t.n.path.Metrics(), nil
}

// TestTraceCollector: both nodes trace the pairs' addresses and the
// address the driver connects to (a Service's); the paths are summed; the
// window's start ends the trace once it ran a second, not before; a node
// that cannot trace leaves the metrics out.
func TestTraceCollector(t *testing.T) {
	pair := workload.Pair{Server: fakePod{}, Client: fakePod{}}
	driven := workload.Pair{Server: engine.Front(fakePod{}, net.IPv4(10, 96, 0, 7)), Client: fakePod{}}
	for _, tc := range []struct {
		name     string
		traced   time.Duration
		stopAtWS bool
	}{{"short warm-up: traced to the end", 0, false}, {"window start ends it", minTrace, true}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &tracerNode{path: nftrace.Path{Chains: 3, Rules: 4, Packets: 10}}, &tracerNode{path: nftrace.Path{Chains: 1, Rules: 2, Packets: 5}}
			c := &traceCollector{nodes: []engine.Node{a, b}, addrs: pairAddrs(Trial{Pairs: []workload.Pair{pair}, Driven: []workload.Pair{driven}})}
			ctx := context.Background()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			want := []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.96.0.7")}
			if !slices.Equal(a.addrs, want) || !slices.Equal(b.addrs, want) {
				t.Errorf("traced %v and %v, want %v", a.addrs, b.addrs, want)
			}
			c.started = c.started.Add(-tc.traced)
			if err := c.WindowStart(ctx); err != nil {
				t.Fatal(err)
			}
			if a.running == tc.stopAtWS {
				t.Errorf("after the window's start: trace running %v", a.running)
			}
			r, err := c.Stop(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Metrics[nftrace.MetricChains] != 4 || r.Metrics[nftrace.MetricRules] != 6 || r.Metrics[nftrace.MetricPackets] != 15 || a.running || b.running {
				t.Errorf("metrics %v (running %v %v)", r.Metrics, a.running, b.running)
			}
		})
	}
	// A node whose kernel cannot trace: the trial goes on, the other
	// node's trace is stopped, and the reason comes back as a warning.
	ok := &tracerNode{}
	c := &traceCollector{nodes: []engine.Node{ok, failingTracer{}}, addrs: pairAddrs(Trial{Pairs: []workload.Pair{pair}})}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("a node that cannot trace failed the trial: %v", err)
	}
	if r, err := c.Stop(context.Background()); err != nil || len(r.Metrics) != 0 || len(r.Warnings) != 1 || ok.running ||
		!strings.Contains(r.Warnings[0], "no nft_limit") {
		t.Errorf("a node that cannot trace: %v, %v, %q (other node's trace running: %v)", r.Metrics, err, r.Warnings, ok.running)
	}
	// A node whose monitor lost events: the metrics stand, with a warning.
	lossy := &tracerNode{path: nftrace.Path{Chains: 1, Rules: 1, Packets: 9, Lost: 2}}
	c = &traceCollector{nodes: []engine.Node{&tracerNode{}, lossy}, addrs: pairAddrs(Trial{Pairs: []workload.Pair{pair}})}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Stop(context.Background()); err != nil || r.Metrics[nftrace.MetricLost] != 2 || r.Metrics[nftrace.MetricRules] != 1 ||
		len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "lost trace events") {
		t.Errorf("lost events: %v, %v, %q", r.Metrics, err, r.Warnings)
	}
	c = &traceCollector{nodes: []engine.Node{fakeNode{}, fakeNode{}}, addrs: pairAddrs(Trial{Pairs: []workload.Pair{pair}})}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Stop(context.Background()); err != nil || len(r.Metrics) != 0 {
		t.Errorf("nodes without a tracer: %v, %v", r.Metrics, err)
	}
}

// meetingTracer starts only when the other node's start is under way too.
type meetingTracer struct {
	tracerNode
	meet chan struct{}
}

func (n *meetingTracer) Trace(ctx context.Context, addrs []netip.Addr) (engine.Trace, error) {
	select {
	case n.meet <- struct{}{}:
	case <-n.meet:
	case <-time.After(5 * time.Second):
		return nil, errors.New("the other node's trace did not start meanwhile")
	}
	return n.tracerNode.Trace(ctx, addrs)
}

// TestTraceNodesStartTogether: each start waits for its monitor to
// subscribe, so the nodes must not start one after the other.
func TestTraceNodesStartTogether(t *testing.T) {
	meet := make(chan struct{})
	a, b := &meetingTracer{meet: meet}, &meetingTracer{meet: meet}
	c := &traceCollector{nodes: []engine.Node{a, b}, addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := c.Stop(context.Background())
	if _, ok := r.Metrics[nftrace.MetricRules]; err != nil || len(r.Warnings) != 0 || !ok {
		t.Errorf("started together: %v, %v, %q", r.Metrics, err, r.Warnings)
	}
}
