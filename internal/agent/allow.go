package agent

import (
	"fmt"
	"path"
	"strings"

	"github.com/cnibench/cnibench/internal/tune"
)

// The agent is privileged on its node: a request that reached it could
// write any sysctl or sysfs file, which is root on the node. It writes
// only the knobs cnibench tunes (tune.Plan): the host-global RFS table,
// network sysctls (a tuning's sysctls; study validation allows net.*
// only), each receive queue's RPS mask and RFS flow count, of the node
// or of a pod, and each CPU's idle latency limit. Reads and lists stay open (they change nothing and
// the runner reads device facts), and the tune package still refuses
// paths that leave /proc/sys or the sysfs root.
var writable = []struct{ fs, pattern string }{
	{tune.FSProc, tune.SockFlowEntriesPath},
	{tune.FSSysfs, "class/net/*/queues/rx-*/rps_cpus"},
	{tune.FSSysfs, "class/net/*/queues/rx-*/rps_flow_cnt"},
	// A cpuIdle tuning's per-CPU idle latency limit (cpuidle.LimitPath).
	{tune.FSSysfs, "devices/system/cpu/cpu*/power/pm_qos_resume_latency_us"},
}

// sysctlDir is where the network sysctls a tuning may write live.
const sysctlDir = "/proc/sys/net/"

// checkWritable refuses a write outside the allowlist.
func checkWritable(fsKind, p string) error {
	if path.Clean(p) == p {
		if fsKind == tune.FSProc && strings.HasPrefix(p, sysctlDir) {
			return nil
		}
		for _, w := range writable {
			if ok, _ := path.Match(w.pattern, p); ok && w.fs == fsKind {
				return nil
			}
		}
	}
	return fmt.Errorf("%s %q is not a knob cnibench tunes; the agent writes only network sysctls (%s), queues/rx-*/rps_cpus, rps_flow_cnt and cpuN/power/pm_qos_resume_latency_us: %w", fsKind, p, sysctlDir, tune.ErrBadPath)
}
