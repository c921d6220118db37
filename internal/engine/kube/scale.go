package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnibench/cnibench/internal/engine"
)

// The workload's pod pairs: made, deleted, and what a failure leaves.

// Scale makes exactly r server/client pairs exist and be ready. It keeps
// engine.ErrLeftBehind's contract (engine/run.go): a Scale that failed
// has deleted what it was to delete and tracks every pod it made (the
// next Scale and Close delete them), or it says what it left
// (engine.LeftBehind), after which the runner makes no pods again
// beside it. So a pair scaled away is untracked only once its pods are
// gone (a pod stuck terminating holds its name, which a later, larger
// count met as AlreadyExists and then waited out its timeout for), and
// what a pair whose creation failed halfway made is deleted again
// (addPair). Scale(0) deletes every workload pod and Service of the
// run, found by its labels as DeleteRun finds them, tracked or not: the
// runner asks it after a failed set-up, for pods made afresh.
func (c *Cluster) Scale(ctx context.Context, r int) ([]engine.Pod, []engine.Pod, error) {
	if r == 0 {
		if err := c.dropAll(ctx); err != nil {
			return nil, nil, err
		}
		return []engine.Pod{}, []engine.Pod{}, nil
	}
	cfg := c.cfg
	for i := len(c.servers); i < r; i++ {
		if err := c.addPair(ctx, i); err != nil {
			return nil, nil, err
		}
		c.servers = append(c.servers, &Pod{ns: cfg.Namespace, name: serverName(cfg.RunID, i), node: c.server.name, exec: c.exec})
		c.clients = append(c.clients, &Pod{ns: cfg.Namespace, name: clientName(cfg.RunID, i), node: c.client.name, exec: c.exec})
	}
	if r < len(c.servers) {
		var names []string
		var errs []error
		for i := r; i < len(c.servers); i++ {
			names = append(names, c.servers[i].name, c.clients[i].name)
			errs = append(errs, c.deleteObject(ctx, "service", c.servers[i].name))
		}
		for _, n := range names {
			errs = append(errs, c.deleteObject(ctx, "pod", n))
		}
		if err := errors.Join(errs...); err != nil {
			return nil, nil, engine.LeftBehind(fmt.Errorf("scale down to %d pod pairs: %w", r, err))
		}
		if err := c.waitGone(ctx, names); err != nil {
			return nil, nil, engine.LeftBehind(fmt.Errorf("scale down to %d pod pairs: %w", r, err))
		}
		c.servers, c.clients = c.servers[:r], c.clients[:r]
	}
	if err := c.waitWorkload(ctx); err != nil {
		return nil, nil, err
	}
	srv := make([]engine.Pod, r)
	cli := make([]engine.Pod, r)
	for i := range r {
		srv[i], cli[i] = c.servers[i], c.clients[i]
	}
	return srv, cli, nil
}

// addPair creates pair i: its server pod, the Service in front of it and
// its client pod. One that already exists is taken as made (it has the
// run's name: the run's). When a creation fails, what the pair has of
// them is deleted again, pods waited gone, before the error returns
// (the pair is not tracked); what could not be is said (LeftBehind).
func (c *Cluster) addPair(ctx context.Context, i int) error {
	cfg := c.cfg
	objs := []func() error{
		func() error {
			_, err := c.cs.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.ServerPod(i, c.server.name), metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.CoreV1().Services(cfg.Namespace).Create(ctx, cfg.ServerService(i), metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.cs.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.ClientPod(i, c.client.name), metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			err = fmt.Errorf("create pair %d: %w", i, err)
			return errors.Join(err, engine.LeftBehind(c.dropPair(ctx, i)))
		}
	}
	return nil
}

// dropPair deletes what exists of pair i (not tracked) and waits for its
// pods to be gone. A run stopped meanwhile leaves them to Close
// (DeleteRun), as said.
func (c *Cluster) dropPair(ctx context.Context, i int) error {
	srv, cli := serverName(c.cfg.RunID, i), clientName(c.cfg.RunID, i)
	err := errors.Join(c.deleteObject(ctx, "service", srv), c.deleteObject(ctx, "pod", srv), c.deleteObject(ctx, "pod", cli))
	if err == nil {
		err = c.waitGone(ctx, []string{srv, cli})
	}
	if err != nil {
		return fmt.Errorf("delete what pair %d has: %w", i, err)
	}
	return nil
}

// dropAll deletes every workload pod and Service of the run, tracked or
// not (found by the run's labels and the workload's roles, as DeleteRun
// finds the run's objects), waits for the pods to be gone and only then
// untracks them; what could not be deleted is said (LeftBehind).
func (c *Cluster) dropAll(ctx context.Context) error {
	sel := metav1.ListOptions{LabelSelector: fmt.Sprintf("%s=%s,%s=%s,%s in (%s,%s)",
		LabelManagedBy, ManagedBy, LabelRun, c.cfg.RunID, LabelRole, RoleServer, RoleClient)}
	var names []string
	var errs []error
	svcs, err := c.cs.CoreV1().Services(c.cfg.Namespace).List(ctx, sel)
	if err != nil {
		errs = append(errs, fmt.Errorf("list services: %w", err))
	} else {
		for _, s := range svcs.Items {
			errs = append(errs, c.deleteObject(ctx, "service", s.Name))
		}
	}
	pods, err := c.cs.CoreV1().Pods(c.cfg.Namespace).List(ctx, sel)
	if err != nil {
		errs = append(errs, fmt.Errorf("list pods: %w", err))
	} else {
		for _, p := range pods.Items {
			names = append(names, p.Name)
			errs = append(errs, c.deleteObject(ctx, "pod", p.Name))
		}
	}
	err = errors.Join(errs...)
	if err == nil {
		err = c.waitGone(ctx, names)
	}
	if err != nil {
		return engine.LeftBehind(fmt.Errorf("delete the run's workload pods: %w", err))
	}
	c.servers, c.clients = nil, nil
	return nil
}

// deleteObject deletes the run's pod or Service name; one already gone
// is no error.
func (c *Cluster) deleteObject(ctx context.Context, kind, name string) error {
	var err error
	switch kind {
	case "pod":
		err = c.cs.CoreV1().Pods(c.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	case "service":
		err = c.cs.CoreV1().Services(c.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	default:
		panic("deleteObject: kind " + kind)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", kind, name, err)
	}
	return nil
}

// waitGone waits, up to the pod timeout, until the pods named names are
// gone.
func (c *Cluster) waitGone(ctx context.Context, names []string) error {
	deadline := time.Now().Add(c.cfg.Timeout)
	for {
		left := 0
		for _, n := range names {
			_, err := c.cs.CoreV1().Pods(c.cfg.Namespace).Get(ctx, n, metav1.GetOptions{})
			if err == nil {
				left++
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d pods still terminating after %v", left, c.cfg.Timeout)
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return err
		}
	}
}
