package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/cnitunnels"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/version"
)

// Cluster is a run's share of a real cluster.
type Cluster struct {
	cfg            Config
	cs             kubernetes.Interface
	exec           Execer
	log            *slog.Logger
	server, client *Node
	servers        []*Pod
	clients        []*Pod
	poll           time.Duration
	resolveWait    time.Duration
	addressing     Addressing
	// image is the agents' image, the one checkTools asks about
	// (takeImage; "" where the agent pods did not say).
	image  string
	images resolvedImages // the ready workload pods' image IDs, by node
	// stopLease ends the Lease renewal (nil before the Lease exists).
	stopLease func()
	// lost is why the run must end (a kernel claim lost, lose), and
	// sessions the agent sessions it ends.
	mu       sync.Mutex
	lost     error
	sessions []*agent.Client
}

var _ engine.Cluster = (*Cluster)(nil)

// Up deploys the agent on the two nodes of place, waits for it and opens
// a session to each, which claims its node for the run (refused with
// agent.ErrNodeBusy while another run holds it); on any error it deletes
// what it made. No workload pod exists before Up returns.
func Up(ctx context.Context, cs kubernetes.Interface, ex Execer, cfg Config, place Placement, log *slog.Logger) (*Cluster, error) {
	cfg = cfg.WithDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{cfg: cfg, cs: cs, exec: ex, log: log, poll: 500 * time.Millisecond, resolveWait: defaultResolveWait}
	err := c.up(ctx, place)
	if err != nil {
		// What Close could not delete is left in the cluster: the run
		// stops (engine.ErrLeftBehind) rather than try again beside it.
		return nil, errors.Join(err, engine.LeftBehind(c.Close()))
	}
	return c, nil
}

func (c *Cluster) up(ctx context.Context, place Placement) error {
	cfg := c.cfg
	// The Lease comes first: whatever the run creates after it is
	// covered by its liveness, and Close deletes it last.
	kernels := kernelsOf(place)
	stop, claimed, err := startLease(ctx, c.cs, cfg, kernels, c.log, c.lose)
	if err != nil {
		return err
	}
	c.stopLease = stop
	// Before any agent session: the kernels' machine-wide values are
	// this run's alone from here (kernellease.go).
	if err := claimKernels(ctx, c.cs, cfg, kernels, kernelObserver, c.log, claimed); err != nil {
		return err
	}
	agents, err := c.waitAgents(ctx, place.Server.Name, place.Client.Name)
	if err != nil {
		return err
	}
	c.log.Info("workload pods' image", "image", c.cfg.Image, "agents", c.image)
	mk := func(n *corev1.Node) (*Node, error) {
		node := &Node{name: n.Name, ns: cfg.Namespace, agentNS: cfg.AgentNamespace, agentPod: agents[n.Name], ip: NodeIP(n), exec: c.exec}
		node.sess = openSession(c.exec, cfg.AgentNamespace, node.agentPod, cfg.RunID)
		if err := c.track(node.sess.client); err != nil {
			return node, err
		}
		if err := handshake(node.sess.client, version.Version); err != nil {
			return node, fmt.Errorf("node %s: %w", n.Name, err)
		}
		// The node is this run's until Close, measuring or changing;
		// while another run's session holds it, agent.ErrNodeBusy.
		if err := node.sess.client.Claim(); err != nil {
			return node, err
		}
		links, err := node.sess.client.Links("")
		if err != nil {
			return node, fmt.Errorf("node %s: list devices: %w", n.Name, err)
		}
		node.tunnel, node.hasTunnel = pickTunnel(links, downLinks(node.sess.client, links, cnitunnels.Fallbacks()...))
		u, err := findUnderlay(node.sess.client, n, node.tunnel)
		if err != nil {
			return node, fmt.Errorf("node %s: %w", n.Name, err)
		}
		node.underlay, node.stackedOn, node.underlayNote = u.dev, u.stackedOn, u.note
		return node, nil
	}
	var errS, errC error
	c.server, errS = mk(place.Server)
	c.client, errC = mk(place.Client)
	if err := errors.Join(errS, errC); err != nil {
		return err
	}
	if err := c.checkTools(); err != nil {
		return err
	}
	c.addressing, err = c.decideAddressing(ctx, place.Client.Name)
	return err
}

