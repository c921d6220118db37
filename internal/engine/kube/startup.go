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

	"github.com/cnibench/cnibench/internal/cmdline"
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
// run's label like every other pod of the run. Starting and deleting
// each wait up to the pod timeout. A pod that may still exist when it
// returns (its deletion refused, or not seen done in time) is said, as
// engine.ErrLeftBehind: every burst names its pods alike
// (startupName), so the next one's would fail on it.
func (c *Cluster) StartPods(ctx context.Context, node string, n, concurrency int) ([]engine.PodTime, error) {
	if err := engine.CheckBurst(n, concurrency); err != nil {
		return nil, err
	}
	switch {
	case node != c.server.name && node != c.client.name:
		return nil, fmt.Errorf("start pods: %q is not one of the run's nodes (%s, %s)", node, c.server.name, c.client.name)
	}
	// On a clientset without the per-request limit: the burst (create,
	// Ready, delete of every pod) may take minutes, and events arriving
	// late are timed late. The server ends the watch once both phases'
	// timeouts have passed; one it ends sooner only loses the times of
	// what it did not show (a deletion not seen is asked for, stillThere).
	wc, err := watchClient(c.cs, c.exec)
	if err != nil {
		return nil, fmt.Errorf("start pods: watch client: %w", err)
	}
	secs := int64((2 * c.cfg.Timeout).Seconds()) + 1
	w, err := wc.CoreV1().Pods(c.cfg.Namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: LabelRun + "=" + c.cfg.RunID + "," + LabelRole + "=" + RoleStartup, TimeoutSeconds: &secs})
	if err != nil {
		return nil, fmt.Errorf("start pods: watch: %w", err)
	}
	b := &burst{c: c, node: node, tr: newBurstTracker(),
		names: make([]string, n), out: make([]engine.PodTime, n), made: make([]made, n)}
	go b.tr.follow(w)
	defer w.Stop()
	for i := range n {
		b.names[i] = startupName(c.cfg.RunID, i)
	}
	sctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	errs := b.start(sctx, concurrency)
	cancel()
	// Every pod that may exist is deleted, also after an error, and
	// waited for with a timeout of its own: a start that used up the
	// shared one (a pod never Ready) left its deletion no time, and the
	// pods, still terminating when the burst returned, held their names
	// against the next burst's.
	dctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, fmt.Errorf("--pod-timeout %v passed", c.cfg.Timeout))
	defer cancel()
	derrs, left := b.delete(dctx)
	if err := errors.Join(append(append(errs, derrs...), b.leftBehind(left))...); err != nil {
		return nil, err
	}
	return b.out, nil
}

// made is what the burst knows of whether one of its pods exists.
type made int

const (
	notMade made = iota
	// mayBeMade: its create call failed, yet the pod may exist: the API
	// server may have stored it before the call timed out, or a pod of
	// its name was there already (AlreadyExists). Its deletion is
	// tried; NotFound means there was none.
	mayBeMade
	isMade
)

// burst is one StartPods call: its pods by index, what they measured and
// which of them exist.
type burst struct {
	c     *Cluster
	node  string
	tr    *burstTracker
	names []string
	out   []engine.PodTime
	made  []made
}

// start creates the pods, at most concurrency waiting for Ready at a
// time, and times each; it returns each pod's error.
func (b *burst) start(ctx context.Context, concurrency int) []error {
	pods := b.c.cs.CoreV1().Pods(b.c.cfg.Namespace)
	errs := make([]error, len(b.names))
	turns := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, name := range b.names {
		wg.Go(func() {
			select {
			case turns <- struct{}{}:
			case <-ctx.Done():
				errs[i] = context.Cause(ctx)
				return
			}
			defer func() { <-turns }()
			tk := b.tr.track(name)
			start := time.Now()
			if _, err := pods.Create(ctx, b.c.cfg.workloadPod(name, RoleStartup, b.node, 0), metav1.CreateOptions{}); err != nil {
				b.made[i] = mayBeMade
				errs[i] = fmt.Errorf("create pod %s: %w", name, err)
				return
			}
			accepted := time.Now()
			b.made[i] = isMade
			select {
			case <-tk.ready:
			case <-ctx.Done():
				errs[i] = fmt.Errorf("pod %s on %s not ready: %w", name, b.node, context.Cause(ctx))
				return
			}
			sandbox, ready, fail := tk.times()
			if fail != "" {
				errs[i] = fmt.Errorf("pod %s on %s: %s", name, b.node, fail)
				return
			}
			b.out[i] = engine.PodTime{Pod: name, Node: b.node, Setup: ready.Sub(start), WholePod: true, Ready: ready.Sub(t0),
				Phases: startupPhases(start, accepted, sandbox, ready)}
		})
	}
	wg.Wait()
	return errs
}

