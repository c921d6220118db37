package runner

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
)

// recorder adapts the journal to the local engine's Recorder.
type recorder struct{ j *journal.Journal }

func (r recorder) RecordNetns(name string) error {
	_, err := r.j.RecordObject(journal.Object{Kind: journal.KindNetns, Name: name})
	return err
}

func (r recorder) RemovedNetns(name string) error {
	return r.j.MarkRemoved(journal.KindNetns, "", name)
}

func killIn(ns string) error { return cleanup.KillInNetns(ns) }

// writeEnv records the machine and the server node's offloads and
// steering settings as found before any tuning.
func (r *run) writeEnv(c *local.Cluster) error {
	e := envinfo.Collect([]string{"iperf3", "ethtool"})
	e.Tool, e.Version, e.RunID, e.Engine, e.Started = "cnibench", version.Version, r.id, "local", time.Now()
	e.NodeCPUs = map[string][]int{
		local.ServerNode: r.plan.serverCPUs,
		local.ClientNode: r.plan.clientCPUs,
	}
	srv := c.Server()
	ifaces := []engine.Iface{srv.Underlay()}
	if t, ok := srv.Tunnel(); ok {
		ifaces = append(ifaces, t)
	}
	e.Steering = tune.Snapshot(tune.LocalFS{}, ifaces)
	e.Offloads = map[string]map[string]bool{}
	for _, n := range c.Nodes() {
		for _, ifc := range []engine.Iface{n.Underlay()} {
			if f := offloads(n, ifc.Name); f != nil {
				e.Offloads[n.Name()+"/"+ifc.Name] = f
			}
		}
		if t, ok := n.Tunnel(); ok {
			if f := offloads(n, t.Name); f != nil {
				e.Offloads[n.Name()+"/"+t.Name] = f
			}
		}
	}
	if len(r.plan.serverCPUs) == 0 && len(r.plan.clientCPUs) == 0 {
		e.Notes = append(e.Notes, "nodes share every CPU of the machine (no spec.nodes.*.cpus): per-core figures show the whole machine, where server and client work mix")
	}
	e.Notes = append(e.Notes, "local engine: nodes are network namespaces joined by a veth underlay; packets never touch a physical NIC, so NIC interrupts, hardware offloads and wire speed are not part of the measurement")
	return r.out.WriteEnv(e)
}

// offloads reads `ethtool -k DEV` inside the node; nil when ethtool is
// missing or fails (env.json is documentation, not a precondition).
func offloads(n *local.Node, dev string) map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := n.Start(ctx, []string{"ethtool", "-k", dev})
	if err != nil {
		return nil
	}
	out, _, err := p.Wait()
	if err != nil {
		return nil
	}
	return ParseEthtoolFeatures(out)
}

// ParseEthtoolFeatures reads `ethtool -k` output ("name: on [fixed]").
func ParseEthtoolFeatures(out []byte) map[string]bool {
	m := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") && strings.Contains(line, "Features for") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, "on"):
			m[k] = true
		case strings.HasPrefix(v, "off"):
			m[k] = false
		}
	}
	return m
}
