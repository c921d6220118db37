package tune

import (
	"cmp"
	"path"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/results"
)

// Settings sums up what the tuning set on tgt, for the run's record
// (env.json "tunings", the report's table of what each tuning set): one
// entry per place, knob and value, with the devices whose queues were
// written and the values found before. Writes left alone because the
// value already held are included: the tuning set them all the same.
// Nil for a nil *Applied (a baseline).
//
// earlier are the same tuning's Applieds at the other end of the pairs
// (side: both's server side): on emulated nodes the host is both ends',
// so a host write an earlier one planned too (rps_sock_flow_entries, a
// global sysctl) found that one's value, not the machine's, and is left
// out; host writes of its own, as the idle limits of the client's CPUs,
// are kept.
func (a *Applied) Settings(tgt Target, earlier ...*Applied) []results.TuningSetting {
	if a == nil {
		return nil
	}
	already := map[string]bool{}
	for _, e := range earlier {
		e.hostWrites(already)
	}
	pods := map[string]bool{}
	for _, ifc := range tgt.PodIfaces {
		if ifc.Netns != tgt.NodeNetns {
			pods[ifc.Netns] = true
		}
	}
	node, podsAt := cmp.Or(tgt.NodeWhere, results.WhereNode), cmp.Or(tgt.PodsWhere, results.WherePods)
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []results.TuningSetting
	for _, w := range a.seen {
		s := results.TuningSetting{Value: oneLine(w.Value), Found: []string{oneLine(w.old)}, Unchanged: Equal(w.Path, w.old, w.Value)}
		switch {
		case pods[w.Netns]:
			s.Where = podsAt
		case w.Netns == "" && tgt.NodeNetns != "" && already[w.FS+"|"+w.Path]:
			continue
		case w.Netns == "" && tgt.NodeNetns != "":
			// The node has a namespace of its own, so what is written
			// outside it is the machine's (a global sysctl).
			s.Where = results.WhereHost
		default:
			s.Where = node
		}
		if cpu, ok := cpuidle.ParseLimitPath(w.Path); ok && w.FS == FSSysfs {
			s.Knob, s.Devices = path.Base(w.Path), []string{"cpu" + strconv.Itoa(cpu)}
		} else if w.FS == FSProc {
			s.Knob = sysctlName(w.Path)
		} else {
			s.Knob, s.Devices = path.Base(w.Path), []string{queueDevice(w.Path)}
		}
		out = results.MergeSettings(out, []results.TuningSetting{s})
	}
	return out
}

// hostWrites adds the fs and path of every write a planned in the
// host's namespace to m. Safe on a nil *Applied.
func (a *Applied) hostWrites(m map[string]bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.seen {
		if w.Netns == "" {
			m[w.FS+"|"+w.Path] = true
		}
	}
}

// sysctlName is the dotted name of a /proc/sys path (study.SysctlPath's
// inverse): "/proc/sys/net/core/busy_read" is "net.core.busy_read".
func sysctlName(p string) string {
	return strings.ReplaceAll(strings.TrimPrefix(p, "/proc/sys/"), "/", ".")
}

// queueDevice is the device of a receive queue's file
// ("class/net/eth1/queues/rx-0/rps_cpus" is eth1).
func queueDevice(p string) string {
	parts := strings.Split(p, "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "class" && parts[i+1] == "net" {
			return parts[i+2]
		}
	}
	return p
}

// oneLine is a value as one line, fields one space apart: the kernel
// prints tcp_rmem's three numbers with tabs.
func oneLine(v string) string { return strings.Join(strings.Fields(v), " ") }
