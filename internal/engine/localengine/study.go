package localengine

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// checkStudy refuses what a valid study asks of the local engine that it
// cannot do: a tool with a second port (qperf's test socket) behind knob
// service-path's Services, which model the paper's, one port each. The
// kube engine's Services forward the second port, so this is the local
// engine's check, not the study's.
func checkStudy(s *study.Study) error {
	for i, w := range s.Spec.Workloads {
		t, ok := registry.Describe(w.Tool)
		if !ok || !t.SecondPort || (w.Target != study.TargetService && w.Target != study.TargetHairpin) {
			continue
		}
		return study.At(fmt.Sprintf("spec.workloads[%d].%s", i, study.OptTarget),
			fmt.Errorf("%s cannot be reached through the local engine's Services: they forward one port per server (TCP and UDP), and %s's test socket is a second one; use target: pod here, or run it on a cluster (--engine kube), whose Services forward both", w.Tool, w.Tool))
	}
	return nil
}
