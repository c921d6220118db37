package app

// Checks of the flags of the kube commands: each refuses (exit 2),
// before anything is contacted or written, what it would otherwise
// ignore or pass on unchecked.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/study"
)

// manifestsMode refuses --rbac with --install, and the flags the mode
// asked for does not use. Nothing is contacted: the cluster flags are
// no mode's.
func manifestsMode(cmd *cobra.Command, rbac, install bool) error {
	switch {
	case rbac && install:
		return inputErr(errors.New("--rbac and --install print different things; choose one"))
	case rbac:
		return refuseUnused(cmd, "kube manifests --rbac", "rbac", "namespace", "agent-namespace", "subject")
	case install:
		return refuseUnused(cmd, "kube manifests --install", "install", "agent-namespace", "image", "image-pull-policy", "cni-conf-dir", "agent-nodes", "allow-tag")
	}
	return refuseUnused(cmd, "kube manifests (a run's objects)", "namespace", "server-node", "client-node", "image", "image-pull-policy", "replicas")
}

// checkAgentNamespace validates an install's cfg, which has no run
// namespace (Validate compares the two), and refuses the runs' default
// namespace for the agent: `kube manifests --rbac` labels that one Pod
// Security baseline, which refuses the agent's privileged pods.
func checkAgentNamespace(cfg *kube.Config) error {
	if cfg.AgentNamespace == kube.DefaultNamespace {
		return inputErr(fmt.Errorf("--agent-namespace %s is the runs' default namespace, which 'kube manifests --rbac' labels Pod Security baseline, "+
			"refusing the agent's privileged pods: give the agent a namespace of its own (default %s)", cfg.AgentNamespace, kube.DefaultAgentNamespace))
	}
	cfg.Namespace = ""
	if err := cfg.Validate(); err != nil {
		return inputErr(err)
	}
	return nil
}

// refuseUnused refuses, naming the first, the flags of cmd given but not
// among used, which what (a command, or one of its modes) ignores: kube
// install registers every cluster flag, and `kube install --server-node
// w1` put the privileged agent on every node while the user believed it
// went on w1 (--agent-nodes does that).
func refuseUnused(cmd *cobra.Command, what string, used ...string) error {
	var err error
	own := cmd.LocalNonPersistentFlags()
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if err == nil && own.Lookup(fl.Name) != nil && fl.Name != "help" && !slices.Contains(used, fl.Name) {
			err = inputErr(fmt.Errorf("--%s is not used by %s", fl.Name, what))
		}
	})
	return err
}

// hideUnused hides from cmd's help the flags it registers but refuses
// (refuseUnused with the same list): a user who trusts --help over the
// docs would otherwise try them and be refused.
func hideUnused(cmd *cobra.Command, used ...string) {
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "help" && !slices.Contains(used, fl.Name) {
			fl.Hidden = true
		}
	})
}

// checkReplicas refuses a --replicas no run creates: 0 or less printed a
// manifest without a pod pair, exit 0, and 2000000000 built objects
// until memory ran out. A study's pairs on a node, measured and
// background together, are at most study.MaxPodsPerNode, which is
// study.MaxReplicas: the bound of its replica counts.
func checkReplicas(n int) error {
	if n < 1 || n > study.MaxReplicas {
		return inputErr(fmt.Errorf("--replicas %d: want between 1 and %d pod pairs", n, study.MaxReplicas))
	}
	return nil
}

// parseLabels reads --agent-nodes "k=v,k2=v2", each key a qualified
// name, given once, and each value a label value: the API server
// refused a bad one only after `kube install` had created or relabelled
// the namespace.
func parseLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--agent-nodes %q: want key=value[,key=value]", s)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--agent-nodes %q: label key %q: %s", s, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--agent-nodes %q: label value %q (of %s): %s", s, v, k, strings.Join(errs, "; "))
		}
		// A node has one value per key: the last one given was kept, and
		// the agent went on other nodes than the first one meant.
		if prev, ok := m[k]; ok {
			return nil, fmt.Errorf("--agent-nodes %q: label key %q given twice (%s=%s, %s=%s); a node has one value per key", s, k, k, prev, k, v)
		}
		m[k] = v
	}
	return m, nil
}

// checkBinary refuses a --binary that is no regular file, naming it,
// before ldd reads it: ldd's own words ("./-u: No such file", or a
// usage error) did not say which flag was wrong.
func checkBinary(bin string) error {
	st, err := os.Stat(bin)
	if err != nil {
		// The path is in the message already: say it once.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		return inputErr(fmt.Errorf("--binary %s: %w", bin, err))
	}
	if st.IsDir() {
		return inputErr(fmt.Errorf("--binary %s: a directory, not a regular file", bin))
	}
	if !st.Mode().IsRegular() {
		return inputErr(fmt.Errorf("--binary %s: not a regular file", bin))
	}
	return nil
}
