package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
)

// apiCallTimeout bounds each API call the Lease renewal makes.
const apiCallTimeout = 10 * time.Second

// renewEvery is how often a run renews its Lease and kernel claims:
// three times within LeaseSeconds, so one failed renewal does not make
// the run look dead. Tests shorten it.
var renewEvery = LeaseSeconds * time.Second / 3

// startLease creates the run's Lease, naming the kernel Leases the run
// will claim (annotationKernels: deleting the run releases them), and
// renews it every renewEvery until the returned stop is called, with
// each kernel claim from when claimed is called with it (claimKernels has
// made it the run's). A failed renewal is logged and retried at the next
// tick: the run goes on, and only a Lease left unrenewed for LeaseSeconds
// makes cleanup take the run as dead. A kernel claim lost (*KernelLostError:
// another run took it over, this runner having failed to renew it while
// that run watched, or it was deleted) is not: the kernel's values may be
// another run's now, so lost is called with the error, once, to end this
// run (Cluster.lose), and the claims are renewed no more.
func startLease(ctx context.Context, cs kubernetes.Interface, cfg Config, kernels []kernel, log *slog.Logger, lost func(error)) (stop func(), claimed func(kernel), err error) {
	leases := cs.CoordinationV1().Leases(cfg.Namespace)
	cctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
	l := cfg.Lease(time.Now())
	if len(kernels) > 0 {
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[annotationKernels] = cfg.kernelRefs(kernels)
	}
	_, err = leases.Create(cctx, l, metav1.CreateOptions{})
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("create the run's Lease %s/%s: %w", cfg.Namespace, leaseName(cfg.RunID), err)
	}
	done, finished := make(chan struct{}), make(chan struct{})
	// Buffered for every kernel: claimKernels never waits on a renewal.
	claims := make(chan kernel, len(kernels))
	every := renewEvery
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		renewLoop(t.C, done, claims, func(renew []kernel) []kernel { return renewTick(cs, cfg, renew, log, lost) })
	}()
	return func() { close(done); <-finished }, func(k kernel) { claims <- k }, nil
}

// renewLoop calls tick at each tick until done, with the kernel claims to
// renew: those received on claims (each once claimKernels made it the
// run's), less what tick drops. A claim still being watched carries a
// dead run's name, which a renewal would take for another run's takeover;
// one already made must not wait for the others (a second kernel's watch
// takes up to LeaseSeconds, past which a third run would take the first
// over). Claims that came in are taken before each tick.
func renewLoop(ticks <-chan time.Time, done <-chan struct{}, claims <-chan kernel, tick func([]kernel) []kernel) {
	var renew []kernel
	lost := false
	take := func(k kernel) {
		if !lost {
			renew = append(renew, k)
		}
	}
	for {
		select {
		case <-done:
			return
		case k := <-claims:
			take(k)
		case <-ticks:
		drain:
			for {
				select {
				case k := <-claims:
					take(k)
				default:
					break drain
				}
			}
			had := len(renew)
			renew = tick(renew)
			// tick returns none once a claim was lost: the run ends, and
			// claims made later are not renewed either.
			lost = lost || (had > 0 && len(renew) == 0)
		}
	}
}

// renewTick renews the run's Lease and its kernel claims, and returns the
// claims to renew from now on: none once one was lost, which it passes to
// lost before it returns (lost must not wait: ending the run's agent
// sessions waits for their calls, while the run's Lease must go on being
// renewed; Cluster.lose records the loss and ends them in a goroutine).
func renewTick(cs kubernetes.Interface, cfg Config, kernels []kernel, log *slog.Logger, lost func(error)) []kernel {
	if err := renewLease(cs, cfg); err != nil {
		log.Warn("renew the run's Lease", "err", err)
	}
	err := renewKernels(cs, cfg, kernels)
	var kl *KernelLostError
	if errors.As(err, &kl) {
		log.Error("the run lost its claim of a kernel; ending the run", "err", kl)
		lost(kl)
		return nil
	}
	if err != nil {
		log.Warn("renew the run's claims of its nodes' kernels", "err", err)
	}
	return kernels
}

