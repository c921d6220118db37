package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/journal"
)

// RunInfo is what the cluster holds of one run.
type RunInfo struct {
	Run string
	// Controller is the AnnotationController of the run's Lease (or, for
	// a run without one, of its objects when they all agree).
	Controller string
	Objects    []string // "kind/name"
	// Lease says whether the runner still renews the run's Lease.
	Lease LeaseState
	// LeaseAge is how long ago the Lease was last renewed, by its
	// runner's clock against this machine's.
	LeaseAge time.Duration
	// Watched is how long ObserveLeases watched the Lease before judging
	// it (0: judged by LeaseAge, or by the runner's live process here:
	// LiveHere).
	Watched  time.Duration
	LiveHere bool
	// Unjudged says why ObserveLeases could not judge the Lease (a failed
	// read): cleanup leaves the run alone.
	Unjudged string

	controllers map[string]bool
}

// ListRuns returns the runs that have objects in namespace, each with
// the state of its own Lease at now.
func ListRuns(ctx context.Context, cs kubernetes.Interface, namespace string, now time.Time) ([]RunInfo, error) {
	sel := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelRun}
	runs := map[string]*RunInfo{}
	add := func(kind string, m metav1.ObjectMeta) *RunInfo {
		run := m.Labels[LabelRun]
		ri := runs[run]
		if ri == nil {
			ri = &RunInfo{Run: run, controllers: map[string]bool{}}
			runs[run] = ri
		}
		if c := m.Annotations[AnnotationController]; c != "" {
			ri.controllers[c] = true
		}
		ri.Objects = append(ri.Objects, kind+"/"+m.Name)
		return ri
	}
	leases, err := cs.CoordinationV1().Leases(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list Leases: %w", err)
	}
	for _, l := range leases.Items {
		ri := add("lease", l.ObjectMeta)
		// A run's liveness is its own Lease's renewal, never another
		// object's annotation.
		renew := l.CreationTimestamp.Time
		if l.Spec.RenewTime != nil {
			renew = l.Spec.RenewTime.Time
		}
		var secs int32
		if l.Spec.LeaseDurationSeconds != nil {
			secs = *l.Spec.LeaseDurationSeconds
		}
		ri.Lease, ri.LeaseAge = leaseState(renew, secs, now), now.Sub(renew).Round(time.Second)
		if l.Spec.HolderIdentity != nil {
			ri.Controller = *l.Spec.HolderIdentity
		}
	}
	svcs, err := cs.CoreV1().Services(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	for _, s := range svcs.Items {
		add("service", s.ObjectMeta)
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		add("pod", pods.Items[i].ObjectMeta)
	}
	var out []RunInfo
	for _, ri := range runs {
		if ri.Lease == LeaseNone && len(ri.controllers) == 1 {
			for c := range ri.controllers {
				ri.Controller = c
			}
		}
		ri.controllers = nil
		sort.Strings(ri.Objects)
		out = append(out, *ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// ObserveLeases judges each run's Lease by this machine's clock, as
// claimKernels judges a kernel claim (observer.watchLease), before cleanup
// deletes anything: ListRuns judged it by the renewTime the runner's
// clock wrote, so with this machine's clock 30 s ahead of a live run's
// runner, cleanup --kube took its Lease for stale and deleted its pods
// mid-trial (and one 30 s behind kept a dead run's for as long). A run
// whose runner is a live process of this machine is alive; the others'
// Leases are watched together for up to their duration: renewed
// meanwhile, fresh; not, stale. A runner not found here is not taken
// for dead: /proc may hide it (hidepid, another PID namespace sharing
// the host name), or another machine may have the same name. say is
// told once what is watched. A Lease that cannot be read is left
// Unjudged, the error returned with the others judged.
func ObserveLeases(ctx context.Context, cs kubernetes.Interface, namespace string, runs []RunInfo, hostname string, alive func(int, uint64) bool, say func(string)) ([]RunInfo, error) {
	return observeLeases(ctx, cs, namespace, runs, hostname, alive, say, kernelObserver)
}

func observeLeases(ctx context.Context, cs kubernetes.Interface, namespace string, runs []RunInfo, hostname string, alive func(int, uint64) bool, say func(string), o observer) ([]RunInfo, error) {
	out := slices.Clone(runs)
	leases := cs.CoordinationV1().Leases(namespace)
	var watch []int
	for i, r := range out {
		if r.Lease == LeaseNone {
			continue
		}
		if Controller(r.Controller, hostname, alive) == ControllerAlive {
			out[i].Lease, out[i].LiveHere = LeaseFresh, true
			continue
		}
		watch = append(watch, i)
	}
	if len(watch) == 0 {
		return out, nil
	}
	var names []string
	for _, i := range watch {
		names = append(names, out[i].Run)
	}
	say(fmt.Sprintf("watching the Lease of run %s for up to %d s: a runner elsewhere renews it every %d s while it lives "+
		"(its age is judged by this machine's clock, not by the runner's)", strings.Join(names, ", "), LeaseSeconds, LeaseSeconds/3))
	var wg sync.WaitGroup
	errs := make([]error, len(watch))
	for k, i := range watch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get := func(ctx context.Context) (*coordinationv1.Lease, error) {
				cctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
				defer cancel()
				return leases.Get(cctx, leaseName(out[i].Run), metav1.GetOptions{})
			}
			first, err := get(ctx)
			if apierrors.IsNotFound(err) { // its runner ended it meanwhile
				out[i].Lease = LeaseNone
				return
			}
			if err != nil {
				errs[k] = fmt.Errorf("read the Lease of run %s: %w", out[i].Run, err)
				out[i].Unjudged = errs[k].Error()
				return
			}
			cur, stale, watched, err := o.watchLease(ctx, first, get)
			out[i].Watched = watched
			switch {
			case err != nil:
				errs[k] = fmt.Errorf("watch the Lease of run %s: %w", out[i].Run, err)
				out[i].Unjudged = errs[k].Error()
			case stale:
				out[i].Lease = LeaseStale
			case cur == nil:
				out[i].Lease = LeaseNone
			default:
				out[i].Lease = LeaseFresh
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// ControllerID is this process's AnnotationController value.
func ControllerID() string {
	host, _ := os.Hostname()
	start, _ := journal.ProcessStart(os.Getpid())
	return fmt.Sprintf("%s/%d/%d", host, os.Getpid(), start)
}

// ControllerState says whether a run's controller is alive, dead or
// unknown (another machine, or no annotation).
type ControllerState int

const (
	ControllerUnknown ControllerState = iota
	ControllerAlive
	ControllerDead
)

// Controller classifies a run's AnnotationController value as seen from
// this machine (host name hostname).
func Controller(annotation, hostname string, alive func(pid int, start uint64) bool) ControllerState {
	parts := strings.Split(annotation, "/")
	if len(parts) != 3 || parts[0] != hostname {
		return ControllerUnknown
	}
	pid, err1 := strconv.Atoi(parts[1])
	start, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return ControllerUnknown
	}
	if alive(pid, start) {
		return ControllerAlive
	}
	return ControllerDead
}

// SelectStale picks the runs cleanup may remove. A run with a Lease is
// judged by it (ObserveLeases: watched, or its runner a live process
// here): fresh means its runner is alive (wherever it runs), stale means
// it is gone; one ObserveLeases could not judge is left alone. A run without a Lease (its runner died before
// creating one, or an older cnibench) falls back to its objects'
// controller annotation: dead here, or named with --run, or --all.
func SelectStale(runs []RunInfo, only string, all bool, hostname string, alive func(int, uint64) bool) (stale []RunInfo, skipped map[string]string) {
	skipped = map[string]string{}
	for _, r := range runs {
		if only != "" && r.Run != only {
			continue
		}
		if r.Unjudged != "" {
			skipped[r.Run] = "could not judge whether its runner is alive: " + r.Unjudged
			continue
		}
		switch r.Lease {
		case LeaseFresh:
			if r.LiveHere {
				skipped[r.Run] = fmt.Sprintf("its runner (%s) is a live process of this machine (its Lease last renewed %v ago by the runner's clock); stop it to clean up",
					r.Controller, r.LeaseAge)
			} else if r.Watched > 0 {
				skipped[r.Run] = fmt.Sprintf("its runner (%s) renewed its Lease within the %v this cleanup watched it: it is alive", orUnknown(r.Controller), r.Watched.Round(time.Second))
			} else {
				skipped[r.Run] = fmt.Sprintf("its Lease was renewed %v ago: the runner (%s) is alive", r.LeaseAge, orUnknown(r.Controller))
			}
			continue
		case LeaseStale:
			stale = append(stale, r)
			continue
		}
		switch Controller(r.Controller, hostname, alive) {
		case ControllerAlive:
			skipped[r.Run] = "its controller is running (" + r.Controller + ")"
			continue
		case ControllerUnknown:
			if only == "" && !all {
				skipped[r.Run] = "no Lease, started elsewhere (" + orUnknown(r.Controller) + "); name it with --run or use --all"
				continue
			}
		}
		stale = append(stale, r)
	}
	return stale, skipped
}

func orUnknown(s string) string {
	if s == "" {
		return "controller unknown"
	}
	return s
}

// DeleteRun deletes every object of a run in namespace: Services, pods
// and, last, its Lease, with the kernel claims it names that are still
// the run's (releaseKernels). With wait it returns once no pod of the run is
// left. Deleting
// what is already gone succeeds.
func DeleteRun(ctx context.Context, cs kubernetes.Interface, namespace, run string, wait bool) ([]string, error) {
	return deleteRun(ctx, cs, namespace, run, wait, nil)
}

// deleteRun is DeleteRun calling beforeLease (if not nil) once the pods
// are gone (or not waited for), just before the Lease and its kernel
// claims are deleted; not at all when it fails before. Cluster.Close
// stops renewing the run's Lease there.
func deleteRun(ctx context.Context, cs kubernetes.Interface, namespace, run string, wait bool, beforeLease func()) ([]string, error) {
	if run == "" {
		return nil, errors.New("delete run: empty run ID")
	}
	sel := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelRun + "=" + run}
	bg := metav1.DeletePropagationBackground
	opt := metav1.DeleteOptions{PropagationPolicy: &bg}
	var deleted []string
	var errs []error
	gone := func(err error) bool { return err == nil || apierrors.IsNotFound(err) }
	svcs, err := cs.CoreV1().Services(namespace).List(ctx, sel)
	errs = append(errs, err)
	if err == nil {
		for _, s := range svcs.Items {
			if err := cs.CoreV1().Services(namespace).Delete(ctx, s.Name, opt); !gone(err) {
				errs = append(errs, err)
			}
			deleted = append(deleted, "service/"+s.Name)
		}
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, sel)
	errs = append(errs, err)
	if err == nil {
		for _, p := range pods.Items {
			if err := cs.CoreV1().Pods(namespace).Delete(ctx, p.Name, opt); !gone(err) {
				errs = append(errs, err)
			}
			deleted = append(deleted, "pod/"+p.Name)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return deleted, fmt.Errorf("delete run %s: %w", run, err)
	}
	// The Lease goes last, once the pods are gone (or not waited for):
	// until then a cut-short teardown leaves a Lease that goes stale.
	deleteLease := func() ([]string, error) {
		if beforeLease != nil {
			beforeLease()
		}
		leases, err := cs.CoordinationV1().Leases(namespace).List(ctx, sel)
		if err != nil {
			return deleted, fmt.Errorf("delete run %s: %w", run, err)
		}
		for _, l := range leases.Items {
			// Its kernel claims first: the run's Lease names them.
			released, err := releaseKernels(ctx, cs, &l, run)
			deleted = append(deleted, released...)
			if err != nil {
				return deleted, fmt.Errorf("delete run %s: %w", run, err)
			}
			if err := cs.CoordinationV1().Leases(namespace).Delete(ctx, l.Name, metav1.DeleteOptions{}); !gone(err) {
				return deleted, fmt.Errorf("delete run %s: %w", run, err)
			}
			deleted = append(deleted, "lease/"+l.Name)
		}
		return deleted, nil
	}
	if !wait {
		return deleteLease()
	}
	for {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, sel)
		if err != nil {
			return deleted, err
		}
		if len(pods.Items) == 0 {
			return deleteLease()
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return deleted, fmt.Errorf("delete run %s: %d pods still terminating: %w", run, len(pods.Items), err)
		}
	}
}
