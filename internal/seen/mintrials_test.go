package seen

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
)

// A finding rests on at least minTrials trials of a cell: one trial's
// netfilter share, one bound trial of two, or a steering decision of one
// trial shows nothing.
func TestFindingsNeedTwoTrials(t *testing.T) {
	s := dpStudy(t)
	nf := &results.Run{Samples: []results.Sample{{Cell: results.Cell{Datapath: "calico-routed", Tuning: "baseline", Workload: "cpp", Replicas: 1},
		Trial: 1, Metrics: map[string]float64{cpp.TotalMetric(cpp.UnitNs): 2000, cpp.MetricName("netfilter", cpp.UnitNs): 500}}}}
	if got := netfilter(nf, s); got.text != "" {
		t.Errorf("netfilter on one trial: %s", got.text)
	}
	// One core bound in trial 1, not in trial 2.
	c := results.Cell{Datapath: "calico-vxlan", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	run := &results.Run{}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for trial := 1; trial <= 2; trial++ {
		run.Samples = append(run.Samples, results.Sample{Cell: c, Trial: trial, Metrics: map[string]float64{results.MetricBitrate: 1e9}})
		for sec := range 3 {
			at := t0.Add(time.Duration(10*trial+sec) * time.Second)
			busy, idle := results.CPUPercent{Idle: 1, SoftIRQ: 74}, results.CPUPercent{Idle: 87}
			if trial == 2 {
				busy = results.CPUPercent{Idle: 50, SoftIRQ: 20}
			}
			run.CPU = append(run.CPU, results.CPUPoint{Cell: c, Trial: trial, Time: at, CPU: 0, CPUPercent: busy},
				results.CPUPoint{Cell: c, Trial: trial, Time: at, CPU: 1, CPUPercent: idle})
		}
	}
	if got := oneCore(run, s); got.text != "" {
		t.Errorf("one core bound in 1 of 2 trials: %s", got.text)
	}
	for i := range run.CPU {
		if run.CPU[i].Trial == 2 && run.CPU[i].CPU == 0 {
			run.CPU[i].CPUPercent = results.CPUPercent{Idle: 1, SoftIRQ: 74}
		}
	}
	if got := oneCore(run, s); got.text == "" {
		t.Error("one core bound in 2 of 2 trials shows nothing")
	}
}

func TestTrials(t *testing.T) {
	if trials(1) != "1 trial" || trials(3) != "3 trials" {
		t.Errorf("%q %q", trials(1), trials(3))
	}
}

// A cell whose netfilter share is exactly a tenth is named: the
// threshold is "a tenth or more".
func TestNetfilterShareAtATenth(t *testing.T) {
	s := dpStudy(t)
	run := &results.Run{}
	for trial := 1; trial <= 2; trial++ {
		run.Samples = append(run.Samples, results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "cpp", Replicas: 1},
			Trial: trial, Metrics: map[string]float64{cpp.TotalMetric(cpp.UnitNs): 2000, cpp.MetricName("netfilter", cpp.UnitNs): 200}})
	}
	got := netfilter(run, s)
	if want := "bridge cpp baseline r=1 10% (200 of 2000 ns per packet, means of 2 trials)"; !strings.Contains(got.text, want) {
		t.Errorf("a share of exactly 10%%: %q, want it to name %q", got.text, want)
	}
}
