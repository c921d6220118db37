package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/cmdline"
)

// checkNoLiveRun refuses, at preflight, a run while another run's Lease
// in the namespace is fresh (its runner renews it: it is measuring). Two
// runs at once would tune the same nodes' global values (the RPS flow
// table, sysctls, the CPUs' idle limits) through their agents, each
// journaling the other's values as its "old" ones, and their trials
// would load each other's nodes. A runner that died leaves its Lease to
// go stale within LeaseSeconds; cleanup --kube then removes its objects.
// Runs in other namespaces are not seen here: each node's agent refuses
// them when Cluster.Up claims the node (agent.ErrNodeBusy), which holds
// it for a run that only measures too. This check, before anything is
// made, still says so at preflight for the runs of one namespace.
func checkNoLiveRun(ctx context.Context, cs kubernetes.Interface, namespace string, now time.Time) error {
	runs, err := ListRuns(ctx, cs, namespace, now)
	if err != nil {
		return fmt.Errorf("look for other runs on the cluster: %w", err)
	}
	for _, r := range runs {
		if r.Lease != LeaseFresh {
			continue
		}
		// The age is the runner's clock against this one's: advisory
		// here (the agents' node locks and the kernel claims, judged by
		// the watcher's clock, are what keep two runs apart).
		return fmt.Errorf("run %s is measuring on this cluster (namespace %s; its runner %s renewed its Lease %v ago, by its clock against this machine's): two runs at once "+
			"would tune the same nodes and load each other's trials; wait for it to end, or, if its runner is dead, for its Lease to go "+
			"stale (%d s without renewal) and `cnibench cleanup --kube` to remove it",
			r.Run, namespace, orUnknown(r.Controller), r.LeaseAge, LeaseSeconds)
	}
	return nil
}

// checkLeftBehind refuses, at preflight, a run while objects of a run
// whose runner is gone are still in the namespace (ListRuns, as cleanup
// --kube finds them): its Lease stale, or labelled objects without a
// Lease (an older cnibench's, or their Lease deleted by hand). Such a
// runner never tore down its pods, Services and Lease (kill -9, and
// nobody ran cleanup --kube), and the next run went on beside them
// without a word: the dead run's idle servers on the nodes it measures,
// and what its agents' sessions changed on the nodes perhaps not
// reverted. A fresh Lease is checkNoLiveRun's to refuse, first.
//
// For a --resume, resumes are the run IDs of the interrupted run's parts
// (env.json's run_ids; nil for a new run), whose objects are named as
// the interrupted run's: every part's, not only the one env.json's
// run_id names, since a resumed part killed before its first cluster
// rewrote env.json left its objects under its own ID.
//
// A Lease's age is its runner's clock against this machine's: a live
// runner whose clock lags by more than LeaseSeconds looks dead here.
// Refusing is still right (two runs would share the namespace), and the
// cleanup the refusal names, judging the Lease by this machine's clock
// (ObserveLeases), leaves that run alone and says it is alive.
func checkLeftBehind(ctx context.Context, cs kubernetes.Interface, cfg Config, resumes []string, now time.Time) error {
	runs, err := ListRuns(ctx, cs, cfg.Namespace, now)
	if err != nil {
		return fmt.Errorf("look for objects of ended runs on the cluster: %w", err)
	}
	var left []RunInfo
	for _, r := range runs {
		if r.Lease != LeaseFresh {
			left = append(left, r)
		}
	}
	if len(left) == 0 {
		return nil
	}
	prefix, again := "", "run again"
	if len(resumes) > 0 {
		prefix, again = "--resume: ", "resume again"
	}
	if len(left) == 1 {
		r := left[0]
		return fmt.Errorf("%s%s left %s in namespace %s (%s): its runner ended without its "+
			"teardown, so its pods would share the nodes with this run's trials, and what it changed on the nodes may not be reverted; "+
			"remove them first with `%s`, then %s",
			prefix, deadRun(r, resumes, true, true), objectCount(r.Objects), cfg.Namespace, objectsShown(r.Objects),
			cmdline.Quote(cleanupRunWords(cfg, r.Run)), again)
	}
	parts := 0
	for _, r := range left {
		if slices.Contains(resumes, r.Run) {
			parts++
		}
	}
	subject := fmt.Sprintf("%d runs", len(left))
	if parts == len(left) {
		subject = fmt.Sprintf("%d parts of the interrupted run", len(left))
	}
	var each, cmds []string
	for _, r := range left {
		each = append(each, fmt.Sprintf("%s left %s (%s)", deadRun(r, resumes, false, parts == len(left)), objectCount(r.Objects), objectsShown(r.Objects)))
		cmds = append(cmds, "`"+cmdline.Quote(cleanupRunWords(cfg, r.Run))+"`")
	}
	return fmt.Errorf("%s%s left objects in namespace %s: %s; their runners ended without their "+
		"teardown, so their pods would share the nodes with this run's trials, and what they changed on the nodes may not be reverted; "+
		"remove them first with %s, then %s",
		prefix, subject, cfg.Namespace, strings.Join(each, "; "), strings.Join(cmds, " and "), again)
}

// deadRun names a run checkLeftBehind refuses: a part of the interrupted
// run as such (alone, "the interrupted run ID"; in a list of parts only,
// "run ID"), any other with why its runner is taken for gone.
func deadRun(r RunInfo, resumes []string, alone, allParts bool) string {
	part := slices.Contains(resumes, r.Run)
	switch {
	case part && alone:
		return "the interrupted run " + r.Run
	case part && allParts:
		return "run " + r.Run
	case part:
		return "run " + r.Run + " (a part of the interrupted run)"
	case r.Lease == LeaseStale:
		return fmt.Sprintf("run %s (its Lease last renewed %v ago, by its runner's clock against this machine's)", r.Run, r.LeaseAge)
	}
	return fmt.Sprintf("run %s (no Lease)", r.Run)
}

// objectCount is "1 object" or "N objects".
func objectCount(objects []string) string {
	if len(objects) == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", len(objects))
}

// objectsShown lists a run's objects for a refusal, the first six by
// name and the rest counted.
func objectsShown(objects []string) string {
	shown := objects
	if len(shown) > 6 {
		shown = append(slices.Clip(shown[:6]), fmt.Sprintf("and %d more", len(objects)-6))
	}
	return strings.Join(shown, ", ")
}

// cleanupRunWords is `cnibench cleanup --kube --run RUN` reaching the
// cluster of cfg (CleanupWords, as app's hints of a run left without its
// teardown name it) and its namespaces where they are not the defaults.
func cleanupRunWords(cfg Config, run string) []string {
	words := CleanupWords(cfg.Kubeconfig, cfg.Context, "--run", run)
	if cfg.Namespace != "" && cfg.Namespace != DefaultNamespace {
		words = append(words, "--namespace", cfg.Namespace)
	}
	if cfg.AgentNamespace != "" && cfg.AgentNamespace != DefaultAgentNamespace {
		words = append(words, "--agent-namespace", cfg.AgentNamespace)
	}
	return words
}
