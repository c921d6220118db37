package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
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
