package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// oneCoreTable lists the cells bound by one core (analysis.OneCore): in
// how many trials, the busy core with its softirq share, and how idle the
// idlest other core was meanwhile.
func oneCoreTable(m analysis.Model) table {
	t := table{Head: []string{"cell", "node", "trials bound", "busy core", "softirq on it", "idlest other core"}}
	for _, c := range m.OneCore {
		cpus := make([]string, len(c.BusyCPUs))
		for i, cpu := range c.BusyCPUs {
			cpus[i] = strconv.Itoa(cpu)
		}
		t.Rows = append(t.Rows, []string{CellName(c.Cell), c.Node, fmt.Sprintf("%d of %d", c.Bound, c.N),
			fmt.Sprintf("cpu %s: %.0f%% busy", strings.Join(cpus, " or "), c.BusyPct),
			fmt.Sprintf("%.0f%% of its time", c.SoftIRQPct), fmt.Sprintf("%.0f%% idle", c.IdlePct)})
	}
	return t
}

var oneCoreCaption = fmt.Sprintf("Cells at least half of whose trials kept one core of a node at least %.0f%% busy while another was at least %.0f%% idle "+
	"in at least half of the trial's seconds (from /proc/stat; on emulated nodes, the machine's cores; the busy core moves between trials "+
	"and within one, so each second is judged on its own, and the shares are means over the bound seconds): the cell's number is what one core "+
	"could do, not what the node could; its softirq share is how much of that core went to packet processing, the rest to the processes on it. "+
	"On one machine this is common: a veth pair has one receive queue, so a flow's packet work "+
	"runs in softirq on the core that sent it (under load often the receiver's, whose ACKs clock the sender's segments out), and "+
	"the receiving process is woken on that core too; a real NIC's receive queues and interrupts spread flows over cores. "+
	"Receive steering (RPS/RFS: the rps-rfs study; cnibench advise) moves packet work to other cores; "+
	"without it, a comparison of datapaths in such cells compares their cost on one core.", analysis.OneCoreBusy, analysis.OneCoreIdle)

// OneCoreLine is the note at the end of `cnibench run` for cells bound by
// one core: how many, the first few, and where the report lists them; ""
// when none.
func OneCoreLine(cells []analysis.OneCore) string {
	if len(cells) == 0 {
		return ""
	}
	names := make([]string, len(cells))
	for i, c := range cells {
		names[i] = CellName(c.Cell)
	}
	what := fmt.Sprintf("%d cells", len(cells))
	if len(cells) == 1 {
		what = "1 cell"
	}
	return fmt.Sprintf("note: %s kept one core at least %.0f%% busy while another idled, in at least half of the trials (%s): their numbers are one core's limit, "+
		"not the machine's (summary.md, \"Bound by one core\")", what, analysis.OneCoreBusy, listSome(names, maxNamed))
}

// SteerCommand is the command that started run o again with the rps and
// rfs tunings beside its baseline: receive steering is what spreads a
// veth pair's packet work over cores, and this measures what it does to
// the cells bound by one core. "" unless there are such cells and the
// study's one tuning is the built-in baseline (a tuning the study defines
// cannot be named in a --set, and one that steers was measured already).
func SteerCommand(cells []analysis.OneCore, s *study.Study, o *results.Origin) string {
	if len(cells) == 0 || s == nil || o == nil || len(o.Command) == 0 || len(s.Spec.Tunings) != 1 {
		return ""
	}
	if t := s.Spec.Tunings[0]; t.Name != "baseline" || s.Spec.Baseline != "baseline" || !t.IsBaseline() || t.Pods {
		return ""
	}
	return cmdline.Quote(cmdline.WithSet(o.Command, "tunings", "[baseline, rps, rfs]"))
}

// SteerLine introduces SteerCommand's command.
const SteerLine = "Receive steering (RPS/RFS) spreads packet work over cores; to measure it beside the baseline (three tunings instead of one):"

// oneCoreText is the section's caption, with SteerCommand's command when
// there is one.
func oneCoreText(m analysis.Model, s *study.Study) string {
	if c := SteerCommand(m.OneCore, s, m.Origin); c != "" {
		return oneCoreCaption + " To measure that beside the baseline (three tunings instead of one): " + c
	}
	return oneCoreCaption
}

// maxNamed bounds the cells a one-line note names.
const maxNamed = 3
