package seen

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/results"
)

// A cell bound by one core on both its nodes is one cell: the text said
// "2 of its 2 cells" of a run whose one cell of two was bound. The
// server node's is named first; a run bound on the client node alone
// (a cluster's, whose client node advise does not inspect) is no reason
// for the candidates, which tune the server node.
func TestOneCoreNodes(t *testing.T) {
	bound := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 1, SoftIRQ: 74}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 87}}}
	spread := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 40}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 45}}}
	hot := results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "http", Replicas: 1}
	cool := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "http", Replicas: 1}
	run := func(server, client []results.CoreStat) *results.Run {
		r := &results.Run{}
		for trial := 1; trial <= 2; trial++ {
			r.Samples = append(r.Samples,
				results.Sample{Cell: hot, Trial: trial, Cores: server, ClientCores: client},
				results.Sample{Cell: cool, Trial: trial, Cores: spread, ClientCores: spread})
		}
		return r
	}
	got := oneCore(run(bound, bound), nil)
	if !strings.HasPrefix(got.text, "1 of its 2 cells were bound by one core: flannel http baseline r=1 on the server node") ||
		!strings.Contains(got.text, "flannel http baseline r=1 on the client node") || len(got.cells) != 1 || got.lean != advise.LeanFor {
		t.Errorf("a cell bound on both nodes: %q, cells %v, lean %q", got.text, got.cells, got.lean)
	}
	got = oneCore(run(spread, bound), nil)
	if !strings.HasPrefix(got.text, "1 of its 2 cells were bound by one core: flannel http baseline r=1 on the client node") || got.lean != advise.LeanClientNode {
		t.Errorf("a cell bound on the client node alone: %q, lean %q, want %q", got.text, got.lean, advise.LeanClientNode)
	}
	if got := oneCore(run(bound, spread), nil); got.lean != advise.LeanFor {
		t.Errorf("a cell bound on the server node: lean %q", got.lean)
	}
}
