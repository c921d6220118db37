package runner

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// writeEnv records the machine and the server node's offloads and
// steering settings as found before any tuning.
func (r *run) writeEnv(c engine.Cluster) error {
	pinned := false
	for _, w := range r.study.Variants() {
		pinned = pinned || w.Pin != nil
	}
	e := envinfo.Collect([]string{"ethtool"})
	// The programs the study's workloads run, as their drivers describe
	// them (ab prints its version for -V, nginx for -v).
	for _, p := range registry.StudyPrograms(r.study) {
		if v := envinfo.Version(p.Version); v != "" {
			e.Tools[p.Name] = v
		}
	}
	e.Tool, e.Version, e.RunID, e.Engine, e.Started = "cnibench", version.Version, r.id, r.backend.name(), time.Now()
	srv := c.Server()
	ifaces := []netns.Iface{srv.Underlay()}
	if t, ok := srv.Tunnel(); ok {
		ifaces = append(ifaces, t)
	}
	e.Steering = tune.Snapshot(r.backend.fs(), ifaces)
	r.backend.describe(r, c, &e)
	if pinned && e.NUMANodes <= 1 {
		e.Notes = append(e.Notes, "workloads pin servers and clients to CPUs, but this machine has one NUMA node: "+
			"same-NUMA and cross-NUMA placements (seed 001) cannot be told apart here; pinning only separates cores")
	}
	e.Notes = append(e.Notes, r.notes...)
	r.env = e
	return r.out.WriteEnv(e)
}

// recordDatapath adds how a datapath was built to env.json.
func (r *run) recordDatapath(name string, de results.DatapathEnv) error {
	if r.env.Datapaths == nil {
		r.env.Datapaths = map[string]results.DatapathEnv{}
	}
	r.env.Datapaths[name] = de
	return r.out.WriteEnv(r.env)
}

// offloads reads `ethtool -k DEV` inside the node; nil when ethtool is
// missing or fails (env.json is documentation, not a precondition).
func offloads(n engine.Node, dev string) map[string]bool {
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
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || k == "" || strings.HasPrefix(k, "Features for") {
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
