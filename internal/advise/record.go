package advise

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// Advice from a run's record (`advise --run DIR --no-inspect`): the
// inspection is the run's env.json (inspect.FromEnv), not a machine. It
// holds a few of the facts the rules read; a rule that reads another is
// left out (LeftOut), never evaluated on the zero values the record
// leaves there, which would read as "no overlay", "0 rules" and make it
// "not applicable" silently. What a record may hold but a run did not
// record (a sysctl no tuning set) is unknown, as on a machine.

// LeftOut is the status of a rule that reads what only the live machine
// shows, on an inspection taken from a run's record: not evaluated. A
// predicate the record holds that fails still decides (not applicable).
const LeftOut = "left out"

// recordedFacts are the facts an inspection from a run's env.json holds
// (inspect.FromEnv); every other fact reads devices, interrupts,
// netfilter or conntrack, which env.json does not record of the machine.
// A new fact needs the live machine unless it is added here.
var recordedFacts = []string{"cpus", "numa_nodes", "kernel_version", "idle_wake_slow", "busy_poll", "busy_read", "rps_sock_flow_entries"}

// recordedParams are the placeholders filled from such an inspection.
var recordedParams = []string{"cpus", "idle_states"}

// liveParam is fill's error for a placeholder whose value only the live
// machine has, on an inspection from a run's record.
type liveParam struct{ name string }

func (e liveParam) Error() string {
	return "{" + e.name + "}: " + inspect.NotRecorded + " (--no-inspect)"
}

// needsMachine says whether p reads what an inspection from a run's
// record lacks; false on an inspection of a machine.
func (p *Predicate) needsMachine(in *inspect.Inspection) bool {
	switch {
	case in.Record == nil:
		return false
	case in.Record.NoEnv:
		return true
	}
	return (p.kind != "compare" && p.kind != "bool") || !slices.Contains(recordedFacts, p.fact)
}

// paramNeedsMachine is needsMachine for a placeholder.
func paramNeedsMachine(in *inspect.Inspection, name string) bool {
	return in.Record != nil && (in.Record.NoEnv || !slices.Contains(recordedParams, name))
}

// leftOutWhy is a left-out rule's Why: the reason, the same for every
// rule (the pages say it once), then what it reads.
func leftOutWhy(in *inspect.Inspection, reads []string) []string {
	return []string{leftOutReason(in), "reads " + strings.Join(reads, ", ")}
}

func leftOutReason(in *inspect.Inspection) string {
	if in != nil && in.Record != nil && in.Record.NoEnv {
		return "this machine was not inspected (--no-inspect), and the run has no env.json"
	}
	return "this machine was not inspected (--no-inspect), and the run's env.json does not record what it reads"
}

// Listed are the rules the pages list under "Rules that do not apply or
// cannot tell": the others but those left out, which LeftOutLine names
// in one line.
func (r *Report) Listed() []Result {
	return slices.DeleteFunc(slices.Clone(r.Others), func(o Result) bool { return o.Status == LeftOut })
}

// LeftOutLine says in one line which rules were left out and why; ""
// where none was.
func (r *Report) LeftOutLine() string {
	var names []string
	for _, o := range r.Others {
		if o.Status != LeftOut {
			continue
		}
		n := o.Name
		if len(o.Why) > 1 {
			n += " (" + o.Why[1] + ")"
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("Left out, as %s: %s. Advise on that machine itself, without --no-inspect, evaluates them",
		strings.Replace(leftOutReason(r.Inspection), "what it reads", "what they read", 1), strings.Join(names, "; "))
}

// recordSummary is Summarize for an inspection from a run's record:
// only what env.json holds, never a zero it did not record.
func recordSummary(in *inspect.Inspection) []Finding {
	f := []Finding{{"machine", in.Source}}
	if in.Record.NoEnv {
		return f
	}
	add := func(what, format string, a ...any) { f = append(f, Finding{what, fmt.Sprintf(format, a...)}) }
	add("kernel", "%s", orUnknown(in.Kernel))
	add("CPUs", "%s on %s NUMA node(s)", recordedCount(in, "cpus", in.CPUs), recordedCount(in, "numa_nodes", in.NUMANodes))
	if v, ok := in.Sysctls[inspect.SysRPSSockFlowEntries]; ok {
		add("rps_sock_flow_entries", "%d", v)
	}
	_, r := in.Sysctls[inspect.SysBusyRead]
	_, p := in.Sysctls[inspect.SysBusyPoll]
	if r || p {
		add("busy polling", "busy_read %s, busy_poll %s", sysctlUs(in, inspect.SysBusyRead), sysctlUs(in, inspect.SysBusyPoll))
	}
	f = append(f, idleFindings(in)...)
	add("not recorded", "NICs, queues, interrupts, offloads, tunnels, bridges, pod links, CNI, netfilter, conntrack, qdiscs: "+
		"env.json does not record them of the machine")
	if len(in.Unknown) > 0 {
		f = append(f, unknownFinding(in))
	}
	return f
}

// recordedCount is a count the record holds, or "unknown" where it did
// not record it (a 0 there is no machine's count).
func recordedCount(in *inspect.Inspection, key string, n int) string {
	if _, ok := in.Unknown[key]; ok {
		return "unknown"
	}
	return strconv.Itoa(n)
}

// NoCandidates is what the pages say where no rule proposes a knob.
func (r *Report) NoCandidates() string {
	if r.fromRecord() {
		return "No rule proposes a knob for the machine the run measured, of those its env.json lets advise evaluate."
	}
	return "No rule proposes a knob for this machine."
}

// fromRecord says whether the report's inspection is a run's record.
func (r *Report) fromRecord() bool { return r.Inspection != nil && r.Inspection.Record != nil }
