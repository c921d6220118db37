package app

// cleanup --kube: dead kube runs' objects, agents' journals and
// controller journals.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
)

// deleteStaleRun deletes one dead run's objects, waiting for its pods to
// go, within the pod timeout: pods on a node that went down (a likely
// reason the run died) stay Terminating until the node returns, and must
// not keep cleanup from the other runs.
func deleteStaleRun(ctx context.Context, w io.Writer, cs kubernetes.Interface, cfg kube.Config, run string) error {
	rctx, cancel := context.WithTimeout(ctx, cfg.WithDefaults().Timeout)
	defer cancel()
	deleted, err := kube.DeleteRun(rctx, cs, cfg.Namespace, run, true)
	for _, o := range deleted {
		fmt.Fprintf(w, "run %s: deleted %s\n", run, o)
	}
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w (pods stuck terminating, often on a node that is down: the run stays listed for the next cleanup; "+
			"`kubectl delete pod -n %s -l %s=%s --force --grace-period=0` removes them if the node is gone for good)", err, cfg.Namespace, kube.LabelRun, run)
	}
	return err
}

// kubeCleanupOptions are cleanup's flags that --kube reads.
type kubeCleanupOptions struct {
	only       string // --run
	all        bool
	dryRun     bool
	journalDir string // empty: kubeJournalDir
}

// kubeCleanup removes objects of dead kube runs: the installed agents
// revert what dead sessions left, then every object with the run's label
// is deleted (waiting until the pods are gone, the Lease last), then the
// controller journals of those runs and their temporary directories are
// removed. A run is dead when its own Lease went stale.
func kubeCleanup(ctx context.Context, w io.Writer, f *kubeFlags, o kubeCleanupOptions) error {
	quietKlog()
	cfg := f.config()
	if err := cfg.Validate(); err != nil {
		return inputErr(err)
	}
	// The directory the runs of this user journal in (kubeJournalDirFor).
	jdir := o.journalDir
	if jdir == "" {
		var err error
		if jdir, err = kubeJournalDir(); err != nil {
			return inputErr(err)
		}
	}
	rc, cs, err := kube.Connect(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return inputErr(err)
	}
	if _, err := kube.Ping(ctx, cs, 15*time.Second); err != nil {
		return inputErr(fmt.Errorf("%w: %w", kube.ErrUnreachable, err))
	}
	runs, err := kube.ListRuns(ctx, cs, cfg.Namespace, time.Now())
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	// A Lease that could not be read leaves its run alone (skipped, and
	// cleanup exits 1); the other runs are still cleaned.
	judged, jerr := kube.ObserveLeases(ctx, cs, cfg.Namespace, selected(runs, o.only), host, journal.ProcessAlive,
		func(s string) { fmt.Fprintln(w, s) })
	if ctx.Err() != nil {
		return ctx.Err()
	}
	stale, skipped := kube.SelectStale(judged, o.only, o.all, host, journal.ProcessAlive)
	for run, why := range skipped {
		fmt.Fprintf(w, "run %s: skipped: %s\n", run, why)
	}
	ex := &kube.APIExecer{Config: rc, Client: cs}
	errs := []error{jerr}
	if len(stale) > 0 && !o.dryRun {
		errs = append(errs, replayAgents(ctx, w, cs, ex, cfg.AgentNamespace, staleIDs(w, stale)))
	}
	for _, r := range stale {
		if o.dryRun {
			// Which sessions are live is known only on the nodes: a dry
			// run asks no agent anything.
			fmt.Fprintf(w, "run %s: would end its agent sessions still live on any node\n", r.Run)
			for _, obj := range r.Objects {
				fmt.Fprintf(w, "run %s: would delete %s\n", r.Run, obj)
			}
			continue
		}
		if err := deleteStaleRun(ctx, w, cs, *cfg, r.Run); err != nil {
			errs = append(errs, err)
			continue
		}
		if rep, err := journal.ReadReplay(filepath.Join(jdir, r.Run+journal.Ext)); err == nil {
			removeRunFiles(w, rep)
			if err := rep.Remove(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, "no kube run objects in namespace "+cfg.Namespace)
	}
	inCluster := map[string]bool{}
	for _, r := range runs {
		inCluster[r.Run] = true
	}
	errs = append(errs, removeDeadJournals(w, jdir, inCluster, o))
	return errors.Join(errs...)
}

// selected is the runs --run names (all without it): only their Leases
// are watched.
func selected(runs []kube.RunInfo, only string) []kube.RunInfo {
	if only == "" {
		return runs
	}
	var out []kube.RunInfo
	for _, r := range runs {
		if r.Run == only {
			out = append(out, r)
		}
	}
	return out
}

// removeDeadJournals removes the controller journals in jdir of dead
// runs with nothing left in the cluster (inCluster: the runs that have
// objects there), and the temporary directories they recorded: the node
// values they list were journaled and reverted by the agents.
func removeDeadJournals(w io.Writer, jdir string, inCluster map[string]bool, o kubeCleanupOptions) error {
	dead, err := journal.Stale(jdir)
	errs := []error{err}
	for _, r := range dead {
		id := r.Header.RunID
		if inCluster[id] || (o.only != "" && id != o.only) || o.dryRun {
			if o.dryRun && !inCluster[id] {
				fmt.Fprintf(w, "run %s: would remove its controller journal and temporary files\n", id)
			}
			r.Release()
			continue
		}
		removeRunFiles(w, r)
		if err := r.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "run %s: removed its controller journal\n", id)
	}
	return errors.Join(errs...)
}