// lose ends the run for err (startLease: a kernel claim lost, taken over
// by another run or deleted): its agent sessions end, so the agents
// revert what it changed while the kernel's new holder may not yet have
// journaled it, and every later call of the run (knobs, collectors,
// Close's reverts) fails with err, which says who took the claim or that
// it was deleted.
func (c *Cluster) lose(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = err
	// Abort waits for a session's call in flight; the renewal that
	// found the loss must not. The calls after the abort fail with err
	// (one already waiting for a session may still reach its agent).
	go func(sessions []*agent.Client) {
		for _, s := range sessions {
			s.Abort(err)
		}
	}(c.sessions)
}

// track has lose end the session s too, at once when the run is lost.
func (c *Cluster) track(s *agent.Client) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions = append(c.sessions, s)
	if c.lost != nil {
		s.Abort(c.lost)
	}
	return c.lost
}

// checkTools asks each agent which of the run's programs its image lacks:
// workload pods run the same image (takeImage), so a missing tool is
// found here, not in the first trial after every pod was created. The
// error names the image asked about: the agents'.
func (c *Cluster) checkTools() error {
	if len(c.cfg.Tools) == 0 {
		return nil
	}
	image := cmp.Or(c.image, c.cfg.Image)
	for _, n := range []*Node{c.server, c.client} {
		miss, err := n.sess.client.Missing(c.cfg.Tools...)
		if err != nil {
			return fmt.Errorf("node %s: check the image's tools: %w", n.name, err)
		}
		if len(miss) > 0 {
			return fmt.Errorf("%w: the agent's image %s on node %s has no %s, which this study runs, and the workload pods run that image; build one with them "+
				"(`cnibench kube image` includes every tool the kube engine runs) and have the agent installed with it (`cnibench kube install --image`)",
				ErrImageTools, image, n.name, strings.Join(miss, ", "))
		}
	}
	return nil
}

// Addressing is how clients reach the server pods (decided by Up).
func (c *Cluster) Addressing() Addressing { return c.addressing }

// fatalProblem returns the first problem that waiting will not fix.
func fatalProblem(problems []string) string {
	for _, p := range problems {
		for _, r := range []string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CrashLoopBackOff", "Failed"} {
			if strings.Contains(p, r) {
				return p
			}
		}
	}
	return ""
}

// podReady reports whether p runs with all containers ready, or why not.
func podReady(p *corev1.Pod) (bool, string) {
	if p.DeletionTimestamp != nil {
		return false, "terminating"
	}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		return false, "Failed: pod " + string(p.Status.Phase) + " " + p.Status.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return false, w.Reason + ": " + w.Message
		}
		if t := cs.State.Terminated; t != nil {
			// The kubelet restarts a container whose pod restarts
			// (a DaemonSet's agent): between exit and restart the state
			// shows Terminated for a moment, which waiting outlasts (a
			// loop of it becomes CrashLoopBackOff, which is fatal).
			if p.Spec.RestartPolicy == corev1.RestartPolicyNever {
				return false, "Failed: container exited: " + t.Reason
			}
			return false, "container exited (" + t.Reason + "), restarting"
		}
	}
	if p.Status.Phase != corev1.PodRunning {
		return false, ""
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready {
			return false, ""
		}
	}
	return true, ""
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Cluster) Server() engine.Node { return c.server }
func (c *Cluster) Client() engine.Node { return c.client }

// ServerNode and ClientNode return the concrete nodes.
func (c *Cluster) ServerNode() *Node { return c.server }
func (c *Cluster) ClientNode() *Node { return c.client }

