package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/workload/registry"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// kubeJournalDir keeps kube runs' controller journals apart from local
// runs': their values live on cluster nodes, and the local `cleanup` must
// never replay them against this machine.
var kubeJournalDir = filepath.Join(journal.DefaultDir, "kube")

// kubeFlags select the cluster, nodes and image (run, cleanup --kube,
// kube manifests).
type kubeFlags struct {
	kubeconfig, context, namespace string
	serverNode, clientNode         string
	image, pullPolicy              string
	cniConfDir                     string
	timeout                        time.Duration
}

func (f *kubeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kube engine: kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "kube engine: kubeconfig context (default: the current one)")
	fs.StringVar(&f.namespace, "namespace", kube.DefaultNamespace, "kube engine: namespace of the run's pods, Services and agent")
	fs.StringVar(&f.serverNode, "server-node", kube.DefaultServerSelector, "kube engine: server node name, or a label selector matching one node")
	fs.StringVar(&f.clientNode, "client-node", kube.DefaultClientSelector, "kube engine: client node name, or a label selector matching one node")
	fs.StringVar(&f.image, "image", kube.DefaultImage, "kube engine: image with cnibench and the workload tools (see 'cnibench kube image')")
	fs.StringVar(&f.pullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "kube engine: Always, IfNotPresent or Never")
	fs.StringVar(&f.cniConfDir, "cni-conf-dir", kube.DefaultCNIConfDir, "kube engine: the nodes' CNI config directory (read by the agent for CNI detection)")
	fs.DurationVar(&f.timeout, "pod-timeout", 3*time.Minute, "kube engine: how long to wait for pods to become ready")
}

func (f *kubeFlags) config() *kube.Config {
	c := kube.Config{
		Kubeconfig: f.kubeconfig, Context: f.context, Namespace: f.namespace,
		ServerNode: f.serverNode, ClientNode: f.clientNode,
		Image: f.image, PullPolicy: corev1.PullPolicy(f.pullPolicy), CNIConfDir: f.cniConfDir, Timeout: f.timeout,
	}
	c = c.WithDefaults()
	return &c
}

func newKubeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Kubernetes helpers: print the objects a run creates, build the image",
		Example: "  cnibench kube manifests --replicas 2 --server-node worker-1 --client-node worker-2\n" +
			"  cnibench kube manifests --rbac --subject jane@example.com | kubectl apply -f -\n" +
			"  cnibench kube image --out cnibench.tar && ctr -n k8s.io images import cnibench.tar",
	}
	cmd.AddCommand(newKubeManifestsCmd(), newKubeImageCmd())
	return cmd
}

func newKubeManifestsCmd() *cobra.Command {
	var f kubeFlags
	var replicas int
	var rbac bool
	var subject string
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print every object a kube run would create (or the RBAC it needs), for review",
		Long: `Prints, as YAML, the agent DaemonSet, the DNS probe pod (created for a moment when the
cluster has a DNS Service), the server pods, their Services and the client pods that
'cnibench run --engine kube' creates for the given replica count (run ID "review"). With
--rbac it prints instead the namespace, the least-privilege Role (pods, services,
pods/exec, daemonsets in the namespace), the read-only ClusterRole (nodes, daemonsets) and
the optional read-only Role in kube-system (services, endpointslices: is cluster DNS up?)
with bindings for --subject, ready for kubectl apply. Nothing is contacted.`,
		Example: "  cnibench kube manifests --replicas 2 --server-node worker-1 --client-node worker-2\n" +
			"  cnibench kube manifests --rbac --subject system:serviceaccount:ci:cnibench",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := *f.config()
			cfg.RunID = "review"
			if err := cfg.Validate(); err != nil {
				return inputErr(err)
			}
			var objs []runtime.Object
			if rbac {
				objs = cfg.RBAC(subject)
			} else {
				objs = cfg.RunObjects(f.serverNode, f.clientNode, replicas)
			}
			b, err := kube.YAML(objs)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().IntVar(&replicas, "replicas", 1, "number of server/client pod pairs")
	cmd.Flags().BoolVar(&rbac, "rbac", false, "print the namespace, Role, ClusterRole and bindings instead")
	cmd.Flags().StringVar(&subject, "subject", "cnibench", "user (or system:serviceaccount:NS:NAME) the RBAC bindings grant")
	return cmd
}

