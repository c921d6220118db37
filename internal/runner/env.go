package runner

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// writeEnv records the machine and the server node's offloads, steering
// settings and the sysctls the tunings set, as found before any tuning.
func (r *run) writeEnv(c engine.Cluster) error {
	pinned := false
	for _, w := range r.study.Variants() {
		pinned = pinned || w.Pin != nil
	}
	e := machineEnv(r.plan.remote, r.study)
	e.Tool, e.Version, e.RunID, e.Engine, e.Started = "cnibench", version.Version, r.id, r.engine.Name(), time.Now()
	e.RunIDs = appendNew(slices.Clone(r.runIDs), r.id)
	e.StudySHA256 = r.studySum
	srv := c.Server()
	e.Steering = tune.Snapshot(r.engine.FS(srv), steeringIfaces(srv))
	cli := c.Client()
	if r.study.Steers(study.SideClient) && cli.Name() != srv.Name() {
		r.clientSteering(cli, e.Steering)
	}
	e.Sysctls = r.tuningSysctls(srv, cli)
	r.engine.Describe(r.engineRun(), c, &e)
	// Before sameNode, which holds a resumed run's nodes to sharing a
	// kernel or not as the interrupted run's did.
	e.SharedKernel = r.plan.sharedKernel
	if err := sameNode(r.prevEnv, e); err != nil {
		return err
	}
	// A resumed run's env.json keeps what the interrupted run recorded:
	// its notes (warnings, skips, an earlier resume's note) and how it
	// built datapaths this process may not build again (an interleaved
	// run cut in its last round), which compare reads. This process's
	// notes follow, once each; its datapaths replace theirs
	// (recordDatapath).
	e.Notes = appendNew(slices.Clone(r.priorNotes), e.Notes...)
	e.Notes = appendNew(e.Notes, oneNUMANote(pinned, r.plan.remote, e.NUMANodes, r.plan.topo))
	e.Notes = appendNew(e.Notes, r.notes...)
	if r.prevEnv != nil {
		e.Notes = appendNew(e.Notes, remoteResumeNote(*r.prevEnv))
	}
	if r.keptEnv != nil {
		// The kept trials' pods ran these; this run's add to them.
		e.ImageIDs = slices.Clone(r.keptEnv.ImageIDs)
	}
	e.Datapaths = maps.Clone(r.priorDatapaths)
	e.Tunings = r.priorTunings
	e.Impairments = r.priorImpairments
	e.MachineCPUs = r.plan.localMachine()
	e.Origin = r.origin
	// The machine time as last counted, a resumed run's the interrupted
	// run's, until writeStops counts it again: a resumed run killed
	// before its first stops lost it, and with it the floor the next
	// resume counts from (restore).
	e.MachineS = r.env.MachineS
	r.env = e
	if w := clientUnchecked(r.prevEnv, e); w != "" {
		if err := r.warnOnce([]string{w}); err != nil {
			return err
		}
	}
	return r.out.WriteEnv(r.env)
}

// machineEnv is env.json's machine part: this machine's host, kernel,
// CPUs, idle states and tool versions, with the programs the study's
// workloads run as their drivers describe them (ab prints its version
// for -V, nginx for -v). On a cluster (remote) none of it is the nodes':
// a laptop's CPU model, NUMA count and iperf3 were reported as the
// server node's, so only go (this cnibench's build) is kept, and the
// engine's Describe gives the server node's facts and the image's tools
// where it can; what it cannot stays blank, unknown.
func machineEnv(remote bool, s *study.Study) results.Env {
	if remote {
		return results.Env{Tools: map[string]string{"go": runtime.Version()}}
	}
	e := envinfo.Collect([]string{"ethtool"})
	for _, p := range registry.StudyPrograms(s) {
		if v := envinfo.Version(p.Version); v != "" {
			e.Tools[p.Name] = v
		}
	}
	return e
}

