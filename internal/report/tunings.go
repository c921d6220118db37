package report

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// What each tuning of the run is and what its trials wrote, so a reader
// of a report can tell what "rps+" or a user's "busy" meant on this
// machine without the study file or the source.

// tuningsTable has a row per place, knob and value each tuning set (the
// tuning's name and definition on its first row), and a row for a tuning
// that set nothing the run recorded. Empty when the run has no tuning
// besides its baseline.
func tuningsTable(s *study.Study, m analysis.Model) table {
	measured := map[string]bool{}
	for _, r := range m.Rows {
		measured[r.Tuning] = measured[r.Tuning] || r.N > 0
	}
	var names []string
	for _, t := range m.Tunings {
		names = append(names, t.Name)
	}
	if !tuningsBesides(names, m.Baseline) {
		return table{}
	}
	t := table{Head: []string{"tuning", "defined as", "where", "knob", "set to", "found before", "devices"}}
	for _, d := range m.Tunings {
		switch {
		case len(d.Set) > 0:
			for i, set := range d.Set {
				name, def := d.Name, definedIn(s, d.Name)
				if i > 0 {
					name, def = "", ""
				}
				t.Rows = append(t.Rows, []string{name, def, whereText(set.Where), set.Knob,
					knobValue(set.Knob, set.Value), foundText(set), devicesText(set.Devices)})
			}
		default:
			t.Rows = append(t.Rows, []string{d.Name, definedIn(s, d.Name), "", "", unsetText(d, measured[d.Name]), "", ""})
		}
	}
	return t
}

// tuningsCaption says how to read tuningsTable.
const tuningsCaption = "What each tuning of the study is, and what its trials wrote (env.json \"tunings\"): where " +
	"(host: the machine's initial namespace, shared by every emulated node; server node; server pods: each measured " +
	"server pod; client node and client pods for a tuning with side: client or both), the knob (each receive queue's rps_cpus, a CPU mask, and rps_flow_cnt; a sysctl; or each CPU's idle latency limit, pm_qos_resume_latency_us, over the CPUs listed as devices), the value written " +
	"and the values found there before it. A value that already held was left as it was. Every value is put back after " +
	"each trial of its tuning, and by cnibench cleanup after a crash."

func whereText(w string) string {
	switch w {
	case results.WhereHost:
		return "host"
	case results.WhereNode:
		return "server node"
	case results.WherePods:
		return "server pods"
	case results.WhereClientNode:
		return "client node"
	case results.WhereClientPods:
		return "client pods"
	}
	return w
}

// knobValue is a value with what it means where that is not plain: an
// RPS mask with its CPU list, a CPU's idle latency limit in words (the
// kernel prints "0" for none and "n/a" for a limit of 0).
func knobValue(knob, v string) string {
	if knob == cpuidle.LimitKnob {
		return v + " (" + cpuidle.LimitText(v) + ")"
	}
	if knob != "rps_cpus" {
		return v
	}
	cpus, err := cpuset.ParseMask(v)
	switch {
	case err != nil:
		return v
	case len(cpus) == 0:
		return v + " (none)"
	}
	return fmt.Sprintf("%s (CPUs %s)", v, cpus)
}

// foundText lists the values found, and says so when they all held the
// value already: a tuning that changed nothing (a machine whose default
// congestion control is already bbr) measures the baseline twice.
func foundText(s results.TuningSetting) string {
	var out []string
	for _, f := range s.Found {
		out = append(out, knobValue(s.Knob, f))
	}
	text := strings.Join(out, "; ")
	if s.Unchanged {
		text += " (already so: unchanged)"
	}
	return text
}

// devicesText names up to four devices and counts the rest: with 16 pod
// pairs the host-side veths alone are 16.
func devicesText(devs []string) string {
	const shown = 4
	if len(devs) <= shown {
		return strings.Join(devs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(devs[:shown], ", "), len(devs)-shown)
}

// definedIn says what the study's tuning of that name is.
func definedIn(s *study.Study, name string) string {
	if s == nil {
		return ""
	}
	t, ok := s.Tuning(name)
	if !ok {
		return ""
	}
	return t.Describe()
}

// unsetText is the "set to" cell of a tuning without a recorded write.
func unsetText(d analysis.TuningDef, measured bool) string {
	switch {
	case d.SetsNothing:
		return "nothing"
	case !measured:
		return "not applied: no trial of it ran"
	}
	return "not recorded (the run was made before cnibench recorded what tunings set)"
}
