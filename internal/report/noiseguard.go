package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/results"
)

// guardView is what the noise guard could read on a run's nodes
// (docs/statistics.md, "Noise guard"): the report's line on it and the
// marked trials' table say which readings a cluster run lacks and why.
type guardView struct {
	// cluster: the run measured a Kubernetes cluster (engine kube), whose
	// nodes are other machines: the CPU of processes outside the run and
	// the busy share before a trial are not measured there.
	cluster bool
	// shared: its nodes run on one kernel (a kind-style cluster), whose
	// steal is the one machine's.
	shared bool
	// clientSteal: some attempt recorded the client node's steal apart
	// (results.Noise.ClientStealPct); runs before it was recorded judged
	// the server node's alone.
	clientSteal bool
}

// guardOf reads run for guardView; a nil run is a local one.
func guardOf(run *results.Run) guardView {
	if run == nil || run.Env.Engine != "kube" {
		return guardView{}
	}
	g := guardView{cluster: true, shared: run.Env.SharedKernel}
	for _, l := range [][]results.Sample{run.Samples, run.Marked} {
		for _, s := range l {
			if s.Noise != nil && s.Noise.ClientStealPct != nil {
				g.clientSteal = true
			}
		}
	}
	return g
}

// notMeasured stands for a reading the engine cannot take: on a cluster,
// the CPU of processes outside the run and the busy share before a
// trial.
const notMeasured = "n/m (cluster)"

// line is the report's one line, under the cluster line of its header,
// on what the noise guard measured on a cluster and what it could not;
// "" for a local run, where it measured all it judges.
func (g guardView) line() string {
	if !g.cluster {
		return ""
	}
	var steal string
	switch {
	case g.shared:
		steal = "the steal time of the one kernel both nodes run on (read through the server node's agent)"
	case g.clientSteal:
		steal = "the steal time of the server node and of the client node (each read through its agent; it judged the larger)"
	default:
		steal = "the steal time of the server node only (read through its agent; this run recorded none of the client node's)"
	}
	return fmt.Sprintf("Noise guard on this cluster: it measured %s, and how much of each measured window the collectors recorded; "+
		"it could not measure the CPU of processes outside the run or how busy the nodes were before each trial "+
		"(the nodes are other machines, whose other pods and processes the run does not read), so work there beside the run was not seen.", steal)
}

// stealText is the marked trials' steal column for one attempt's noise:
// on a cluster whose client node has a kernel of its own, each node's.
func (g guardView) stealText(n results.Noise) string {
	if !g.cluster || g.shared || !g.clientSteal {
		return fmt.Sprintf("%.1f", n.StealPct)
	}
	client := "-"
	if n.ClientStealPct != nil {
		client = fmt.Sprintf("%.1f", *n.ClientStealPct)
	}
	return fmt.Sprintf("server %.1f, client %s", n.StealPct, client)
}

// caption is the marked trials' caption, with what its columns lack on a
// cluster.
func (g guardView) caption() string {
	if !g.cluster {
		return markedCaption
	}
	text := markedCaption + " On a cluster (engine kube) outside CPU and busy before read " + notMeasured +
		": not measured, as the nodes are other machines whose processes and idle time the run does not read"
	if !g.shared && g.clientSteal {
		text += "; steal % gives the server node's and the client node's, and the guard judged the larger"
	}
	return text + "."
}
