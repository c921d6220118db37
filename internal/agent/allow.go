package agent

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// The agent is privileged on its node: a request that reached it could
// write any sysctl or sysfs file, which is root on the node. It writes
// only the knobs cnibench tunes (tune.Plan): the host-global RFS table,
// network sysctls (a tuning's sysctls, by the rules study validation
// applies to them), each receive queue's RPS mask and RFS flow count,
// of the node or of a pod, and each CPU's idle latency limit. Reads and
// lists stay open (they change nothing and the runner reads device
// facts), and the tune package still refuses paths that leave /proc/sys
// or the sysfs root.
var writable = []struct{ fs, pattern string }{
	{tune.FSSysfs, "class/net/*/queues/rx-*/rps_cpus"},
	{tune.FSSysfs, "class/net/*/queues/rx-*/rps_flow_cnt"},
	// A cpuIdle tuning's per-CPU idle latency limit (cpuidle.LimitPath).
	{tune.FSSysfs, "devices/system/cpu/cpu*/power/pm_qos_resume_latency_us"},
}

// sysctlDir is where the network sysctls a tuning may write live.
const sysctlDir = "/proc/sys/net/"

// errBadValue is a value the agent does not write to a knob it does
// (a bad-path refusal too: the write changes nothing).
var errBadValue = fmt.Errorf("value out of the agent's bounds: %w", tune.ErrBadPath)

// checkWritable refuses a write outside the allowlist: a path that is no
// knob cnibench tunes, a network sysctl study validation refuses (a
// device's own, such as net.ipv4.conf.eth0.rp_filter, which in the
// node's namespace is the host's uplink; the BPF JIT's hardening), and an
// RFS table size that is not a whole number from 0 (unset, what a revert
// may write) to study.MaxRFSEntries. A study and tune.Plan refuse them
// first; the agent is the node's last line of defence.
func checkWritable(fsKind, p, v string) error {
	if path.Clean(p) != p {
		return notKnob(fsKind, p)
	}
	if p == tune.SockFlowEntriesPath || (fsKind == tune.FSSysfs && path.Base(p) == "rps_flow_cnt") {
		if err := checkRFSEntries(p, v); err != nil {
			return err
		}
	}
	if fsKind == tune.FSProc && strings.HasPrefix(p, sysctlDir) {
		return checkSysctl(p)
	}
	for _, w := range writable {
		if ok, _ := path.Match(w.pattern, p); ok && w.fs == fsKind {
			return nil
		}
	}
	return notKnob(fsKind, p)
}

func notKnob(fsKind, p string) error {
	return fmt.Errorf("%s %q is not a knob cnibench tunes; the agent writes only network sysctls (%s), queues/rx-*/rps_cpus, rps_flow_cnt and cpuN/power/pm_qos_resume_latency_us: %w", fsKind, p, sysctlDir, tune.ErrBadPath)
}

// checkSysctl refuses a network sysctl's path that names no sysctl a
// tuning may set: its dotted name, back from the path, goes through
// study's refusals (study.RefusedSysctl).
func checkSysctl(p string) error {
	name := strings.ReplaceAll(strings.TrimPrefix(p, "/proc/sys/"), "/", ".")
	// A path segment with any other character, a dot above all, is no
	// name a tuning could give.
	if !study.IsSysctlName(name) || study.SysctlPath(name) != p {
		return fmt.Errorf("%s %q is no network sysctl's name (letters, digits, '_' and '-' between the slashes): %w", tune.FSProc, p, tune.ErrBadPath)
	}
	if why := study.RefusedSysctl(name); why != "" {
		return fmt.Errorf("%s %q: %s: %w", tune.FSProc, p, why, tune.ErrBadPath)
	}
	return nil
}

// checkRFSEntries bounds an RFS table size as study bounds a tuning's
// (study.MaxRFSEntries); 0 turns the table off, the kernel's default.
func checkRFSEntries(p, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > study.MaxRFSEntries {
		return fmt.Errorf("%s = %q: the agent writes an RFS table size of 0 to %d (study.MaxRFSEntries), a whole number: %w", p, v, study.MaxRFSEntries, errBadValue)
	}
	return nil
}

// writeChecked vets a write (checkWritable) and makes it. A value out of
// bounds is still written where it is the knob's value from before the
// session's first change of it: putting back what the node had (an
// operator's larger RFS table, which the controller's revert writes) is
// no change of the agent's.
func (s *Server) writeChecked(ns, fsKind, p, v string) error {
	err := s.cfg.writable(fsKind, p, v)
	if errors.Is(err, errBadValue) && s.isOld(ns, fsKind, p, v) {
		err = nil
	}
	if err != nil {
		return err
	}
	return s.write(ns, fsKind, p, v)
}

// isOld says whether v is the value the session journaled as the knob's
// before its first change.
func (s *Server) isOld(ns, fsKind, p, v string) bool {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	ps, ok := s.pending[key(ns, fsKind, p)]
	return ok && tune.Equal(p, ps.set.Old, v)
}
