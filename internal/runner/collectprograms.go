package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// missingCollectorPrograms notes, for a run on this machine's nodes, the
// programs a collector the study enables would run but cannot find: the
// collector then leaves its metrics out of every trial (a node need not
// run iptables), which a user of `counters: true` should hear before the
// run, not find as an empty column after it. look finds a program
// (probe.Found).
func missingCollectorPrograms(s *study.Study, look func(string) bool) []string {
	var notes []string
	for _, e := range collect.List {
		var users []string
		for _, w := range s.Variants() {
			if e.Enabled(w) {
				users = append(users, w.Name)
			}
		}
		if len(users) == 0 {
			continue
		}
		for _, p := range e.Programs {
			if look(p) {
				continue
			}
			notes = append(notes, fmt.Sprintf("collector %s: %s is not installed here%s, so %s will have no %s metrics",
				e.Name, p, installHint(p), listed("workload", users), strings.Join(e.Metrics, ", ")))
		}
	}
	return notes
}

// installHint names the package that ships program p, from the workload
// tools' self-descriptions.
func installHint(p string) string {
	for _, q := range registry.AllPrograms() {
		if q.Name == p && q.Package != "" {
			return " (apt-get install " + q.Package + ")"
		}
	}
	return ""
}

// listed is "workload a" or "workloads a, b".
func listed(what string, names []string) string {
	if len(names) == 1 {
		return what + " " + names[0]
	}
	return what + "s " + strings.Join(names, ", ")
}
