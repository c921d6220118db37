package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// kubeJournalDir is where kube runs keep their controller journals and
// host lock (for this process's user and environment; kubeJournalDirFor).
func kubeJournalDir() (string, error) { return kubeJournalDirFor(os.Geteuid(), os.Getenv) }

// kubeJournalDirFor keeps kube runs' controller journals apart from local
// runs': their values live on cluster nodes, and the local `cleanup` must
// never replay them against this machine. A kube run changes nothing on
// this machine (every knob goes through a node's agent, journaled there),
// so it needs no root here: root keeps /run/cnibench/kube, and any other
// user a directory of their own, so that they need no sudo, which would
// change KUBECONFIG and HOME and so the cluster reached. The runtime
// directory first ($XDG_RUNTIME_DIR: private to the user, gone at logout
// as /run is at boot), else the user's cache directory in
// os.UserCacheDir's order ($XDG_CACHE_HOME, ~/.cache), written out here
// because a relative value falls through to the next, where
// os.UserCacheDir fails. `cleanup --kube` reads the same directory,
// run by the same user.
func kubeJournalDirFor(euid int, getenv func(string) string) (string, error) {
	if euid == 0 {
		return filepath.Join(journal.DefaultDir, "kube"), nil
	}
	// Relative values are ignored, as the XDG specification asks.
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "cnibench", "kube"), nil
	}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "cnibench", "kube"), nil
	}
	if d := getenv("HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, ".cache", "cnibench", "kube"), nil
	}
	return "", errors.New("no directory of yours for the kube run's controller journal: " +
		"set XDG_RUNTIME_DIR or HOME to an absolute path (root uses " + filepath.Join(journal.DefaultDir, "kube") + ")")
}

// refuseWithout refuses the kube flags given to a command that will not
// use them without needs (--engine kube, --kube): ignored, they would let
// a user believe a cluster was checked or cleaned while this machine was.
// The first given is named, in the order --help lists them.
func (f *kubeFlags) refuseWithout(fs *pflag.FlagSet, needs string) error {
	for _, name := range f.names {
		if fs.Changed(name) {
			return inputErr(fmt.Errorf("--%s needs %s", name, needs))
		}
	}
	return nil
}

// installOnly are the kube flags only `kube install` (and `kube
// manifests --install`) use: a run's agent sessions read the CNI config
// directory the installed agent mounts (its DaemonSet's hostPath), so
// --cni-conf-dir given to a run, doctor or advise changed nothing while
// the user believed CNI detection read it.
var installOnly = []string{"cni-conf-dir"}

// refuseInstallOnly refuses the installOnly flags given to what (a
// command with --engine kube), as refuseUnused does the flags of a
// command that ignores them.
func refuseInstallOnly(fs *pflag.FlagSet, what string) error {
	for _, name := range installOnly {
		if fs.Changed(name) {
			return inputErr(fmt.Errorf("--%s is not used by %s: the agent reads the directory it was installed with (`cnibench kube install --%s`)", name, what, name))
		}
	}
	return nil
}

// kubeFlags select the cluster, nodes and image (run, cleanup --kube,
// kube manifests).
type kubeFlags struct {
	kubeconfig, context, namespace string
	agentNamespace                 string
	serverNode, clientNode         string
	image, pullPolicy              string
	cniConfDir                     string
	timeout                        time.Duration
	// imageFlag is --image, whose being given config passes on: a run
	// without it takes the installed agent's image.
	imageFlag *pflag.Flag
	// names are the flags register added, for given.
	names []string
}

// given is the kube flags set on the command line, in words, for a rerun
// command that must reach the same cluster.
func (f *kubeFlags) given(fs *pflag.FlagSet) []string {
	return setFlags(fs, func(name string) bool { return slices.Contains(f.names, name) })
}

func (f *kubeFlags) register(all *pflag.FlagSet) {
	fs := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	defer func() {
		fs.VisitAll(func(fl *pflag.Flag) { f.names = append(f.names, fl.Name) })
		all.AddFlagSet(fs)
	}()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kube engine: kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	// A file of this machine: a recorded command names it absolutely
	// (setFlags). --cni-conf-dir is the nodes' directory, not ours.
	_ = cobra.MarkFlagFilename(fs, "kubeconfig")
	fs.StringVar(&f.context, "context", "", "kube engine: kubeconfig context (default: the current one)")
	fs.StringVar(&f.namespace, "namespace", kube.DefaultNamespace, "kube engine: namespace of the run's pods, Services and Lease (Pod Security baseline; not default or kube-*)")
	fs.StringVar(&f.agentNamespace, "agent-namespace", kube.DefaultAgentNamespace, "kube engine: namespace of the installed agent (see 'cnibench kube install')")
	fs.StringVar(&f.serverNode, "server-node", kube.DefaultServerSelector, "kube engine: server node name, or a label selector matching one node")
	fs.StringVar(&f.clientNode, "client-node", kube.DefaultClientSelector, "kube engine: client node name, or a label selector matching one node")
	fs.StringVar(&f.image, "image", kube.DefaultImage, "kube engine: image with cnibench and the workload tools (see 'cnibench kube image'); "+
		"a run's pods run the installed agent's image (given, it must name that one), the default is kube install's and kube manifests'")
	f.imageFlag = fs.Lookup("image")
	fs.StringVar(&f.pullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "kube engine: Always, IfNotPresent or Never")
	fs.StringVar(&f.cniConfDir, "cni-conf-dir", kube.DefaultCNIConfDir, "kube install: the nodes' CNI config directory, which the agent mounts read-only for CNI detection (runs read the installed agent's)")
	fs.DurationVar(&f.timeout, "pod-timeout", kube.DefaultTimeout, "kube engine: how long to wait for pods to become ready, and to be deleted (positive)")
}