// tuningSysctls are the sysctls the study's tunings set, as found before
// any tuning: the server node's, with a client-side tuning's too when some
// workload's client runs on the server node (intra-node), and, keyed
// "client: NAME", the client node's when some workload's client runs
// there. nil when the tunings set none.
func (r *run) tuningSysctls(srv, cli engine.Node) map[string]string {
	intra, inter := false, false
	for _, w := range r.study.Variants() {
		intra = intra || w.IntraNode()
		inter = inter || !w.IntraNode()
	}
	names := r.study.TuningSysctls(study.SideServer)
	if intra {
		names = append(names, r.study.TuningSysctls(study.SideClient)...)
		slices.Sort(names)
		names = slices.Compact(names)
	}
	var out map[string]string
	if len(names) > 0 {
		out = tune.SysctlSnapshot(r.engine.FS(srv), srv.Netns(), names)
	}
	if !inter {
		return out
	}
	for name, v := range tune.SysctlSnapshot(r.engine.FS(cli), cli.Netns(), r.study.TuningSysctls(study.SideClient)) {
		if out == nil {
			out = map[string]string{}
		}
		out["client: "+name] = v
	}
	return out
}

// clientSteering adds the client node's RPS/RFS settings as found, keyed
// "client: PATH", for tunings that steer at the client end; the global
// flow table once, unless the nodes share this kernel.
func (r *run) clientSteering(cli engine.Node, into map[string]string) {
	for k, v := range tune.Snapshot(r.engine.FS(cli), steeringIfaces(cli)) {
		if k == tune.SockFlowEntriesSysctl && r.plan.sharedKernel {
			continue
		}
		into["client: "+k] = v
	}
}

// steeringIfaces are the node's devices whose RPS/RFS env.json records:
// its underlay and tunnel.
func steeringIfaces(n engine.Node) []netns.Iface {
	ifaces := engine.ReceiveDevices(n)
	if t, ok := n.Tunnel(); ok {
		ifaces = append(ifaces, t)
	}
	return ifaces
}

// recordTuning adds what a trial's tuning set to env.json (the report's
// table of what each tuning set), written when it adds something: a mask
// that follows the busiest core may differ between trials.
func (r *run) recordTuning(name string, set []results.TuningSetting) error {
	if len(set) == 0 {
		return nil
	}
	prior, seen := r.env.Tunings[name]
	merged := results.MergeSettings(prior, set)
	if reflect.DeepEqual(merged, prior) {
		return nil
	}
	if r.env.Tunings == nil {
		r.env.Tunings = map[string][]results.TuningSetting{}
	}
	r.env.Tunings[name] = merged
	if !seen && results.ChangedNothing(merged) {
		// Its cells would measure the baseline again under another
		// name: worth a word before hours of trials.
		return r.warnOnce([]string{unchangedWarning(name, merged)})
	}
	return r.out.WriteEnv(r.env)
}

// unchangedWarning says that a tuning's first trial found every value it
// sets already in place.
func unchangedWarning(name string, set []results.TuningSetting) string {
	var held []string
	for _, s := range set {
		held = append(held, fmt.Sprintf("%s = %s (%s)", s.Knob, s.Value, s.Where))
	}
	return fmt.Sprintf("tuning %s changes nothing on this machine: %s already held; its cells measure the machine as found "+
		"(the report's \"What each tuning set\")", name, strings.Join(slices.Compact(held), ", "))
}

// warnOnce reports each warning the first time it is seen, on the
// progress log and in env.json's notes.
func (r *run) warnOnce(warnings []string) error { return r.onceInNotes("warning", warnings) }

// onceInNotes reports each line the first time this process sees it on
// the progress log after kind ("warning", "note"), and the first time
// the run does in env.json's notes: a resumed run's operator hears a
// warning the interrupted run's notes already hold, which env.json
// does not repeat.
func (r *run) onceInNotes(kind string, lines []string) error {
	for _, w := range lines {
		if r.logged[w] {
			continue
		}
		if r.logged == nil {
			r.logged = map[string]bool{}
		}
		r.logged[w] = true
		r.opt.Progress.Logf("%s: %s", kind, w)
		if slices.Contains(r.env.Notes, w) {
			continue
		}
		r.env.Notes = append(r.env.Notes, w)
		if err := r.out.WriteEnv(r.env); err != nil {
			return err
		}
	}
	return nil
}

