package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// dropEngine's preflight drops datapath drop from the study, as the
// local engine drops one it cannot build under skipUnavailable and the
// kube engine all but the one its cluster's CNI stands for.
type dropEngine struct {
	stubEngine
	drop string
}

func (e dropEngine) Preflight(ctx context.Context, s *study.Study, n engine.Needs) (engine.Facts, error) {
	var keep []study.Datapath
	for _, d := range s.Spec.Datapaths {
		if d.Name != e.drop {
			keep = append(keep, d)
		}
	}
	s.Spec.Datapaths = keep
	return e.stubEngine.Preflight(ctx, s, n)
}

// A spec.only that picks only cells of a datapath preflight dropped
// picks nothing of what is left: preflight refuses the run at spec.only
// (nothing measured, no study.yaml whose empty only would select every
// cell); one with a selector left passes.
func TestPreflightOnlyOfDroppedDatapath(t *testing.T) {
	const spec = "  datapaths: [bridge, flannel-vxlan]\n  workloads: [{tool: iperf3}]\n  skipUnavailable: true\n  only: "
	e := dropEngine{stubEngine{machine: cpuset.Range(2)}, "flannel-vxlan"}
	_, err := preflight(context.Background(), e, parseSpec(t, spec+"[{datapath: flannel-vxlan}]\n"))
	want := "s.yaml:8: spec.only: nothing is left to run: its selectors pick only cells of datapath flannel-vxlan"
	if err == nil || !IsPreflight(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v\nwant %s...", err, want)
	}
	s := parseSpec(t, spec+"[{datapath: flannel-vxlan}, {datapath: bridge}]\n")
	if _, err := preflight(context.Background(), e, s); err != nil {
		t.Errorf("a selector left: %v", err)
	}
	if len(s.Cells()) == 0 {
		t.Error("no cells left")
	}
}
