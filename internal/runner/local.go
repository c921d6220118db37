package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// localBackend runs studies on network namespaces of this machine.
type localBackend struct {
	procRoot string
}

func (localBackend) name() string { return "local" }

func (b localBackend) preflight(_ context.Context, s *study.Study, p *plan) error {
	if os.Geteuid() != 0 {
		return errors.New("the local engine needs root (it creates network namespaces and writes sysfs); run with sudo")
	}
	var keep []study.Datapath
	for _, sd := range s.Spec.Datapaths {
		d, err := catalog.Build(catalog.FromStudy(sd))
		if err != nil {
			return fmt.Errorf("datapath %s: %w", sd.Name, err)
		}
		err = probe.Require(append(d.Features(), knobFeatures(sd)...)...)
		if err == nil {
			err = local.CheckWiring(d, sd.Wiring, nil)
		}
		if err != nil {
			if !s.Spec.SkipUnavailable {
				return fmt.Errorf("datapath %s: %w", sd.Name, err)
			}
			p.notes = append(p.notes, fmt.Sprintf("datapath %s skipped: %v", sd.Name, err))
			continue
		}
		keep = append(keep, sd)
	}
	if len(keep) == 0 {
		return fmt.Errorf("none of the study's datapaths can run here (%s)", strings.Join(p.notes, "; "))
	}
	// The run, its study.yaml and its report cover what actually ran.
	s.Spec.Datapaths = keep
	return nil
}

func (b localBackend) up(ctx context.Context, r *run, sd study.Datapath) (engine.Cluster, error) {
	d, err := catalog.Build(catalog.FromStudy(sd))
	if err != nil {
		return nil, err
	}
	rate, err := r.study.Spec.Link.RateBits()
	if err != nil {
		return nil, err
	}
	return local.Up(ctx, local.Config{
		RunID: r.id, Datapath: d, UnderlayMTU: r.study.Spec.Nodes.UnderlayMTU, LinkRate: rate,
		Wiring: sd.Wiring, StateDir: filepath.Join(journal.StateDir(r.jdir, r.id), "cni"),
		ServerCPUs: r.plan.serverCPUs, ClientCPUs: r.plan.clientCPUs,
		Recorder: r.journal, Kill: cleanup.KillInNetns,
	})
}

func (b localBackend) configure(ctx context.Context, r *run, c engine.Cluster, sd study.Datapath) (results.DatapathEnv, error) {
	d, err := catalog.Build(catalog.FromStudy(sd))
	if err != nil {
		return results.DatapathEnv{}, err
	}
	rate, _ := r.study.Spec.Link.RateBits()
	de := results.DatapathEnv{
		Type: sd.Type, Implementation: sd.Implementation, Wiring: sd.Wiring,
		PodMTU: d.MTU(r.study.Spec.Nodes.UnderlayMTU), LinkRate: rate,
	}
	if datapath.IsHostNetwork(d) {
		de.PodMTU = r.study.Spec.Nodes.UnderlayMTU
	}
	if de.Offloads, err = applyOffloads(ctx, c, sd); err != nil {
		return de, err
	}
	if sd.Policy != "" {
		style, err := catalog.PolicyStyle(sd.Type)
		if err != nil {
			return de, err
		}
		de.Policy = &results.PolicyEnv{Style: style, Mode: sd.Policy, Chains: map[string]int{}, Rules: map[string]int{}}
	}
	return de, nil
}

// knobFeatures lists what a datapath entry's knobs need beyond the
// datapath itself.
func knobFeatures(d study.Datapath) []string {
	var f []string
	if len(d.Offloads) > 0 {
		f = append(f, probe.ToolEthtool)
	}
	if d.Policy != "" {
		f = append(f, probe.ToolIptablesRestore)
	}
	return f
}

func (localBackend) fs() tune.FS { return tune.LocalFS{} }

// sampler reads the machine's /proc: emulated nodes share its kernel, so
// per-core figures cover every CPU (each labelled with its node).
func (b localBackend) sampler(engine.Node) cpuSampler {
	return metrics.NewSampler(b.procRoot, time.Second)
}

func (b localBackend) reader(engine.Node) nodeReader { return localReader{procRoot: b.procRoot} }

func (b localBackend) describe(r *run, c engine.Cluster, e *results.Env) {
	lc := c.(*local.Cluster)
	e.NodeCPUs = map[string][]int{
		local.ServerNode: r.plan.serverCPUs,
		local.ClientNode: r.plan.clientCPUs,
	}
	e.Offloads = map[string]map[string]bool{}
	for _, n := range lc.Nodes() {
		ifaces := []netns.Iface{n.Underlay()}
		if t, ok := n.Tunnel(); ok {
			ifaces = append(ifaces, t)
		}
		for _, ifc := range ifaces {
			if f := offloads(n, ifc.Name); f != nil {
				e.Offloads[n.Name()+"/"+ifc.Name] = f
			}
		}
	}
	if len(r.plan.serverCPUs) == 0 && len(r.plan.clientCPUs) == 0 {
		e.Notes = append(e.Notes, "nodes share every CPU of the machine (no spec.nodes.*.cpus): per-core figures show the whole machine, where server and client work mix")
	}
	e.Notes = append(e.Notes, "local engine: nodes are network namespaces joined by a veth underlay; packets never touch a physical NIC, so NIC interrupts, hardware offloads and wire speed are not part of the measurement")
}

// The run's journal is the local engine's recorder of namespaces and of
// the CNI state directory.
var _ local.DirRecorder = (*journal.Journal)(nil)