// appendNew appends to notes each of more that is not empty and not
// there yet.
func appendNew(notes []string, more ...string) []string {
	for _, n := range more {
		if n != "" && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	return notes
}

// recordDatapath adds how a datapath was built to env.json.
func (r *run) recordDatapath(name string, de results.DatapathEnv) error {
	if r.env.Datapaths == nil {
		r.env.Datapaths = map[string]results.DatapathEnv{}
	}
	r.env.Datapaths[name] = de
	return r.out.WriteEnv(r.env)
}

// bridgeNetfilter reads net.bridge.bridge-nf-call-iptables in a node's
// namespace: "absent" when br_netfilter is not loaded (the file is
// missing), "" when it cannot be read.
func bridgeNetfilter(fs tune.FS, nodeNS string) string {
	v, err := fs.Read(nodeNS, tune.FSProc, probe.BrNetfilterSysctl)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return "absent"
	case err != nil:
		return ""
	}
	return strings.TrimSpace(v)
}

// oneNUMANote says, when workloads pin and the server's machine has one
// NUMA node, that pinning there only separates cores. The machine is this
// one on the local engine and the server node on a cluster; nodes is its
// count as env.json records it (the node's, from its agent, on a
// cluster; 0 unknown, no note), and the topology the engine read where
// it read one (topo, for pins by placement name) counts instead. A topo
// of CPU-list pins holds only the CPUs the pods may use, no topology: it
// counted 0 nodes, and a two-node server was said to have one.
func oneNUMANote(pinned, remote bool, nodes int, topo *engine.NodeTopology) string {
	where := "this machine"
	switch {
	case !pinned:
		return ""
	case remote:
		where = "the server node"
		if topo != nil {
			where = topo.Where
			if len(topo.CPUs) > 0 {
				nodes = topo.Nodes()
			}
		}
	}
	if nodes != 1 {
		return ""
	}
	return "workloads pin servers and clients to CPUs, but " + where + " has one NUMA node: " +
		"same-NUMA and cross-NUMA placements (seed 001) cannot be told apart there; pinning only separates cores"
}

// recordImages adds to env.json the images the nodes resolved the
// workload pods' image to (engine.ImageResolver), known only once the
// pods are ready: env.json's image is a reference, which, a tag, may
// name another image on each node and in each run. Nodes that resolved
// it to different images are warned of, each node's named; so is a run
// whose image_ids hold more than one otherwise, an interrupted run's
// and this one's (a tag re-pushed before `run --resume`) or another
// cluster's earlier in this run, each side's named: the nodes of this
// cluster agreeing said nothing of the images the kept trials ran.
func (r *run) recordImages(c engine.Cluster) error {
	ir, ok := c.(engine.ImageResolver)
	if !ok {
		return nil
	}
	byNode := ir.ResolvedImages()
	var now, perNode []string
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		now = append(now, byNode[n]...)
		perNode = append(perNode, n+" "+strings.Join(byNode[n], ", "))
	}
	if now = distinct(now); len(now) > 1 {
		if err := r.warnOnce([]string{fmt.Sprintf("the nodes resolved the workload pods' image %s to different images (a tag pulled "+
			"at different times; `kube install` by digest pins one): %s; the cells may have run different programs",
			orUnknown(r.env.Image), strings.Join(perNode, "; "))}); err != nil {
			return err
		}
	}
	r.imageIDs = distinct(append(r.imageIDs, now...))
	ids := distinct(append(slices.Clone(r.env.ImageIDs), now...))
	if len(ids) > 1 && !slices.Equal(ids, now) {
		if err := r.warnOnce([]string{r.imagesAcrossWarning()}); err != nil {
			return err
		}
	}
	if slices.Equal(ids, r.env.ImageIDs) {
		return nil
	}
	r.env.ImageIDs = ids
	return r.out.WriteEnv(r.env)
}

// imagesAcrossWarning says that the run's pods ran more than one image
// though no one cluster's nodes disagreed: the interrupted run's pods
// (a resumed run's kept trials) one set, this run's another.
func (r *run) imagesAcrossWarning() string {
	var kept []string
	if r.keptEnv != nil {
		kept = r.keptEnv.ImageIDs
	}
	ran := "this run's pods ran " + strings.Join(r.imageIDs, ", ")
	if len(kept) > 0 {
		ran = "the interrupted run's pods ran " + strings.Join(kept, ", ") + "; " + ran
	}
	return fmt.Sprintf("the workload pods' image %s resolved to different images over the run (a tag re-pushed or pulled "+
		"again in between; `kube install` by digest pins one): %s; the cells may have run different programs",
		orUnknown(r.env.Image), ran)
}

// distinct is l sorted, each value once.
func distinct(l []string) []string {
	slices.Sort(l)
	return slices.Compact(l)
}
