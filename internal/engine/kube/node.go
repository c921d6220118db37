package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/version"
)

// Node is a cluster node reached through its agent pod.
type Node struct {
	name     string
	ns       string // the workload namespace (pods' netns names)
	agentNS  string // where the agent pod runs
	agentPod string
	ip       string
	exec     Execer
	sess     *session
	underlay string
	// stackedOn are the devices the underlay is stacked on (a bond's
	// ports, a VLAN's parent), where RPS is decided: ReceiveDevices.
	stackedOn []string
	// underlayNote says why the underlay is not the device holding the
	// node's InternalIP (findUnderlay), "" where it is.
	underlayNote string
	tunnel       string
	hasTunnel    bool
}

var _ engine.Node = (*Node)(nil)

func (n *Node) Name() string { return n.name }

// Netns is "": knobs of the node are the agent's host namespace.
func (n *Node) Netns() string { return "" }

// CPUs is empty: pods on a real node share all its CPUs.
func (n *Node) CPUs() cpuset.Set { return nil }

// Agent is the node's agent session.
func (n *Node) Agent() *agent.Client { return n.sess.client }

// AgentPod is the name of the node's agent pod.
func (n *Node) AgentPod() string { return n.agentPod }

func (n *Node) Underlay() netns.Iface { return netns.Iface{Name: n.underlay} }

// ReceiveDevices implements engine.ReceiveDevicer: the devices the
// underlay is stacked on (a bond's ports, a VLAN's parent, an Open
// vSwitch bridge's NICs), where RPS is decided for what the node
// receives; none for a plain underlay.
func (n *Node) ReceiveDevices() []netns.Iface {
	var out []netns.Iface
	for _, d := range n.stackedOn {
		out = append(out, netns.Iface{Name: d})
	}
	return out
}

func (n *Node) Tunnel() (netns.Iface, bool) {
	return netns.Iface{Name: n.tunnel}, n.hasTunnel
}

// HostVeths asks the agent for the node-side peer of each pod's eth0.
// A pod whose eth0 has none on the node (a macvlan or ipvlan child, an
// SR-IOV VF: agent.ErrNoHostPeer) contributes no device, as on the
// local engine: a pod's host-side devices are its veth's peer or
// nothing, never another node device that shares a number with it.
func (n *Node) HostVeths(pods []engine.Pod) ([]netns.Iface, error) {
	var out []netns.Iface
	for _, p := range pods {
		dev, err := n.sess.client.HostVeth(agent.PodNetns(n.ns, p.Name()), "eth0")
		if errors.Is(err, agent.ErrNoHostPeer) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("host-side device of pod %s: %w", p.Name(), err)
		}
		out = append(out, netns.Iface{Name: dev})
	}
	return out, nil
}

func (n *Node) PodIface(p engine.Pod) netns.Iface {
	return netns.Iface{Netns: agent.PodNetns(n.ns, p.Name()), Name: "eth0"}
}

// Trace implements engine.Tracer through the node's agent, which owns
// the trace table for its session (agent.OpTraceStart).
func (n *Node) Trace(_ context.Context, addrs []netip.Addr) (engine.Trace, error) {
	if err := n.sess.client.TraceStart(addrs); err != nil {
		return nil, fmt.Errorf("node %s: %w", n.name, err)
	}
	return agentTrace{n.sess.client}, nil
}

type agentTrace struct{ c *agent.Client }

func (t agentTrace) Stop() (map[string]float64, error) {
	p, err := t.c.TraceStop()
	return p.Metrics(), err
}

// Start runs argv in the node's agent pod (the node's network, PID
// namespace and a privileged container).
func (n *Node) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return startExec(ctx, n.exec, n.agentNS, n.agentPod, "agent", argv, nil), nil
}

// pickTunnel returns the first known tunnel device among links that is
// not down: the datapath catalogue names each datapath's devices on a
// real cluster, and a down tunl0 is the ipip module's, no CNI's
// (downLinks).
func pickTunnel(links, down []string) (string, bool) {
	return catalog.TunnelDevice(slices.DeleteFunc(slices.Clone(links), func(l string) bool { return slices.Contains(down, l) }))
}

// session is one `cnibench agent serve` exec in an agent pod.
type session struct {
	client *agent.Client
	cancel context.CancelFunc
	done   chan struct{}
	stderr bytes.Buffer
	mu     sync.Mutex
	err    error
}

// withAgent opens a session with a node's agent, checks its version and
// runs fn with its client; the session is closed whatever fn returned.
// Preflight's probes and advise's inspection are one such call each; the
// caller names the node. It never claims the node (agent.OpClaim): they
// only read, so they work beside a run that holds it. Where the exec
// itself failed (exec forbidden, the pod gone), the requests met its
// error, which is said once.
func withAgent(ctx context.Context, ex Execer, ns, pod, run string, fn func(*agent.Client) error) error {
	s := openSession(ex, ns, pod, run)
	err := handshake(s.client, version.Version)
	if err == nil {
		err = fn(s.client)
	}
	if cerr := s.close(ctx); cerr != nil && !errors.Is(err, cerr) {
		err = errors.Join(err, cerr)
	}
	return err
}

func openSession(ex Execer, ns, pod, run string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{cancel: cancel, done: make(chan struct{})}
	s.client = agent.NewClient(inW, outR)
	s.client.SetRun(run)
	go func() {
		defer close(s.done)
		err := ex.Exec(ctx, ns, pod, "agent", []string{BinPath, "agent", "serve", "--run", run, "--cni-conf-dir", "/host/cni/net.d"}, inR, outW, &s.stderr)
		if err != nil {
			if !strings.Contains(err.Error(), pod) { // the API's exec error names it
				err = fmt.Errorf("agent pod %s: %w", pod, err)
			}
			if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
				err = fmt.Errorf("%w: %s", err, msg)
			}
		}
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		if err == nil {
			inW.Close() // EOF, not an error, for the stream's stdin copy
		} else {
			// A request sent from now on meets the exec's own error (why
			// the session ended), not a closed pipe: a closed writer
			// would say io.ErrClosedPipe whatever the reader's error.
			inR.CloseWithError(err)
		}
		outW.CloseWithError(err)
	}()
	return s
}

// close ends the session (the agent reverts what is left) and waits.
func (s *session) close(ctx context.Context) error {
	s.client.Close()
	select {
	case <-s.done:
	case <-ctx.Done():
		s.cancel()
		<-s.done
	}
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
