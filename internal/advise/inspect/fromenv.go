package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// Record marks an inspection that read no machine: it was taken from a
// run's env.json (`advise --run DIR --no-inspect`), which records the
// machine the run measured (the server node on a cluster) in part only.
// advise evaluates on it only the facts env.json holds, and leaves out
// the rules that read the rest (devices, queues, interrupts, offloads,
// the CNI, netfilter, conntrack), saying so.
type Record struct {
	// Run is the run directory whose env.json was read.
	Run string `json:"run"`
	// NoEnv: the run has no env.json (it ended before writing one), so
	// nothing of its machine is known.
	NoEnv bool `json:"no_env,omitempty"`
}

// NotRecorded is the reason a fact env.json may hold is unknown in a
// Record inspection whose run did not record it.
const NotRecorded = "not in the run's env.json"

// FromEnv is the inspection a run's env.json gives (hasEnv false: the
// run has none): its kernel, CPUs and NUMA nodes, how its CPUs idled and
// the PM QoS limits that bounded them, and the global sysctls a tuning
// of its study set or its steering snapshot read, each as found before
// the run. Nothing else env.json holds is the machine's as advise reads
// it (its offloads and steering are the run's own devices'), so the rest
// stays empty and the Record says why.
func FromEnv(dir string, env results.Env, hasEnv bool) *Inspection {
	in := &Inspection{Version: Version, Record: &Record{Run: dir, NoEnv: !hasEnv}, Sysctls: map[string]int64{}, Unknown: map[string]string{}}
	if !hasEnv {
		in.Source = "the run " + dir + ", which has no env.json: nothing of the machine it measured is known; this machine was not inspected (--no-inspect)"
		return in
	}
	what := "the machine"
	if env.Engine == "kube" {
		what = "the cluster's server node"
	}
	in.Source = fmt.Sprintf("%s the run %s measured (%s), as its env.json recorded it when the run began (%s); this machine was not inspected (--no-inspect)",
		what, dir, env.Hostname, env.Started.UTC().Format("2006-01-02 15:04 UTC"))
	// env.json's kernel is uname's release and version; the inspection's
	// the release alone (osrelease).
	if f := strings.Fields(env.Kernel); len(f) > 0 {
		in.Kernel = f[0]
	} else {
		in.Unknown["kernel"] = NotRecorded
	}
	in.CPUs, in.NUMANodes = env.CPUs, env.NUMANodes
	if env.CPUs == 0 {
		in.Unknown["cpus"] = NotRecorded
	}
	// A machine has one NUMA node at least: 0 is a count the run could
	// not read (a cluster node's agent leaves it out where its topology
	// cannot be read), never "fewer than 2".
	if env.NUMANodes < 1 {
		in.Unknown["numa_nodes"] = NotRecorded
	}
	// No cpuidle in env.json is ambiguous: the machine had no cpuidle
	// driver, or the run was made before its engine recorded it (or could
	// not read it). On a machine a nil CPUIdle means no driver; here it
	// is unknown, and idle_wake_slow must not describe the machine.
	if env.CPUIdle == nil {
		in.Unknown["cpuidle"] = NotRecorded + " (the machine had no cpuidle driver, or the run was made before cnibench recorded how the CPUs idle)"
	} else {
		c := *env.CPUIdle
		c.Limits = nil // kept as IdleQoS, as an inspection keeps them
		in.CPUIdle = &c
		in.IdleQoS, in.OnlineCPUs = idleQoSOf(env.CPUIdle.Limits, in.Unknown)
	}
	for _, name := range initNamespaceSysctls {
		v, ok := recordedSysctl(env, name)
		if !ok {
			in.Unknown["sysctl "+name] = NotRecorded + ", which records only the sysctls its study's tunings set, and RPS/RFS's flow table"
			continue
		}
		in.Sysctls[name] = v
	}
	if len(in.Unknown) == 0 {
		in.Unknown = nil
	}
	return in
}

// idleQoSOf turns env.json's limits into an inspection's, and the online
// CPUs the per-CPU limits were read on ("" where none was: advise then
// takes CPUs 0 to N-1). A CPU without a limit of its own is recorded as
// -1 there and left out here, as an inspection leaves it.
func idleQoSOf(l *results.IdleLimits, unknown map[string]string) (*IdleQoS, string) {
	q := &IdleQoS{}
	if l == nil {
		unknown["cpu_dma_latency"] = NotRecorded + " (recorded before cnibench kept the PM QoS limits)"
		return q, ""
	}
	if l.GlobalUS == nil {
		unknown["cpu_dma_latency"] = NotRecorded + " (the run could not read it: a cluster node's is not the agent's to read)"
	}
	q.GlobalUS, q.HaltPollNS = l.GlobalUS, l.HaltPollNS
	var online cpuset.Set
	for c, us := range l.ResumeUS {
		online = append(online, c)
		if us >= 0 {
			q.setResume(c, us)
		}
	}
	if len(online) == 0 {
		return q, ""
	}
	slices.Sort(online)
	return q, online.String()
}

// recordedSysctl is a global sysctl as env.json found it: where a
// tuning set it (Sysctls), or for RPS/RFS's flow table, the steering
// snapshot (Steering); never a client node's ("client: NAME") or a
// value that could not be read ("error: ...").
func recordedSysctl(env results.Env, name string) (int64, bool) {
	s, ok := env.Sysctls[name]
	if !ok {
		s, ok = env.Steering[name]
	}
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}
