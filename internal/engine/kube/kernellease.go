package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/tune"
)

// The kernel's claim. A node's agent keeps apart the runs that use its
// node (agent.NodeBusyError), but what a run tunes is partly the kernel's,
// not the node's: the RFS table (rps_sock_flow_entries), the global net.*
// sysctls and the CPUs' idle limits. Nodes of a cluster on one machine
// (kind, k3d, the test cluster) share one kernel, so two runs on two
// node pairs of it would journal each other's values as the old ones
// (A sets RFS 0->32768, B 32768->16384; A's revert finds 16384 and leaves
// it, B's puts back 32768: the machine stays changed with nothing
// pending), or one run's revert would undo the other's value mid-trials.
// So a run also claims each kernel its nodes run on that other nodes share
// (kernelsOf), by the boot ID their kubelets report
// (status.nodeInfo.bootID), with a Lease named by it in
// the agent's namespace: every run that uses the installed agent sees it,
// whatever its own namespace (checkNoLiveRun keeps apart only the runs of
// one namespace). Creating the Lease is atomic; a second run finds it and
// is refused (*KernelBusyError) while its holder renews it: renewed with
// the run's Lease every LeaseSeconds/3, it is watched by the second run
// for up to LeaseSeconds of its own clock (observer.watchLease: the
// holder's renewTime is another machine's clock), and one left unrenewed
// that long (a runner killed with -9) is taken over. The run that lost
// it stops (*KernelLostError). Close, or `cleanup --kube` for a dead run,
// deletes it with the run's Lease, which names it (annotationKernels), and
// only while it is still the run's.

const (
	// RoleKernel labels a run's claim of a kernel.
	RoleKernel = "kernel"
	// annotationKernels on a run's Lease lists its kernel Leases
	// (NAMESPACE/NAME, comma-separated), so that deleting the run (Close,
	// cleanup --kube) finds and releases them.
	annotationKernels = "cnibench.io/kernel-leases"
	// annotationBootID and annotationNodes on a kernel Lease name the
	// kernel and the holder's nodes on it, for the refusal.
	annotationBootID = "cnibench.io/boot-id"
	annotationNodes  = "cnibench.io/nodes"
)

// kernel is one kernel a run's nodes run on.
type kernel struct {
	bootID string
	nodes  []string
}

// kernelsOf are the kernels of place's nodes the run claims, by the boot
// IDs their kubelets report: only a shared one, which both the run's
// nodes report or preflight found another node of the cluster reporting
// (Placement.SharedKernels). A kernel of one node is kept to its runs by
// that node's agent (its node lock): a cluster of machines with a kernel
// each needs no claim, and so neither the agent-namespace Lease rights
// that RBAC of before the claims lacks. A node reporting none is left
// out (its agent's node lock still holds it).
func kernelsOf(p Placement) []kernel {
	var out []kernel
	for _, n := range []string{p.Server.Name, p.Client.Name} {
		id := nodeBootID(p, n)
		if id == "" {
			continue
		}
		i := slices.IndexFunc(out, func(k kernel) bool { return k.bootID == id })
		if i < 0 {
			out = append(out, kernel{bootID: id})
			i = len(out) - 1
		}
		out[i].nodes = append(out[i].nodes, n)
	}
	return slices.DeleteFunc(out, func(k kernel) bool {
		return len(k.nodes) < 2 && len(p.SharedKernels[k.bootID]) < 2
	})
}

// sharedKernels lists the cluster's nodes and returns, for each boot ID
// of p's nodes that more than one node reports, the nodes reporting it
// (p's first): the kernels a run on p must claim. One list of nodes, which
// the ClusterRole allows and preflight checks.
func sharedKernels(ctx context.Context, cs kubernetes.Interface, p Placement) (map[string][]string, error) {
	by := map[string][]string{}
	for _, n := range []*corev1.Node{p.Server, p.Client} {
		if id := n.Status.NodeInfo.BootID; id != "" && !slices.Contains(by[id], n.Name) {
			by[id] = append(by[id], n.Name)
		}
	}
	if len(by) == 0 {
		return nil, nil
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes, to find any sharing a kernel with node %s or %s: %w", p.Server.Name, p.Client.Name, err)
	}
	for _, n := range list.Items {
		id := n.Status.NodeInfo.BootID
		if _, ok := by[id]; ok && !slices.Contains(by[id], n.Name) {
			by[id] = append(by[id], n.Name)
		}
	}
	for id, nodes := range by {
		if len(nodes) < 2 {
			delete(by, id)
		}
	}
	return by, nil
}

