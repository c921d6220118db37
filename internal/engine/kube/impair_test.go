package kube

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// Impairments need an agent operation the kube engine does not have yet:
// refused with one line; "none" alone is no impairment and passes.
func TestKubeRefusesImpairments(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Impairments = []study.Impairment{{Name: "none"}}
	if err := checkStudy(s); err != nil {
		t.Errorf("none alone: %v", err)
	}
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-low"})
	err := checkStudy(s)
	if err == nil || !strings.Contains(err.Error(), "spec.impairments") || strings.Contains(err.Error(), "\n") {
		t.Errorf("impaired study on kube: %v", err)
	}
}