func (f *kubeFlags) config() *kube.Config {
	c := kube.Config{
		Kubeconfig: f.kubeconfig, Context: f.context, Namespace: f.namespace, AgentNamespace: f.agentNamespace,
		ServerNode: f.serverNode, ClientNode: f.clientNode,
		Image: f.image, PullPolicy: corev1.PullPolicy(f.pullPolicy), CNIConfDir: f.cniConfDir, Timeout: f.timeout,
		// The flag is shared with the command's flag set, which marks it.
		ImageGiven: f.imageFlag != nil && f.imageFlag.Changed,
	}
	c = c.WithDefaults()
	// The flag has its default already: a 0 here was given, and
	// Validate refuses it rather than WithDefaults turning it into 3m.
	c.Timeout = f.timeout
	return &c
}

func newKubeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Kubernetes helpers: install the agent, print the objects a run creates, build the image",
		Example: "  cnibench kube install --image registry.example.com/cnibench@sha256:...   # once, by an admin\n" +
			"  cnibench kube manifests --rbac --subject jane@example.com | kubectl apply -f -\n" +
			"  cnibench kube manifests --replicas 2 --server-node worker-1 --client-node worker-2\n" +
			"  cnibench kube image --out cnibench.tar && ctr -n k8s.io images import cnibench.tar",
	}
	cmd.AddCommand(newKubeManifestsCmd(), newKubeInstallCmd(), newKubeImageCmd())
	return cmd
}

