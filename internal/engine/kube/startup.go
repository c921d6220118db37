package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cnibench/cnibench/internal/engine"
)

// RoleStartup labels the pods of a pod start-up burst (StartPods).
const RoleStartup = "startup"

func startupName(run string, i int) string { return fmt.Sprintf("cnb-%s-start-%d", run, i) }

// The phases of a pod's start-up as the API shows them. The times are
// when this process saw each state in its watch, so each includes the
// API's delivery (milliseconds on a quiet control plane).
const (
	// PhaseCreate is the create call, until the API server accepted it.
	PhaseCreate = "create"
	// PhaseSandbox lasts until the pod's PodReadyToStartContainers
	// condition: the kubelet made the sandbox and the CNI wired its
	// network (Kubernetes 1.29 and later report it).
	PhaseSandbox = "sandbox"
	// PhaseContainers lasts until the pod is Ready: its container (the
	// image's `cnibench agent pause`) started. Without the sandbox
	// condition it holds the sandbox's time too.
	PhaseContainers = "containers"
)

var _ engine.PodStarter = (*Cluster)(nil)

// StartPods implements engine.PodStarter on a cluster: n pods on the
// node (nodeName set, so no scheduler delay, as seed 004 started its
// pods on one host), created at most concurrency at a time and each
// timed from its create call to Ready, with the sandbox's share where
// the kubelet reports it; then all deleted at once and each timed until
// the API reports it gone. The pods are the workload pods' spec (the run's
// image, `agent pause`) under RoleStartup, so cleanup finds them by the
// run's label like every other pod of the run.
func (c *Cluster) StartPods(ctx context.Context, node string, n, concurrency int) ([]engine.PodTime, error) {
	switch {
	case node != c.server.name && node != c.client.name:
		return nil, fmt.Errorf("start pods: %q is not one of the run's nodes (%s, %s)", node, c.server.name, c.client.name)
	case n < 1 || concurrency < 1 || concurrency > n:
		return nil, fmt.Errorf("start pods: %d pods, %d at once: want 1 <= at once <= pods", n, concurrency)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	pods := c.cs.CoreV1().Pods(c.cfg.Namespace)
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + c.cfg.RunID + "," + LabelRole + "=" + RoleStartup})
	if err != nil {
		return nil, fmt.Errorf("start pods: watch: %w", err)
	}
	tr := newBurstTracker()
	go tr.follow(w)
	defer w.Stop()

	names := make([]string, n)
	out := make([]engine.PodTime, n)
	errs := make([]error, n)
	created := make([]bool, n)
	turns := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		names[i] = startupName(c.cfg.RunID, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case turns <- struct{}{}:
			case <-ctx.Done():
				errs[i] = context.Cause(ctx)
				return
			}
			defer func() { <-turns }()
			tk := tr.track(names[i])
			start := time.Now()
			p := c.cfg.workloadPod(names[i], RoleStartup, node, 0)
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				errs[i] = fmt.Errorf("create pod %s: %w", names[i], err)
				return
			}
			accepted := time.Now()
			created[i] = true
			select {
			case <-tk.ready:
			case <-ctx.Done():
				errs[i] = fmt.Errorf("pod %s on %s not ready: %w", names[i], node, context.Cause(ctx))
				return
			}
			sandbox, ready, fail := tk.times()
			if fail != "" {
				errs[i] = fmt.Errorf("pod %s on %s: %s", names[i], node, fail)
				return
			}
			out[i] = engine.PodTime{Pod: names[i], Node: node, Setup: ready.Sub(start), Ready: ready.Sub(t0),
				Phases: startupPhases(start, accepted, sandbox, ready)}
		}()
	}
	wg.Wait()
	// Delete every pod made, also after an error, at once; the burst's
	// teardown is each until the API says it is gone.
	var derrs []error
	del := make([]time.Time, n)
	for i := range n {
		if !created[i] {
			continue
		}
		del[i] = time.Now()
		if err := pods.Delete(context.WithoutCancel(ctx), names[i], metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			derrs = append(derrs, fmt.Errorf("delete pod %s: %w", names[i], err))
		}
	}
	for i := range n {
		if !created[i] {
			continue
		}
		tk := tr.track(names[i])
		select {
		case <-tk.gone:
			out[i].Teardown = tk.goneAt().Sub(del[i])
		case <-ctx.Done():
			derrs = append(derrs, fmt.Errorf("pod %s still there: %w", names[i], context.Cause(ctx)))
		}
	}
	if err := errors.Join(append(errs, derrs...)...); err != nil {
		return nil, err
	}
	return out, nil
}

// startupPhases splits start..ready at the times seen; a zero sandbox
// time (no PodReadyToStartContainers) folds the sandbox into containers.
func startupPhases(start, accepted, sandbox, ready time.Time) []engine.Phase {
	// The watch may show a fast pod before the create call returns.
	if accepted.After(ready) {
		accepted = ready
	}
	ph := []engine.Phase{{Name: PhaseCreate, Took: accepted.Sub(start)}}
	from := accepted
	if !sandbox.IsZero() && sandbox.After(accepted) && !sandbox.After(ready) {
		ph = append(ph, engine.Phase{Name: PhaseSandbox, Took: sandbox.Sub(accepted)})
		from = sandbox
	}
	return append(ph, engine.Phase{Name: PhaseContainers, Took: ready.Sub(from)})
}

// burstTracker follows the burst's pods through one watch and records
// when each reached each state.
type burstTracker struct {
	mu   sync.Mutex
	pods map[string]*podTrack
}

type podTrack struct {
	ready, gone     chan struct{} // closed once (ready also on failure)
	sandbox, readyT time.Time
	goneT           time.Time
	fail            string
}

func newBurstTracker() *burstTracker { return &burstTracker{pods: map[string]*podTrack{}} }

func (t *burstTracker) track(name string) *podTrack {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pods[name]
	if p == nil {
		p = &podTrack{ready: make(chan struct{}), gone: make(chan struct{})}
		t.pods[name] = p
	}
	return p
}

func (p *podTrack) times() (sandbox, ready time.Time, fail string) {
	return p.sandbox, p.readyT, p.fail
}

func (p *podTrack) goneAt() time.Time { return p.goneT }

// follow reads the watch until it ends. Times are taken when an event
// arrives; a pod's channels close on its first Ready (or failure) and on
// its deletion.
func (t *burstTracker) follow(w watch.Interface) {
	for ev := range w.ResultChan() {
		now := time.Now()
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		p := t.track(pod.Name)
		t.mu.Lock()
		switch {
		case ev.Type == watch.Deleted:
			if p.goneT.IsZero() {
				p.goneT = now
				close(p.gone)
			}
		case p.readyT.IsZero() && p.fail == "":
			if p.sandbox.IsZero() && condition(pod, corev1.PodReadyToStartContainers) {
				p.sandbox = now
			}
			ok, why := podReady(pod)
			if f := fatalProblem([]string{why}); f != "" {
				p.fail = f
				close(p.ready)
			} else if ok {
				p.readyT = now
				close(p.ready)
			}
		}
		t.mu.Unlock()
	}
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