// sharedWords says which nodes share which kernel, for preflight's
// refusal: "nodes w1 and w2 share one kernel (kind, ...; boot ID ...)".
func sharedWords(shared map[string][]string) string {
	ids := slices.Sorted(maps.Keys(shared))
	words := make([]string, len(ids))
	for i, id := range ids {
		n := shared[id]
		words[i] = fmt.Sprintf("nodes %s and %s share one kernel (kind, k3d, one machine's test cluster; boot ID %s)", strings.Join(n[:len(n)-1], ", "), n[len(n)-1], id)
	}
	return strings.Join(words, "; ")
}

func nodeBootID(p Placement, name string) string {
	if p.Server.Name == name {
		return p.Server.Status.NodeInfo.BootID
	}
	return p.Client.Status.NodeInfo.BootID
}

// kernelLeaseName names the kernel's Lease: a boot ID is a UUID, but it
// is the kubelet's word, so anything but [a-z0-9-] becomes '-' to keep
// a valid object name.
func kernelLeaseName(bootID string) string {
	b := []byte(strings.ToLower(bootID))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	return strings.TrimRight("cnibench-kernel-"+strings.Trim(string(b), "-"), "-")
}

// kernelRefs are the run Lease's annotationKernels value for kernels.
func (c Config) kernelRefs(kernels []kernel) string {
	refs := make([]string, len(kernels))
	for i, k := range kernels {
		refs[i] = c.AgentNamespace + "/" + kernelLeaseName(k.bootID)
	}
	return strings.Join(refs, ",")
}

// KernelLease is the run's claim of the kernel bootID, which its nodes
// run on, in the agent's namespace.
func (c Config) KernelLease(bootID string, nodes []string, now time.Time) *coordinationv1.Lease {
	l := c.Lease(now)
	l.ObjectMeta = c.meta(kernelLeaseName(bootID), RoleKernel)
	l.Namespace = c.AgentNamespace
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[annotationBootID] = bootID
	l.Annotations[annotationNodes] = strings.Join(nodes, ",")
	return l
}

// KernelBusyError is a run refused because another run's Lease holds a
// kernel its nodes run on and its runner renewed it while this one
// watched (observer.watchLease).
type KernelBusyError struct {
	BootID string
	// Nodes are this run's nodes on that kernel; Run, Controller and
	// OtherNodes the holder's, Watched how long this run watched the
	// claim before it was renewed.
	Nodes, OtherNodes []string
	Run, Controller   string
	Watched           time.Duration
}

func (e *KernelBusyError) Error() string {
	other := ""
	if len(e.OtherNodes) > 0 {
		other = " on node " + strings.Join(e.OtherNodes, ", ")
	}
	return fmt.Sprintf("kernel claim: node %s runs on kernel %s (boot ID), which run %s%s is using (its runner %s renewed its claim within the %v this run watched it): "+
		"runs on nodes of one kernel tune the same machine-wide values (the RFS table, global net sysctls, the CPUs' idle limits), "+
		"would journal each other's as the old ones and leave the machine changed, and load each other's trials; wait for it to end, "+
		"or, if its runner is dead, for its claim to go stale (%d s without renewal, as this machine's clock measures while the next run watches it; `cnibench cleanup --kube` removes a dead run's)",
		strings.Join(e.Nodes, ", "), e.BootID, e.Run, other, orUnknown(e.Controller), e.Watched.Round(time.Second), LeaseSeconds)
}

// Is makes errors.Is(err, tune.ErrNodeBusy) hold: the run is refused as
// one whose node another run holds.
func (e *KernelBusyError) Is(target error) bool { return target == tune.ErrNodeBusy }

