package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
)

// Since Linux 5.10 ("net: Restrict receive packets queuing to
// housekeeping CPUs") store_rps_map keeps RPS off the CPUs booted
// isolcpus= or nohz_full=: it narrows a mask written to rps_cpus to the
// others, and refuses one left empty. A mask naming them would fail
// every trial's read-back after the nodes are built; so "all" and
// "all-but-softirq-core" leave them out (steerCPUs, noted once), and a
// list naming one is refused at preflight.

// housekeeping is cpus without the isolated ones.
func (p *plan) housekeeping(cpus cpuset.Set) cpuset.Set {
	if len(p.isolated) == 0 {
		return cpus
	}
	var out cpuset.Set
	for _, c := range cpus {
		if !p.isolated.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// rpsFit checks an RPS CPU selector against the CPUs of the node at one
// end (isolated ones included): a list names none of the isolated CPUs,
// "all" and "all-but-softirq-core" leave some CPU without them, and
// rpsCPUsFit.
func (p *plan) rpsFit(sel, end string, cpus cpuset.Set) error {
	left := p.housekeeping(cpus)
	switch sel {
	case study.CPUsAll, study.CPUsAllButSoftIRQ:
		if len(left) == 0 && len(cpus) > 0 {
			return fmt.Errorf("rps cpus %s: every CPU of the %s node (%s) is isolated (isolcpus/nohz_full), and the kernel keeps RPS off isolated CPUs", sel, end, cpus)
		}
		return rpsCPUsFit(sel, end, left)
	}
	set, _ := cpuset.Parse(sel)
	for _, c := range set {
		if p.isolated.Contains(c) {
			return fmt.Errorf("rps cpus %s: CPU %d is isolated (isolcpus/nohz_full: %s), and the kernel keeps RPS off isolated CPUs (Linux 5.10+): name others", sel, c, p.isolated)
		}
	}
	return rpsCPUsFit(sel, end, cpus)
}

// isolatedNote says, once per run, that the RPS masks computed from the
// node's CPUs leave the isolated ones out.
func (p *plan) isolatedNote(s *study.Study) []string {
	var names []string
	for _, t := range s.Spec.Tunings {
		if t.RPS != nil && (t.RPS.CPUs == study.CPUsAll || t.RPS.CPUs == study.CPUsAllButSoftIRQ) {
			names = append(names, t.Name)
		}
	}
	all := append(append(cpuset.Set{}, p.serverNodeCPUs()...), p.clientNodeCPUs()...)
	if len(names) == 0 || len(p.housekeeping(all)) == len(all) {
		return nil
	}
	return []string{fmt.Sprintf("tuning %s: the RPS masks leave out the isolated CPUs %s (isolcpus/nohz_full), which the kernel keeps RPS off",
		strings.Join(names, ", "), p.isolated)}
}