func newKubeManifestsCmd() *cobra.Command {
	var f kubeFlags
	var replicas int
	var rbac, install, allowTag bool
	var subject, agentNodes string
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print the objects a kube run creates (or the RBAC it needs, or the agent install), for review",
		Long: `Prints, as YAML, what 'cnibench run --engine kube' creates for --replicas pod pairs
(run ID "review"): the run's Lease, the DNS probe pod (created for a moment when the
cluster has a DNS Service), and per pair a server pod, its Service and a client pod. A
study's pairs are its measured pairs plus its background pairs; not printed are the pods
of a start-up burst (podstartup: client pods' spec, created and deleted in its trials).
A run pins each pod to a node by name; a --server-node or --client-node given as a label
selector (the defaults) is printed as the pods' nodeSelector (node affinity for other
than equalities), since a run pins to the one node it matches at preflight. With
--rbac it prints instead the workload namespace (Pod Security baseline), the runner's
Role there (pods, services, pods/exec, leases), its Role in the agent's namespace (list
pods, exec in them, the leases claiming shared kernels: nothing else), the read-only
ClusterRole (nodes; daemonsets by name: the CNIs' detection weighs and the agent's;
Calico's ippools; Flannel's net-conf.json configmaps by name) and
the optional read-only Role in kube-system (services, endpointslices: is cluster DNS up?)
with bindings for --subject. With --install it prints what 'cnibench kube install'
applies: the agent's namespace (Pod Security privileged) and its DaemonSet. Nothing is
contacted.`,
		Example: "  cnibench kube manifests --replicas 2 --server-node worker-1 --client-node worker-2\n" +
			"  cnibench kube manifests --rbac --subject system:serviceaccount:ci:cnibench",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := *f.config()
			cfg.RunID = "review"
			if install {
				if err := checkAgentNamespace(&cfg); err != nil {
					return err
				}
			}
			if err := cfg.Validate(); err != nil {
				return inputErr(err)
			}
			if err := manifestsMode(cmd, rbac, install); err != nil {
				return err
			}
			var objs []runtime.Object
			switch {
			case rbac:
				objs = cfg.RBAC(subject)
			case install:
				sel, err := installObjects(cfg, agentNodes, allowTag)
				if err != nil {
					return inputErr(err)
				}
				objs = sel
			default:
				if err := checkReplicas(replicas); err != nil {
					return err
				}
				var err error
				if objs, err = cfg.RunObjects(f.serverNode, f.clientNode, replicas); err != nil {
					return inputErr(err)
				}
			}
			b, err := kube.YAML(objs)
			if err != nil {
				return err
			}
			if !rbac && !install {
				b = append([]byte(selectorNote(f.serverNode, f.clientNode)), b...)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().IntVar(&replicas, "replicas", 1, "number of server/client pod pairs (a study's measured and background pairs), 1 to "+strconv.Itoa(study.MaxReplicas))
	cmd.Flags().BoolVar(&rbac, "rbac", false, "print the namespaces, Roles, ClusterRole and bindings instead")
	cmd.Flags().BoolVar(&install, "install", false, "print the agent's namespace and DaemonSet ('cnibench kube install') instead")
	registerInstallFlags(cmd.Flags(), &agentNodes, &allowTag)
	cmd.Flags().StringVar(&subject, "subject", "cnibench", "user (or system:serviceaccount:NS:NAME) the RBAC bindings grant")
	return cmd
}

// selectorNote is the YAML comment that says, where a node was given as
// a label selector, how the printed pods stand for a run's.
func selectorNote(server, client string) string {
	var sel []string
	for _, n := range []struct{ flag, v string }{{"--server-node", server}, {"--client-node", client}} {
		if kube.IsSelector(n.v) {
			sel = append(sel, n.flag+" "+n.v)
		}
	}
	if len(sel) == 0 {
		return ""
	}
	return "# " + strings.Join(sel, ", ") + ": a run pins its pods to the one node each selector\n" +
		"# matches at preflight (spec.nodeName); here the selector places them instead.\n"
}

func registerInstallFlags(fs *pflag.FlagSet, agentNodes *string, allowTag *bool) {
	fs.StringVar(agentNodes, "agent-nodes", "", "install: run the agent only on nodes with these labels, tainted or not (k=v,k2=v2; default every node without a taint)")
	fs.BoolVar(allowTag, "allow-tag", false, "install: accept an agent image not pinned by digest (test clusters with imported images)")
}

// installObjects are the agent's namespace and DaemonSet, after the
// image and node selector are checked.
func installObjects(cfg kube.Config, agentNodes string, allowTag bool) ([]runtime.Object, error) {
	if !allowTag {
		if err := kube.CheckDigest(cfg.Image); err != nil {
			return nil, err
		}
	}
	sel, err := parseLabels(agentNodes)
	if err != nil {
		return nil, err
	}
	return cfg.AgentInstall(sel), nil
}

func newKubeInstallCmd() *cobra.Command {
	var f kubeFlags
	var agentNodes string
	var allowTag bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the node agent once (cluster administrator): its privileged namespace and DaemonSet",
		Long: `Creates or updates the agent's namespace (--agent-namespace, Pod Security privileged)
and the agent DaemonSet in it, with the image pinned by digest. This is the one step that
needs the right to run privileged pods; runners then need only the Roles of
'cnibench kube manifests --rbac', which cannot create pods there. A runner refuses an
agent of another cnibench version. 'cnibench kube manifests --install' prints the same
objects for review or for kubectl apply.`,
		Example: "  cnibench kube install --image registry.example.com/cnibench@sha256:<digest> --agent-nodes cnibench.io/bench=true",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			quietKlog()
			// The workload namespace and nodes are a run's, not the agent's.
			if err := refuseUnused(cmd, "kube install", installUses...); err != nil {
				return err
			}
			cfg := *f.config()
			if err := checkAgentNamespace(&cfg); err != nil {
				return err
			}
			objs, err := installObjects(cfg, agentNodes, allowTag)
			if err != nil {
				return inputErr(err)
			}
			_, cs, err := kube.Connect(cfg.Kubeconfig, cfg.Context)
			if err != nil {
				return inputErr(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			done, err := kube.Install(ctx, cs, objs)
			for _, d := range done {
				fmt.Fprintln(cmd.OutOrStdout(), d)
			}
			if err != nil {
				return err
			}
			// Created is not running: admission may refuse the agent's
			// privileged pods, which only the rollout shows.
			fmt.Fprintf(cmd.OutOrStdout(), "waiting up to %v (--pod-timeout) for the agent pods to be ready\n", cfg.Timeout)
			said, err := kube.WaitRollout(cmd.Context(), cs, cfg.AgentNamespace, kube.AgentName, cfg.Timeout, 2*time.Second)
			if said != "" {
				fmt.Fprintln(cmd.OutOrStdout(), said)
			}
			return err
		},
	}
	f.register(cmd.Flags())
	registerInstallFlags(cmd.Flags(), &agentNodes, &allowTag)
	hideUnused(cmd, installUses...)
	return cmd
}

// installUses are the flags kube install reads; it refuses the other
// cluster flags it registers, and --help does not list them.
var installUses = []string{"kubeconfig", "context", "agent-namespace", "image", "image-pull-policy",
	"cni-conf-dir", "pod-timeout", "agent-nodes", "allow-tag"}

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
			} else if err := checkBinary(bin); err != nil {
				return err
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
