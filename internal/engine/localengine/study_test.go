package localengine

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// qperf's test socket is a second port, which knob service-path's
// Services do not forward: on this engine qperf through a Service is
// refused at its target's line, before root is asked for or anything
// is touched; at pod IPs it passes, and so does iperf3 through a
// Service. (The kube engine's Services forward both ports.)
func TestSecondPortBehindService(t *testing.T) {
	parse := func(workloads string) *study.Study {
		t.Helper()
		src := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n  datapaths: [bridge]\n  tunings: [baseline]\n  workloads:\n" +
			workloads + "  replicas: [1]\n  trials: 1\n  duration: 3s\n"
		s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, target := range []string{study.TargetService, study.TargetHairpin} {
		s := parse("    - {name: a, tool: iperf3, target: service}\n    - {name: rr, tool: qperf,\n       target: " + target + "}\n")
		_, err := New("").Preflight(context.Background(), s, engine.Needs{})
		if err == nil || !strings.HasPrefix(s.Locate(err).Error(), "s.yaml:10: spec.workloads[1].target: qperf cannot be reached through the local engine's Services") {
			t.Errorf("qperf target %s: %v", target, s.Locate(err))
		}
	}
	for _, wl := range []string{"    - {name: rr, tool: qperf, target: pod}\n", "    - {name: rr, tool: qperf}\n", "    - {name: a, tool: iperf3, target: hairpin}\n"} {
		if err := checkStudy(parse(wl)); err != nil {
			t.Errorf("%s: %v", strings.TrimSpace(wl), err)
		}
	}
}