// delete deletes every pod that may exist, at once, and times each
// until the API says it is gone, within ctx: the burst's teardown. It
// returns apart the errors after which a pod may still exist (left):
// its deletion refused, or the pod still there when ctx ends.
func (b *burst) delete(ctx context.Context) (errs, left []error) {
	pods := b.c.cs.CoreV1().Pods(b.c.cfg.Namespace)
	del := make([]time.Time, len(b.names))
	wait := make([]bool, len(b.names))
	for i, name := range b.names {
		if b.made[i] == notMade {
			continue
		}
		del[i] = time.Now()
		switch err := pods.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{}); {
		case err == nil:
			wait[i] = true
		case apierrors.IsNotFound(err):
			// A pod made and gone before its deletion (deleted by
			// another) is gone in the watch too; one whose create
			// failed was never made.
			wait[i] = b.made[i] == isMade
		default:
			left = append(left, fmt.Errorf("delete pod %s: %w", name, err))
		}
	}
	for i, name := range b.names {
		if !wait[i] {
			continue
		}
		tk := b.tr.track(name)
		select {
		case <-tk.gone:
		case <-ctx.Done():
		}
		// Gone first: once ctx has ended, a select would pick either.
		select {
		case <-tk.gone:
			b.out[i].Teardown = tk.goneAt().Sub(del[i])
		default:
			if err := b.stillThere(ctx, name); apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("pod %s: its deletion was not seen in the watch (%w), though the API says it is gone", name, context.Cause(ctx)))
			} else {
				left = append(left, err)
			}
		}
	}
	return errs, left
}

// stillThere says why pod name, deleted, was not seen gone once ctx
// ended, after asking the API whether it is: NotFound when it is gone
// (the watch missed its deletion, or ended first).
func (b *burst) stillThere(ctx context.Context, name string) error {
	_, err := b.c.cs.CoreV1().Pods(b.c.cfg.Namespace).Get(context.WithoutCancel(ctx), name, metav1.GetOptions{})
	switch {
	case err == nil:
		return fmt.Errorf("pod %s still there after its deletion: %w", name, context.Cause(ctx))
	case apierrors.IsNotFound(err):
		return err
	}
	return fmt.Errorf("pod %s not seen gone after its deletion (%w), and asking for it failed: %w", name, context.Cause(ctx), err)
}

// leftBehind is the error for the burst's pods that may still exist
// (left: one error each, naming its pod), nil for none: why, and what
// removes them. The next burst makes its pods under the same names, so
// its creations would fail on them (AlreadyExists), each trial after
// this one and its retries; the runner ends the run instead
// (engine.ErrLeftBehind), whose teardown deletes the run's pods.
func (b *burst) leftBehind(left []error) error {
	if len(left) == 0 {
		return nil
	}
	cfg := b.c.cfg
	return engine.LeftBehind(fmt.Errorf("start-up burst on %s could not see %s gone from namespace %s, and the next burst makes its pods under the same names; "+
		"the run's teardown deletes what is left, else `%s` does: %w",
		b.node, podsCounted(len(left)), cfg.Namespace, cmdline.Quote(cleanupRunWords(cfg, cfg.RunID)), errors.Join(left...)))
}

// podsCounted is "a pod" or "N pods".
func podsCounted(n int) string {
	if n == 1 {
		return "a pod"
	}
	return fmt.Sprintf("%d pods", n)
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