// KernelLostError ends a run whose claim of a kernel was deleted
// (Deleted) or another run took over: this runner did not renew it for LeaseSeconds of that run's
// watching (a stalled runner, a cut to the API server), and that run's
// agents now journal the kernel's values, this run's among them, as the
// old ones. A run going on tuning would revert them mid-trials of the
// other, which would then restore this run's values at its end.
type KernelLostError struct {
	BootID          string
	Run, Controller string
	// Deleted: the claim was gone (cleanup --kube, or deleted by the run
	// that had taken it over), not another run's.
	Deleted bool
}

func (e *KernelLostError) Error() string {
	if e.Deleted {
		return fmt.Sprintf("kernel claim lost: this run's claim of kernel %s (boot ID) was deleted (cnibench cleanup --kube, or a run that took it "+
			"over and ended), so another run may tune its machine-wide values now; this run stops, its agents revert what it changed, "+
			"and it must be run again", e.BootID)
	}
	return fmt.Sprintf("kernel claim lost: run %s (runner %s) took over this run's claim of kernel %s (boot ID), which this runner had not renewed for %d s, "+
		"and tunes its machine-wide values now; this run stops, its agents revert what it changed, and it must be run again",
		e.Run, orUnknown(e.Controller), e.BootID, LeaseSeconds)
}

// Is makes errors.Is(err, tune.ErrNodeBusy) hold: the runner stops at
// once (runner.isFatal), not retrying trials on sessions that are gone.
func (e *KernelLostError) Is(target error) bool { return target == tune.ErrNodeBusy }

// claimKernels claims each kernel of kernels for cfg's run: it creates
// the kernel's Lease, or takes over one its holder left unrenewed while
// this run watched it (o), and refuses one renewed meanwhile. Each claim
// made is passed to claimed (startLease renews it from then on).
func claimKernels(ctx context.Context, cs kubernetes.Interface, cfg Config, kernels []kernel, o observer, log *slog.Logger, claimed func(kernel)) error {
	for _, k := range kernels {
		if err := claimKernel(ctx, cs, cfg, k, o, log); err != nil {
			return err
		}
		claimed(k)
	}
	return nil
}

func claimKernel(ctx context.Context, cs kubernetes.Interface, cfg Config, k kernel, o observer, log *slog.Logger) error {
	leases := cs.CoordinationV1().Leases(cfg.AgentNamespace)
	want := cfg.KernelLease(k.bootID, k.nodes, o.now())
	where := fmt.Sprintf("claim kernel %s of node %s (Lease %s/%s)", k.bootID, strings.Join(k.nodes, ", "), cfg.AgentNamespace, want.Name)
	get := func(ctx context.Context) (*coordinationv1.Lease, error) {
		return leases.Get(ctx, want.Name, metav1.GetOptions{})
	}
	// Two tries: a Lease deleted or taken over between the create and
	// the update is looked at again.
	for range 2 {
		_, err := leases.Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", where, err)
		}
		cur, err := get(ctx)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if cur.Labels[LabelRun] != cfg.RunID {
			if cur, err = watchKernel(ctx, k, cur, o, get, log); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if cur == nil { // deleted while watched: create it
				continue
			}
		}
		// Left unrenewed while watched, or this run's own: take it. The
		// resource version read makes a racing run's update conflict.
		want.ResourceVersion = cur.ResourceVersion
		_, err = leases.Update(ctx, want, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: take over run %s's stale claim: %w", where, cur.Labels[LabelRun], err)
		}
		want.ResourceVersion = ""
	}
	return fmt.Errorf("%s: another run claims it at the same moment; try again", where)
}

// watchKernel watches another run's claim cur (observer.watchLease),
// saying so while it waits: a renewed one is refused (*KernelBusyError),
// a stale one returned to take over, a deleted one nil.
func watchKernel(ctx context.Context, k kernel, cur *coordinationv1.Lease, o observer, get func(context.Context) (*coordinationv1.Lease, error), log *slog.Logger) (*coordinationv1.Lease, error) {
	holder := cur.Labels[LabelRun]
	log.Info(fmt.Sprintf("kernel %s of node %s is claimed by run %s: watching its claim for up to %d s; renewed, this run is refused, else it takes the claim over "+
		"(a claim's age is judged by this machine's clock while it watches, not by the holder's)", k.bootID, strings.Join(k.nodes, ", "), holder, LeaseSeconds))
	l, stale, watched, err := o.watchLease(ctx, cur, get)
	switch {
	case err != nil:
		return nil, err
	case l == nil:
		return nil, nil
	case !stale:
		e := &KernelBusyError{BootID: k.bootID, Nodes: k.nodes, Run: l.Labels[LabelRun], Watched: watched}
		if l.Spec.HolderIdentity != nil {
			e.Controller = *l.Spec.HolderIdentity
		}
		if n := l.Annotations[annotationNodes]; n != "" {
			e.OtherNodes = strings.Split(n, ",")
		}
		return nil, e
	}
	log.Warn(fmt.Sprintf("kernel %s: run %s did not renew its claim in %v of watching; taking it over", k.bootID, holder, watched.Round(time.Second)))
	return l, nil
}

