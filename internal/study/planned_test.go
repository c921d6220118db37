package study

import (
	"testing"
	"time"
)

// A study's plan counts its cells and the machine time of their trials at
// trials.min and trials.max, a sweep's variants and the impairments
// multiplying the cells.
func TestPlan(t *testing.T) {
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: p}
spec:
  datapaths: [calico-vxlan, flannel-vxlan]
  tunings: [baseline, rfs]
  workloads:
    - {name: tcp, tool: iperf3}
    - {name: udp, tool: iperf3, protocol: udp, rates: [100M, 200M, 300M]}
  replicas: [1, 4]
  trials: {min: 3, max: 10}
  duration: 10s
  cooldown: 2s
`
	s, err := Parse("p.yaml", []byte(src), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Plan()
	// 2 datapaths x 2 replica counts x 2 tunings = 8 per variant, 4 variants.
	if p.PerVariant != 8 || p.Cells != 32 || p.MinSeconds != 32*3*12 || p.MaxSeconds != 32*10*12 || p.SearchSeconds != 0 {
		t.Errorf("plan %+v", p)
	}
	if Seconds(p.MaxSeconds) != 3840*time.Second || Seconds(1e12) != MaxPlanned {
		t.Errorf("seconds: %v, %v", Seconds(p.MaxSeconds), Seconds(1e12))
	}
}
