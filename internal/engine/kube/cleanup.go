package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/journal"
)

// RunInfo is what the cluster holds of one run.
type RunInfo struct {
	Run        string
	Controller string   // AnnotationController of its objects
	Objects    []string // "kind/name"
	AgentPods  []string // running agent pods
}

// ListRuns returns the runs that have objects in namespace.
func ListRuns(ctx context.Context, cs kubernetes.Interface, namespace string) ([]RunInfo, error) {
	sel := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelRun}
	runs := map[string]*RunInfo{}
	add := func(kind string, m metav1.ObjectMeta) *RunInfo {
		run := m.Labels[LabelRun]
		ri := runs[run]
		if ri == nil {
			ri = &RunInfo{Run: run}
			runs[run] = ri
		}
		if c := m.Annotations[AnnotationController]; c != "" {
			ri.Controller = c
		}
		ri.Objects = append(ri.Objects, kind+"/"+m.Name)
		return ri
	}
	ds, err := cs.AppsV1().DaemonSets(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list DaemonSets: %w", err)
	}
	for _, d := range ds.Items {
		add("daemonset", d.ObjectMeta)
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
		p := &pods.Items[i]
		ri := add("pod", p.ObjectMeta)
		if p.Labels[LabelRole] == RoleAgent {
			if ok, _ := podReady(p); ok {
				ri.AgentPods = append(ri.AgentPods, p.Name)
			}
		}
	}
	var out []RunInfo
	for _, ri := range runs {
		sort.Strings(ri.Objects)
		sort.Strings(ri.AgentPods)
		out = append(out, *ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
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

// SelectStale picks the runs cleanup may remove: the named run (unless
// its controller is alive here), else every run whose controller is dead
// here, plus runs of unknown controllers when all is set.
func SelectStale(runs []RunInfo, only string, all bool, hostname string, alive func(int, uint64) bool) (stale []RunInfo, skipped map[string]string) {
	skipped = map[string]string{}
	for _, r := range runs {
		if only != "" && r.Run != only {
			continue
		}
		switch Controller(r.Controller, hostname, alive) {
		case ControllerAlive:
			skipped[r.Run] = "its controller is running (" + r.Controller + ")"
			continue
		case ControllerUnknown:
			if only == "" && !all {
				skipped[r.Run] = "started elsewhere (" + orUnknown(r.Controller) + "); name it with --run or use --all"
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

// DeleteRun deletes every object of a run in namespace: DaemonSets,
// Services and pods with its label. With wait it returns once no pod of
// the run is left (an agent pod reverts knobs as it stops). Deleting
// what is already gone succeeds.
func DeleteRun(ctx context.Context, cs kubernetes.Interface, namespace, run string, wait bool) ([]string, error) {
	if run == "" {
		return nil, errors.New("delete run: empty run ID")
	}
	sel := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelRun + "=" + run}
	bg := metav1.DeletePropagationBackground
	opt := metav1.DeleteOptions{PropagationPolicy: &bg}
	var deleted []string
	var errs []error
	gone := func(err error) bool { return err == nil || apierrors.IsNotFound(err) }
	ds, err := cs.AppsV1().DaemonSets(namespace).List(ctx, sel)
	errs = append(errs, err)
	if err == nil {
		for _, d := range ds.Items {
			if err := cs.AppsV1().DaemonSets(namespace).Delete(ctx, d.Name, opt); !gone(err) {
				errs = append(errs, err)
			}
			deleted = append(deleted, "daemonset/"+d.Name)
		}
	}
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
	if !wait {
		return deleted, nil
	}
	for {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, sel)
		if err != nil {
			return deleted, err
		}
		if len(pods.Items) == 0 {
			return deleted, nil
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return deleted, fmt.Errorf("delete run %s: %d pods still terminating: %w", run, len(pods.Items), err)
		}
	}
}