// staleIDs are the IDs of the runs cleanup found dead whose sessions an
// agent can end: a run label no cnibench run has (empty, or with a '-'
// that Kubernetes allows and run IDs do not: journal.CheckRunID) is left
// out and said, since the agent refuses the whole request over it and
// would then replay nothing, for any run.
func staleIDs(w io.Writer, stale []kube.RunInfo) []string {
	var ids []string
	for _, r := range stale {
		if err := journal.CheckRunID(r.Run); err != nil {
			fmt.Fprintf(w, "run %q: its agent sessions cannot be ended (%v); its objects are still deleted\n", r.Run, err)
			continue
		}
		ids = append(ids, r.Run)
	}
	return ids
}

// replayAgents asks every installed agent to end the live sessions of the
// dead runs on its node, then to revert the journals of dead sessions
// there, each exec under its own deadline. A dead run's session can
// outlive its runner for hours (an exec stream the kubelet keeps open
// after the runner's machine vanished), holding its node against every
// later run; a replay alone only touches dead sessions.
func replayAgents(ctx context.Context, w io.Writer, cs kubernetes.Interface, ex kube.Execer, agentNS string, dead []string) error {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	pods, err := cs.CoreV1().Pods(agentNS).List(lctx, metav1.ListOptions{LabelSelector: kube.AgentSelector()})
	cancel()
	if err != nil {
		return fmt.Errorf("list agent pods in %s: %w", agentNS, err)
	}
	argv := []string{kube.BinPath, "agent", "replay"}
	for _, r := range dead {
		argv = append(argv, "--end-run", r)
	}
	var errs []error
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		out, err := replayAgent(ctx, ex, agentNS, p.Name, argv)
		if err != nil {
			errs = append(errs, fmt.Errorf("agent %s on %s: replay: %w", p.Name, p.Spec.NodeName, err))
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			fmt.Fprintf(w, "agent %s on %s: %s\n", p.Name, p.Spec.NodeName, l)
		}
	}
	return errors.Join(errs...)
}

// replayAgent runs argv in one agent pod. An agent of an older cnibench
// knows no --end-run: it is asked to replay alone, and says so, rather
// than the node's replay failing.
func replayAgent(ctx context.Context, ex kube.Execer, agentNS, pod string, argv []string) (string, error) {
	var out, stderr bytes.Buffer
	ectx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := ex.Exec(ectx, agentNS, pod, "agent", argv, nil, &out, &stderr)
	if err != nil && strings.Contains(stderr.String(), "unknown flag: --end-run") {
		out.Reset()
		stderr.Reset()
		out.WriteString("this agent's cnibench is older and cannot end live sessions: replayed dead sessions' journals only\n")
		err = ex.Exec(ectx, agentNS, pod, "agent", argv[:3], nil, &out, &stderr)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	return out.String(), nil
}

// removeRunFiles removes the temporary directory a dead kube run's
// controller journal recorded (the runner's TMPDIR for the run: perf
// data, tools' scratch files). Only the run's own temporary directory is
// removed: a journal must not widen what cleanup deletes.
func removeRunFiles(w io.Writer, r *journal.Replay) {
	for _, e := range r.Pending() {
		o := e.Object
		if o == nil || o.Kind != journal.KindDir || !journal.IsTempDir(o.Name, r.Header.RunID) {
			continue
		}
		if _, err := os.Stat(o.Name); err != nil {
			continue
		}
		if err := os.RemoveAll(o.Name); err != nil {
			fmt.Fprintf(w, "run %s: remove %s: %v\n", r.Header.RunID, o.Name, err)
			continue
		}
		fmt.Fprintf(w, "run %s: removed its temporary directory %s\n", r.Header.RunID, o.Name)
	}
}