// renewKernels renews the run's kernel Leases; one another run took over
// (this runner failed to renew it while that run watched) or deleted is a
// *KernelLostError, which ends the run (startLease).
func renewKernels(cs kubernetes.Interface, cfg Config, kernels []kernel) error {
	var errs []error
	for _, k := range kernels {
		ctx, cancel := context.WithTimeout(context.Background(), apiCallTimeout)
		leases := cs.CoordinationV1().Leases(cfg.AgentNamespace)
		l, err := leases.Get(ctx, kernelLeaseName(k.bootID), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// Deleted under the run (cleanup --kube, or a run that took
			// it over and has ended): the next run creates it at once,
			// with no watch, and would tune beside this one.
			errs = append(errs, &KernelLostError{BootID: k.bootID, Deleted: true})
		case err != nil:
			errs = append(errs, err)
		case l.Labels[LabelRun] != cfg.RunID:
			e := &KernelLostError{BootID: k.bootID, Run: l.Labels[LabelRun]}
			if l.Spec.HolderIdentity != nil {
				e.Controller = *l.Spec.HolderIdentity
			}
			errs = append(errs, e)
		default:
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			errs = append(errs, err)
		}
		cancel()
	}
	return errors.Join(errs...)
}

// releaseKernels deletes the kernel Leases a run's Lease l names
// (annotationKernels) while they are still the run's: one another run
// took over stays.
func releaseKernels(ctx context.Context, cs kubernetes.Interface, l *coordinationv1.Lease, run string) ([]string, error) {
	var deleted []string
	refs := l.Annotations[annotationKernels]
	if refs == "" {
		return nil, nil
	}
	for _, ref := range strings.Split(refs, ",") {
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			continue
		}
		leases := cs.CoordinationV1().Leases(ns)
		cur, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("release the claim of a kernel (Lease %s): %w", ref, err)
		}
		if cur.Labels[LabelRun] != run {
			continue
		}
		// The preconditions keep a claim another run took over since the
		// get.
		pre := metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}
		switch err := leases.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &pre}); {
		case err == nil:
			deleted = append(deleted, "lease/"+ref)
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			return deleted, fmt.Errorf("release the claim of a kernel (Lease %s): %w", ref, err)
		}
	}
	return deleted, nil
}

// NodeBootIDs finds cfg's server and client nodes as preflight does and
// returns, by node name, the boot ID each one's kubelet reports ("" when
// it reports none). The runner compares them with its own machine's
// before preflight (runner.LockMachine): a run on nodes of this machine's
// kernel changes its values as a local run does, and takes its lock.
func NodeBootIDs(ctx context.Context, cfg Config) (map[string]string, error) {
	cfg = cfg.WithDefaults()
	_, cs, err := cfg.Memo.Connect(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return nil, err
	}
	return nodeBootIDs(ctx, cs, cfg)
}

func nodeBootIDs(ctx context.Context, cs kubernetes.Interface, cfg Config) (map[string]string, error) {
	if _, err := Ping(ctx, cs, 15*time.Second); err != nil {
		return nil, fmt.Errorf("%w: %w (check --kubeconfig/--context and that the API server is up)", ErrUnreachable, err)
	}
	out := map[string]string{}
	for _, n := range [][2]string{{"server", cfg.ServerNode}, {"client", cfg.ClientNode}} {
		node, err := findNode(ctx, cs, n[0], n[1])
		if err != nil {
			return nil, err
		}
		out[node.Name] = node.Status.NodeInfo.BootID
	}
	return out, nil
}