func newKubeImageCmd() *cobra.Command {
	var out, ref, bin string
	var tools []string
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Write the workload/agent image as a docker-archive tarball (no registry needed)",
		Long: `Writes a one-layer image with this cnibench binary (or --binary) at /usr/local/bin and
the workload tools with their shared libraries, as a docker-archive tarball that
'ctr -n k8s.io images import', 'docker load' and 'kind load image-archive' accept.
The Dockerfile in the repository builds the same image for users with a registry.`,
		Example: "  cnibench kube image --out cnibench.tar --tag docker.io/cnibench/cnibench:dev",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return inputErr(errors.New("--out is required"))
			}
			if bin == "" {
				var err error
				if bin, err = os.Executable(); err != nil {
					return err
				}
			}
			img, err := kube.ToolImage(ref, bin, imageTools(tools))
			if err != nil {
				return inputErr(err)
			}
			return writeFileAtomic(out, func(w io.Writer) error { return kube.WriteImage(w, img) })
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "tarball to write")
	cmd.Flags().StringVar(&ref, "tag", kube.DefaultImage, "image reference recorded in the tarball")
	cmd.Flags().StringVar(&bin, "binary", "", "cnibench binary to put in the image (default: this one)")
	cmd.Flags().StringSliceVar(&tools, "tool", programNames(imagePrograms()), "programs from this machine's PATH to include (the default is every tool a kube run may exec)")
	return cmd
}

// imagePrograms are what a kube run may exec from its image: every
// workload driver's programs (with those of their options) but those of
// tools kube does not run, and the engine's own.
func imagePrograms() []spec.Program {
	return append(registry.KubePrograms(), kube.EngineTools...)
}

func programNames(ps []spec.Program) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// imageTools turns --tool names into programs, with the Debian package
// of those the drivers or the engine describe.
func imageTools(names []string) []spec.Program {
	known := imagePrograms()
	var out []spec.Program
	for _, n := range names {
		p := spec.Program{Name: n}
		if i := slices.IndexFunc(known, func(k spec.Program) bool { return k.Name == n }); i >= 0 {
			p = known[i]
		}
		out = append(out, p)
	}
	return out
}

func writeFileAtomic(path string, fn func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// quietKlog keeps client-go's internal klog lines (stream bookkeeping of
// finished execs) off the user's terminal.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		_ = fs.Set(k, v)
	}
	klog.SetOutput(io.Discard)
}

// kubeCleanup removes objects of dead kube runs: their agents revert what
// dead sessions left, then every object with the run's label is deleted
// (waiting until the pods are gone), then the controller journals of
// those runs are removed.
func kubeCleanup(ctx context.Context, w io.Writer, f *kubeFlags, only string, all, dryRun bool) error {
	quietKlog()
	cfg := f.config()
	rc, cs, err := kube.Connect(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return inputErr(err)
	}
	if _, err := kube.Ping(ctx, cs, 15*time.Second); err != nil {
		return inputErr(fmt.Errorf("%w: %w", kube.ErrUnreachable, err))
	}
	runs, err := kube.ListRuns(ctx, cs, cfg.Namespace)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	stale, skipped := kube.SelectStale(runs, only, all, host, journal.ProcessAlive)
	for run, why := range skipped {
		fmt.Fprintf(w, "run %s: skipped: %s\n", run, why)
	}
	ex := &kube.APIExecer{Config: rc, Client: cs}
	var errs []error
	for _, r := range stale {
		if dryRun {
			for _, o := range r.Objects {
				fmt.Fprintf(w, "run %s: would delete %s\n", r.Run, o)
			}
			continue
		}
		for _, pod := range r.AgentPods {
			var out, stderr bytes.Buffer
			err := ex.Exec(ctx, cfg.Namespace, pod, "agent", []string{kube.BinPath, "agent", "replay"}, nil, &out, &stderr)
			if err != nil {
				errs = append(errs, fmt.Errorf("run %s: agent %s replay: %w: %s", r.Run, pod, err, stderr.String()))
			} else {
				fmt.Fprintf(w, "run %s: agent %s: %s", r.Run, pod, out.String())
			}
		}
		deleted, err := kube.DeleteRun(ctx, cs, cfg.Namespace, r.Run, true)
		for _, o := range deleted {
			fmt.Fprintf(w, "run %s: deleted %s\n", r.Run, o)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		os.Remove(filepath.Join(kubeJournalDir, r.Run+journal.Ext))
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, "no kube run objects in namespace "+cfg.Namespace)
	}
	// Controller journals of dead runs with nothing left in the cluster:
	// the node values they list were journaled and reverted by the agents.
	inCluster := map[string]bool{}
	for _, r := range runs {
		inCluster[r.Run] = true
	}
	dead, jerr := journal.Stale(kubeJournalDir)
	errs = append(errs, jerr)
	for _, r := range dead {
		id := r.Header.RunID
		if inCluster[id] || (only != "" && id != only) || dryRun {
			if dryRun && !inCluster[id] {
				fmt.Fprintf(w, "run %s: would remove its controller journal\n", id)
			}
			r.Release()
			continue
		}
		if err := r.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "run %s: removed its controller journal\n", id)
	}
	return errors.Join(errs...)
}
