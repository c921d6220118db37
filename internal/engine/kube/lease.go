package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/agent"
)

// apiCallTimeout bounds each API call the Lease renewal makes.
const apiCallTimeout = 10 * time.Second

// startLease creates the run's Lease, naming the kernel Leases the run
// will claim (annotationKernels: deleting the run releases them), and
// renews it and them every LeaseSeconds/3 until the returned stop is
// called. A failed renewal is logged and retried at the next tick: the
// run goes on, and only a Lease left unrenewed for LeaseSeconds makes
// cleanup take the run as dead.
func startLease(ctx context.Context, cs kubernetes.Interface, cfg Config, kernels []kernel, log *slog.Logger) (stop func(), err error) {
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
		return nil, fmt.Errorf("create the run's Lease %s/%s: %w", cfg.Namespace, leaseName(cfg.RunID), err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(LeaseSeconds * time.Second / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := renewLease(cs, cfg); err != nil {
					log.Warn("renew the run's Lease", "err", err)
				}
				if err := renewKernels(cs, cfg, kernels, log); err != nil {
					log.Warn("renew the run's claims of its nodes' kernels", "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }, nil
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
