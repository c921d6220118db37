package analysis

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

func coreRow(c results.Cell, metric string, cpu int, mean float64) Row {
	return Row{SummaryRow: results.SummaryRow{Cell: c, Metric: metric, CPU: cpu, N: 3, Mean: mean}}
}

// A cell with one core saturated and another mostly idle is listed with
// the busy core's softirq share; a cell with both cores busy, one on a
// single core, and one at 94% busy are not.
func TestOneCoreCells(t *testing.T) {
	cell := func(wl string) results.Cell {
		return results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: wl, Replicas: 1}
	}
	idle, soft := results.MetricCoreIdle, results.MetricCoreSoftIRQ
	rows := []Row{
		coreRow(cell("http@c8"), idle, 0, 0.4), coreRow(cell("http@c8"), idle, 1, 87),
		coreRow(cell("http@c8"), soft, 0, 76), coreRow(cell("http@c8"), soft, 1, 5),
		coreRow(cell("tcp"), idle, 0, 2), coreRow(cell("tcp"), idle, 1, 3), // both busy: the machine's limit
		coreRow(cell("single"), idle, 0, 0), // nothing else to idle
		coreRow(cell("almost"), idle, 0, 6), coreRow(cell("almost"), idle, 1, 90),
		// A cluster's client node has cores of its own, judged apart.
		coreRow(cell("tcp"), ClientCore(idle), 2, 1), coreRow(cell("tcp"), ClientCore(idle), 3, 60),
		{SummaryRow: results.SummaryRow{Cell: cell("http@c8"), Metric: results.MetricRequests, CPU: -1, N: 3, Mean: 113}},
	}
	got := OneCoreCells(rows)
	if len(got) != 2 {
		t.Fatalf("%d cells, want http@c8 on the server and tcp on the client: %+v", len(got), got)
	}
	h := got[0]
	if h.Cell.Workload != "http@c8" || h.Node != "server" || h.CPU != 0 || h.BusyPct != 99.6 || !slices.Equal(h.IdleCPUs, []int{1}) || h.IdlePct != 87 || h.N != 3 {
		t.Errorf("http@c8: %+v", h)
	}
	if h.SoftIRQPct == nil || *h.SoftIRQPct != 76 {
		t.Errorf("http@c8's softirq share %v, want 76", h.SoftIRQPct)
	}
	c := got[1]
	if c.Cell.Workload != "tcp" || c.Node != "client" || c.CPU != 2 || c.SoftIRQPct != nil || !slices.Equal(c.IdleCPUs, []int{3}) {
		t.Errorf("the client node's cell: %+v", c)
	}
}