// Config returns the cluster's configuration.
func (c *Cluster) Config() Config { return c.cfg }

// Clientset returns the API client.
func (c *Cluster) Clientset() kubernetes.Interface { return c.cs }

// waitWorkload waits until every workload pod is ready and every Service
// has its ClusterIP, and records the addresses.
func (c *Cluster) waitWorkload(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.Timeout)
	all := append(append([]*Pod{}, c.servers...), c.clients...)
	for {
		list, err := c.cs.CoreV1().Pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + c.cfg.RunID})
		if err != nil {
			return fmt.Errorf("list pods: %w", err)
		}
		byName := map[string]*corev1.Pod{}
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		var waiting []string
		for _, p := range all {
			kp := byName[p.name]
			if kp == nil {
				waiting = append(waiting, p.name+": missing")
				continue
			}
			ok, why := podReady(kp)
			if !ok {
				if f := fatalProblem([]string{why}); f != "" {
					return fmt.Errorf("pod %s on %s: %s", p.name, p.node, f)
				}
				waiting = append(waiting, p.name+": "+orPhase(why, kp))
				continue
			}
			p.ip = net.ParseIP(kp.Status.PodIP)
			c.images.add(kp)
		}
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(waiting)
			return fmt.Errorf("pods not ready after %v: %s", c.cfg.Timeout, strings.Join(waiting, "; "))
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return err
		}
	}
	for i, p := range c.servers {
		if p.front != nil {
			continue
		}
		svc, err := c.cs.CoreV1().Services(c.cfg.Namespace).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("service %s: %w", p.name, err)
		}
		ip := net.ParseIP(svc.Spec.ClusterIP)
		if ip == nil {
			return fmt.Errorf("service %s has no ClusterIP (%q)", p.name, svc.Spec.ClusterIP)
		}
		if !c.addressing.DNS {
			p.front, p.addr = ip, ip.String()
			continue
		}
		name := c.addressing.ServiceName(svc.Name, svc.Namespace)
		if err := c.awaitResolves(ctx, c.clients[i], name, ip); err != nil {
			return fmt.Errorf("service %s: %w", p.name, err)
		}
		p.front, p.addr = ip, name
	}
	return nil
}

func orPhase(why string, p *corev1.Pod) string {
	if why != "" {
		return why
	}
	return string(p.Status.Phase)
}

// Close ends the agent sessions (each agent reverts what its session
// still has changed) and deletes every object of the run, waiting until
// its pods are gone, its Lease renewed until then and deleted last. It
// works on a fresh context, so it also runs after Ctrl-C cancelled the
// run's.
func (c *Cluster) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	for _, n := range []*Node{c.server, c.client} {
		if n == nil || n.sess == nil {
			continue
		}
		if err := n.sess.close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.name, err))
		}
	}
	// The Lease is renewed until the run's pods are gone: pods may take
	// longer than LeaseSeconds to terminate, and another run's preflight
	// takes a stale Lease for a runner that died without its teardown
	// (checkLeftBehind). Renewal stops just before the Lease is deleted,
	// as a renewal after releaseKernels would take the released kernel
	// claims for lost; and whenever the teardown is cut short, so that
	// the Lease it leaves goes stale and `cleanup --kube` finishes the job.
	stop := func() {
		if c.stopLease != nil {
			c.stopLease()
			c.stopLease = nil
		}
	}
	_, delErr := deleteRun(ctx, c.cs, c.cfg.Namespace, c.cfg.RunID, true, stop)
	stop() // a renewal in flight has called lose by its return
	// A lost claim is always said, though a call the loss failed may
	// have said it too: found after the run's last call (no knob to
	// revert, the sessions closed cleanly, or while the pods went)
	// nothing else would, and the run's last trials may have shared the
	// kernel with the run that took it.
	c.mu.Lock()
	if c.lost != nil {
		errs = append(errs, c.lost)
	}
	c.mu.Unlock()
	errs = append(errs, delErr)
	return errors.Join(errs...)
}