func renewLease(cs kubernetes.Interface, cfg Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiCallTimeout)
	defer cancel()
	leases := cs.CoordinationV1().Leases(cfg.Namespace)
	l, err := leases.Get(ctx, leaseName(cfg.RunID), metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// LeaseState is what a run's Lease says about its runner.
type LeaseState int

const (
	LeaseNone  LeaseState = iota // the run has no Lease
	LeaseFresh                   // renewed within its duration: the runner is alive
	LeaseStale                   // not renewed for its duration: the runner is gone
)

// leaseState classifies a Lease at now. A Lease without a renew time is
// judged by its creation.
func leaseState(renew time.Time, seconds int32, now time.Time) LeaseState {
	if seconds <= 0 {
		seconds = LeaseSeconds
	}
	if now.Sub(renew) > time.Duration(seconds)*time.Second {
		return LeaseStale
	}
	return LeaseFresh
}

// AgentSelector selects the installed agent's pods.
func AgentSelector() string {
	return LabelManagedBy + "=" + ManagedBy + "," + LabelRole + "=" + RoleAgent
}

// ErrAgentVersion is an installed agent of another cnibench version.
var ErrAgentVersion = errors.New("agent version mismatch")

// handshake asks the agent session for its version and refuses another
// one than this runner's: the protocol and the knobs it accepts change
// between versions, and the agent is installed apart from the runner.
func handshake(c *agent.Client, want string) error {
	got, err := c.Hello(want)
	if err != nil {
		return fmt.Errorf("reach its agent: %w", err)
	}
	if got != want {
		return fmt.Errorf("%w: its agent is cnibench %s, this runner is cnibench %s; install the matching agent (`cnibench kube install`) or use a cnibench %s", ErrAgentVersion, got, want, got)
	}
	return nil
}

// observer is the clock another runner's claim is judged by: this
// machine's (tests inject one), re-reading the claim every poll.
type observer struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	poll  time.Duration
}

// kernelObserver judges other runs' kernel claims at Up; tests set
// their own clock.
var kernelObserver = observer{now: time.Now, sleep: sleepCtx, poll: 2 * time.Second}

// watchLease judges another runner's Lease first as client-go's leader
// election does, by this machine's clock: its renewTime is the holder's
// clock, and against this one's a skew of more than LeaseSeconds made a
// live claim look stale at once (or a dead one fresh as long). So it
// re-reads the Lease every poll until its record changes (resourceVersion
// or renewTime: the holder renewed it, or another run took it), which
// returns the new one, not stale; or until the Lease's duration of this
// machine's time passed without a change, which returns first, stale:
// its resourceVersion makes a takeover conflict with a renewal since. A
// Lease deleted meanwhile returns nil. watched is how long it watched.
func (o observer) watchLease(ctx context.Context, first *coordinationv1.Lease, get func(context.Context) (*coordinationv1.Lease, error)) (cur *coordinationv1.Lease, stale bool, watched time.Duration, err error) {
	start := o.now()
	limit := time.Duration(LeaseSeconds) * time.Second
	if d := first.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		limit = time.Duration(*d) * time.Second
	}
	for {
		watched = o.now().Sub(start)
		if watched >= limit {
			return first, true, watched, nil
		}
		if err := o.sleep(ctx, min(o.poll, limit-watched)); err != nil {
			return nil, false, watched, err
		}
		cur, err := get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return nil, false, o.now().Sub(start), nil
		case err != nil:
			return nil, false, o.now().Sub(start), err
		case cur.ResourceVersion != first.ResourceVersion || !renewTime(cur).Equal(renewTime(first)):
			return cur, false, o.now().Sub(start), nil
		}
	}
}

// renewTime is when l's holder last renewed it by its own clock (its
// creation when it never did): a value to compare, not to judge by.
func renewTime(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime != nil {
		return l.Spec.RenewTime.Time
	}
	return l.CreationTimestamp.Time
}
