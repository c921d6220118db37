package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/cniexec"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/probe"
)

// Wirings: how pods are wired into their node.
const (
	// WiringNetlink wires pods in process with the datapath's AttachPod
	// (netlink calls): the default.
	WiringNetlink = "netlink"
	// WiringCNI wires pods by running the reference CNI plugins the
	// datapath's real CNI delegates to (datapath.CNIDelegate), exactly as
	// a container runtime does (package cniexec).
	WiringCNI = "cni"
)

// ErrNoCNIDelegate is wrapped by CheckWiring's error when WiringCNI is
// asked of a datapath whose CNI has its own plugin.
var ErrNoCNIDelegate = errors.New("no wiring through the reference CNI plugins")

// DirRecorder is implemented by Recorders that also journal directories
// (the run's state directory of WiringCNI). Without it the directory is
// still removed by Close, and cnibench cleanup finds a dead run's by its
// name (journal.StateDir).
type DirRecorder interface {
	RecordDir(path string) error
	RemovedDir(path string) error
}

// CheckWiring says, before anything is built, whether datapath d can be
// wired with wiring here: WiringNetlink always can; WiringCNI needs a
// datapath.CNIDelegate (else the error wraps ErrNoCNIDelegate) and its
// plugins plus loopback answering in cniPath (probe.CNIPath() when
// empty; else a *probe.UnsupportedError naming the missing plugin).
func CheckWiring(d datapath.Datapath, wiring string, cniPath []string) error {
	switch wiring {
	case "", WiringNetlink:
		return nil
	case WiringCNI:
	default:
		return fmt.Errorf("unknown wiring %q (want %s or %s)", wiring, WiringNetlink, WiringCNI)
	}
	if datapath.IsHostNetwork(d) {
		return fmt.Errorf("datapath %s: %w: its pods use the node's network, which no CNI wires; use wiring %s", d.Name(), ErrNoCNIDelegate, WiringNetlink)
	}
	del, ok := d.(datapath.CNIDelegate)
	if !ok {
		return fmt.Errorf("datapath %s: %w: its CNI has its own plugin, which needs its daemons (see docs/datapaths.md); use wiring %s", d.Name(), ErrNoCNIDelegate, WiringNetlink)
	}
	if len(cniPath) == 0 {
		cniPath = probe.CNIPath()
	}
	plugins := append([]string{cniconf.TypeLoopback}, del.CNIPlugins()...)
	if err := probe.RequireCNIPlugins(context.Background(), cniPath, plugins...); err != nil {
		return fmt.Errorf("datapath %s with wiring %s: %w", d.Name(), WiringCNI, err)
	}
	return nil
}

// cniRuntime is what a node's pods are wired with under WiringCNI: a
// *cniexec.Node, which tests replace to fail ADD and DEL without root.
type cniRuntime interface {
	Add(ctx context.Context, p cniexec.Pod, conf []byte) (cniexec.Result, error)
	Del(ctx context.Context, p cniexec.Pod, conf []byte) error
}

// setupCNI creates the run's state directory (journaled first) and gives
// each node its CNI runtime side, with its state in a subdirectory named
// after the node.
func (c *Cluster) setupCNI() error {
	dir := c.cfg.StateDir
	if dir == "" {
		dir = journal.StateDir(journal.DefaultDir, c.cfg.RunID)
	}
	if dr, ok := c.cfg.Recorder.(DirRecorder); ok {
		if err := dr.RecordDir(dir); err != nil {
			return fmt.Errorf("journal state directory %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	// Mkdir, not MkdirAll: a directory that exists holds another run's
	// (or a dead one's) leases, which host-local would take for its own.
	if err := os.Mkdir(dir, 0o700); err != nil {
		// Not ours: the journal must not hand it to cleanup to remove.
		if dr, ok := c.cfg.Recorder.(DirRecorder); ok {
			err = errors.Join(err, dr.RemovedDir(dir))
		}
		return fmt.Errorf("state directory of run %s: %w (a run with this ID is alive, or one died: run cnibench cleanup)", c.cfg.RunID, err)
	}
	c.stateDir = dir
	path := c.cfg.CNIPath
	if len(path) == 0 {
		path = probe.CNIPath()
	}
	for _, n := range c.Nodes() {
		n.cni = &cniexec.Node{Name: n.name, Netns: n.ns, Dir: filepath.Join(dir, n.name), Path: path}
	}
	return nil
}

// removeStateDir removes the run's state directory (idempotent).
func (c *Cluster) removeStateDir() error {
	if c.stateDir == "" {
		return nil
	}
	if err := os.RemoveAll(c.stateDir); err != nil {
		return fmt.Errorf("remove state directory: %w", err)
	}
	if dr, ok := c.cfg.Recorder.(DirRecorder); ok {
		if err := dr.RemovedDir(c.stateDir); err != nil {
			return fmt.Errorf("journal removal of %s: %w", c.stateDir, err)
		}
	}
	c.stateDir = ""
	return nil
}

// attachCNI wires pod p through the reference plugins with the
// configuration the datapath's CNI hands them on node n.
func (c *Cluster) attachCNI(ctx context.Context, n *Node, p *Pod, steps *datapath.Steps) (datapath.Attachment, error) {
	conf, err := c.cfg.Datapath.(datapath.CNIDelegate).CNIConfig(n.info())
	if err != nil {
		return datapath.Attachment{}, fmt.Errorf("cni configuration of %s on node %s: %w", c.cfg.Datapath.Name(), n.name, err)
	}
	cp := p.cniPod()
	cp.Done = steps.Done
	res, err := n.cni.Add(ctx, cp, conf)
	if err != nil {
		// As a runtime does after a failed ADD: DEL, so that nothing stays
		// allocated (the plugins' DEL ignores what is not there). A DEL
		// that failed may leave what the ADD got: host-local's lease in
		// the state directory, keyed by the pod's name, and a plugin's
		// rules in the node's namespace. Deleting the pod's namespace
		// (addPod) does not take them, only Close does, and the runner
		// makes the pods again on this cluster, under the same names,
		// after a failed Scale: it must stop instead (engine.ErrLeftBehind).
		if derr := n.cni.Del(context.WithoutCancel(ctx), p.cniPod(), conf); derr != nil {
			err = errors.Join(err, engine.LeftBehind(derr))
		}
		return datapath.Attachment{}, err
	}
	p.cniConf = conf
	return datapath.Attachment{IP: res.IP, HostVeth: res.HostVeth}, nil
}

// detachCNI runs DEL for a pod wired through the plugins. Teardown must
// finish even when the run is being cancelled, so it takes no context.
func (c *Cluster) detachCNI(p *Pod) error {
	if p.cniConf == nil {
		return nil
	}
	if err := p.node.cni.Del(context.Background(), p.cniPod(), p.cniConf); err != nil {
		return err
	}
	p.cniConf = nil
	return nil
}

// cniPod is the pod as the plugins see it: its namespace name is unique
// per run and serves as the container ID.
func (p *Pod) cniPod() cniexec.Pod {
	return cniexec.Pod{ID: p.ns, Netns: p.ns, IfName: datapath.PodEth}
}
